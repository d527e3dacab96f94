package amazon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// serialLines is the line-by-line reading the pipeline replaced: one
// goroutine opens, cuts, parses and handles each line in turn. The tests
// hold the pipeline to it.
func serialLines(path string, reject func(Reject), handle func(line []byte, lineNo int64, st *Stats) (string, error)) (Stats, error) {
	var st Stats
	rc, err := Open(path)
	if err != nil {
		return st, err
	}
	defer rc.Close()
	base := filepath.Base(path)
	lr := newLineReader(rc)
	for {
		line, off, err := lr.next()
		if err != nil {
			st.Bytes = lr.bytes
			return st, readError(base, st.Lines, lr.off, err)
		}
		if line == nil {
			break
		}
		if st.Lines == 0 && bytes.HasPrefix(line, utf8BOM) {
			line, off = line[len(utf8BOM):], off+int64(len(utf8BOM))
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		st.Lines++
		var why string
		switch {
		case lr.tooLong:
			why = fmt.Sprintf("line longer than %d bytes", MaxLineBytes)
		case len(bytes.TrimSpace(line)) == 0:
			why = "empty line"
		default:
			why, err = handle(line, st.Lines, &st)
			if err != nil {
				st.Bytes = lr.bytes
				return st, err
			}
		}
		if why != "" {
			st.Rejected++
			if reject != nil {
				reject(Reject{File: base, Line: st.Lines, Offset: off, Err: why, Excerpt: excerpt(line)})
			}
		}
	}
	st.Bytes = lr.bytes
	return st, nil
}

// serialMeta is ReadMeta read line by line (serialLines).
func serialMeta(path string, fn func(*Product) error, reject func(Reject)) (Stats, error) {
	var (
		sc   scanner
		rec  metaRec
		p    Product
		seen = map[string]firstSeen{}
	)
	return serialLines(path, reject, func(line []byte, lineNo int64, st *Stats) (string, error) {
		if err := sc.parseMeta(line, &rec, &p); err != nil {
			return err.Error(), nil
		}
		sum := sumLine(line)
		if first, ok := seen[p.ASIN]; ok {
			if first.sum == sum {
				st.Duplicates++
				return "", nil
			}
			return fmt.Sprintf("duplicate asin %q first seen at line %d", p.ASIN, first.line), nil
		}
		seen[p.ASIN] = firstSeen{sum, lineNo}
		st.Records++
		return "", fn(&p)
	})
}

// serialReviews is ReviewsWith read line by line, collected.
func serialReviews(o ReviewOptions, path string) (got []Review, rejects []Reject, st Stats, err error) {
	var (
		sc     scanner
		rec    reviewRec
		rec23  review2023Rec
		v      Review
		counts timeCounts
	)
	tc := newTimeCheck(o)
	st, err = serialLines(path, func(j Reject) { rejects = append(rejects, j) }, func(line []byte, _ int64, st *Stats) (string, error) {
		var err error
		if o.Format == Format2023 {
			err = sc.parseReview2023(line, &rec23, &v, tc, &counts)
		} else {
			err = sc.parseReview(line, &rec, &v, tc, &counts)
		}
		if err != nil {
			return err.Error(), nil
		}
		st.Records++
		got = append(got, v)
		return "", nil
	})
	if err == nil {
		err = tc.unitError(filepath.Base(path), counts)
	}
	return got, rejects, st, err
}

// linesTestMeta is a metadata file with every kind of reject: a BOM, CRLF
// lines, empty lines, lines that do not parse, no asin, a repeated asin
// with other content and an exact repeat (a duplicate).
func linesTestMeta(n int) string {
	var b strings.Builder
	b.WriteString("\uFEFF")
	for i := range n {
		switch i % 37 {
		case 3:
			b.WriteString("\n")
		case 5:
			fmt.Fprintf(&b, "{'asin': 'A%05d', 'title': 'unterminated}\n", i)
		case 8:
			b.WriteString("{'title': 'no asin'}\r\n")
		case 13:
			fmt.Fprintf(&b, "{'asin': 'A%05d', 'title': 'Item %d'}\n", i-1, i) // same asin, other content
		case 21:
			fmt.Fprintf(&b, "{'asin': 'A%05d', 'title': 'Item %d', 'categories': [['C', 'S%d']], 'related': {'also_bought': ['A%05d']}}\n", i-1, i-1, (i-1)%4, i) // a duplicate
		default:
			fmt.Fprintf(&b, "{'asin': 'A%05d', 'title': 'Item %d', 'categories': [['C', 'S%d']], 'related': {'also_bought': ['A%05d']}}\r\n", i, i, i%4, i+1)
		}
	}
	return b.String()
}

// linesTestReviews is a reviews file with rejects; with ms, most times are
// in milliseconds (a unit error when read as 2014/2018 with UserTime).
func linesTestReviews(n int, ms bool) string {
	var b strings.Builder
	for i := range n {
		t := int64(1_300_000_000 + i)
		if ms && i%4 != 0 {
			t *= 1000
		}
		switch i % 29 {
		case 4:
			b.WriteString("not json\n")
		case 9:
			fmt.Fprintf(&b, `{"asin": "B%04d", "reviewText": "no reviewer", "unixReviewTime": %d}`+"\n", i%50, t)
		case 17:
			b.WriteString("  \t \n")
		default:
			fmt.Fprintf(&b, `{"asin": "B%04d", "reviewerID": "R%d", "reviewText": "review %d", "summary": "s", "overall": 4, "unixReviewTime": %d}`+"\n", i%50, i%97, i, t)
		}
	}
	return b.String()
}

// cutGzip is the gzip stream of s cut at two thirds: a corrupt tail.
func cutGzip(t *testing.T, s string) []byte {
	z := gz(t, s)
	return z[:len(z)*2/3]
}

// atEveryWidth runs f at GOMAXPROCS 1, 2, 3, 7 and 16 and at batches of
// one line, a few lines and the default size.
func atEveryWidth(t *testing.T, f func(t *testing.T)) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer func(b int) { batchBytes = b }(batchBytes)
	for _, p := range []int{1, 2, 3, 7, 16} {
		for _, bb := range []int{1, 300, 256 << 10} {
			runtime.GOMAXPROCS(p)
			batchBytes = bb
			t.Run(fmt.Sprintf("P%d/batch%d", p, bb), f)
		}
	}
}

// TestReadMetaAsSerial: at any GOMAXPROCS and batch size, ReadMeta hands
// over the records, rejects (with their lines and offsets), stats and read
// error of reading line by line, in the same order.
func TestReadMetaAsSerial(t *testing.T) {
	content := linesTestMeta(3000)
	files := map[string][]byte{
		"plain":   []byte(content),
		"gzip":    gz(t, content),
		"cut":     cutGzip(t, content),
		"partial": gz(t, content[:len(content)-7]), // no newline at the end
	}
	for name, data := range files {
		path := writeFile(t, "meta_"+name+".json.gz", data)
		var want []string
		wantSt, wantErr := serialMeta(path, func(p *Product) error {
			want = append(want, fmt.Sprintf("%+v", *p))
			return nil
		}, func(j Reject) { want = append(want, fmt.Sprintf("reject %+v", j)) })
		if wantSt.Rejected == 0 || wantSt.Duplicates == 0 || (name == "cut") != (wantErr != nil) {
			t.Fatalf("%s: the serial reading saw %+v, %v", name, wantSt, wantErr)
		}
		t.Run(name, func(t *testing.T) {
			atEveryWidth(t, func(t *testing.T) {
				var got []string
				st, err := ReadMeta(context.Background(), path, func(p *Product) error {
					got = append(got, fmt.Sprintf("%+v", *p))
					return nil
				}, func(j Reject) { got = append(got, fmt.Sprintf("reject %+v", j)) })
				if fmt.Sprint(err) != fmt.Sprint(wantErr) || (wantErr != nil && !errors.Is(err, ErrCorrupt)) {
					t.Fatalf("error %v, want %v", err, wantErr)
				}
				if st != wantSt {
					t.Errorf("stats %+v, want %+v", st, wantSt)
				}
				if len(got) != len(want) {
					t.Fatalf("%d records and rejects, want %d", len(got), len(want))
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("item %d: %s\nwant %s", i, got[i], want[i])
					}
				}
			})
		})
	}
}

// TestReviewsAsSerial is TestReadMetaAsSerial for the reviews, with the
// co_review checks on (their counts decide the unit error) and off.
func TestReviewsAsSerial(t *testing.T) {
	for _, tc := range []struct {
		name  string
		o     ReviewOptions
		fails bool
		data  func(t *testing.T) []byte
	}{
		{"cut", ReviewOptions{UserTime: true}, true, func(t *testing.T) []byte { return cutGzip(t, linesTestReviews(4000, false)) }},
		{"whole", ReviewOptions{}, false, func(t *testing.T) []byte { return gz(t, linesTestReviews(4000, false)) }},
		{"unit", ReviewOptions{UserTime: true}, true, func(t *testing.T) []byte { return []byte(linesTestReviews(4000, true)) }},
		{"2014 read as 2023", ReviewOptions{Format: Format2023, UserTime: true}, false, func(t *testing.T) []byte { return []byte(linesTestReviews(4000, true)) }},
	} {
		path := writeFile(t, "reviews_T.json.gz", tc.data(t))
		want, wantRej, wantSt, wantErr := serialReviews(tc.o, path)
		if len(wantRej) == 0 || tc.fails != (wantErr != nil) {
			t.Fatalf("%s: the serial reading saw %+v, %v", tc.name, wantSt, wantErr)
		}
		t.Run(tc.name, func(t *testing.T) {
			atEveryWidth(t, func(t *testing.T) {
				var got []Review
				var rejects []Reject
				var st Stats
				var errs []error
				for v, err := range ReviewsWith(tc.o, path, func(j Reject) { rejects = append(rejects, j) }, &st) {
					if err != nil {
						errs = append(errs, err)
						continue
					}
					if len(errs) > 0 {
						t.Fatal("a review after the error")
					}
					got = append(got, v)
				}
				if wantErr == nil && len(errs) != 0 || wantErr != nil && (len(errs) != 1 || errs[0].Error() != wantErr.Error()) {
					t.Fatalf("errors %v, want %v", errs, wantErr)
				}
				if st != wantSt {
					t.Errorf("stats %+v, want %+v", st, wantSt)
				}
				if fmt.Sprint(rejects) != fmt.Sprint(wantRej) {
					t.Errorf("rejects differ:\n%v\nwant\n%v", rejects, wantRej)
				}
				if len(got) != len(want) {
					t.Fatalf("%d reviews, want %d", len(got), len(want))
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("review %d: %+v\nwant %+v", i, got[i], want[i])
					}
				}
			})
		})
	}
}

// pipeGoroutines counts the goroutines in the pipeline's code. A worker or
// the cutter, once joined, has left it (sync.WaitGroup.Go calls Done
// after the function returns), so no waiting is needed.
func pipeGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	return bytes.Count(buf, []byte("monomer/amazon.(*linePipe["))
}

// TestReadEarlyStop: a callback's error, a cancelled context and a break
// out of the reviews' loop stop reading at once, with the stats of the
// lines taken, and leave no goroutine of the pipeline behind.
func TestReadEarlyStop(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer func(b int) { batchBytes = b }(batchBytes)
	batchBytes = 200 // many batches: the workers are busy when it stops
	meta := writeFile(t, "meta.json.gz", gz(t, metaLines(0, 20000)))
	reviews := writeFile(t, "reviews.json.gz", gz(t, linesTestReviews(20000, false)))
	before := pipeGoroutines()
	if before != 0 {
		t.Fatalf("%d pipeline goroutines before reading", before)
	}

	stop := errors.New("stop here")
	n := 0
	st, err := ReadMeta(context.Background(), meta, func(*Product) error {
		if n++; n == 1000 {
			return stop
		}
		return nil
	}, nil)
	if err != stop || st.Records != 1000 || st.Lines != 1000 {
		t.Errorf("callback error: %v, %+v", err, st)
	}
	if k := pipeGoroutines(); k != 0 {
		t.Errorf("after a callback's error: %d pipeline goroutines left", k)
	}

	ctx, cancel := context.WithCancel(context.Background())
	n = 0
	st, err = ReadMeta(ctx, meta, func(*Product) error {
		if n++; n == 5000 {
			cancel()
		}
		return nil
	}, nil)
	if !errors.Is(err, context.Canceled) || st.Records != 2*ctxLines-1 {
		t.Errorf("cancelled: %v, %+v", err, st)
	}
	if k := pipeGoroutines(); k != 0 {
		t.Errorf("after cancelling: %d pipeline goroutines left", k)
	}

	n = 0
	for _, err := range Reviews(reviews, nil, &st) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 700 {
			break
		}
	}
	if st.Records != 700 {
		t.Errorf("break: %+v", st)
	}
	if k := pipeGoroutines(); k != 0 {
		t.Errorf("after a break: %d pipeline goroutines left", k)
	}
}

// TestReadParserPanic: a parser's panic reaches the reader's goroutine
// (where a caller may recover it) instead of killing the process from a
// worker.
func TestReadParserPanic(t *testing.T) {
	path := writeFile(t, "meta.json", []byte(metaLines(0, 50)))
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "boom") {
			t.Errorf("recovered %v, want the parser's panic", r)
		}
		if k := pipeGoroutines(); k != 0 {
			t.Errorf("%d pipeline goroutines left", k)
		}
	}()
	readLines(path, nil, func() func([]byte, *int) string {
		return func(line []byte, _ *int) string {
			if bytes.Contains(line, []byte("A0030")) {
				panic("boom")
			}
			return ""
		}
	}, func(*int, string, int64, *Stats) (string, error) { return "", nil })
}

// TestLinesInFlight: the batches a reading has cut and not taken back hold
// about inFlightBytes of lines at most, whatever GOMAXPROCS, when the
// caller takes nothing and every batch is cut. Without a cap on the
// workers, 2×GOMAXPROCS+2 batches of minBatchBytes held twice that at 64.
func TestLinesInFlight(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	line := strings.Repeat("x", 99) + "\n"
	data := []byte(strings.Repeat(line, 12<<20/len(line))) // more than any P's batches hold
	for _, procs := range []int{1, 2, 3, 7, 16, 64, 128} {
		runtime.GOMAXPROCS(procs)
		var parsers int
		p := startLines(io.NopCloser(bytes.NewReader(data)), "lines", func() func([]byte, *int) string {
			parsers++ // before the workers start: no race
			return func(l []byte, n *int) string { *n = len(l); return "" }
		})
		for len(p.free) > 0 { // until the cutter has taken every batch
			runtime.Gosched()
		}
		held, batches := 0, 0
		for b := range p.order { // the last one taken is sent once full
			<-b.ready
			held += len(b.buf)
			if batches++; b.last || batches == cap(p.free) {
				break
			}
		}
		p.stop()
		if batches != cap(p.free) {
			t.Fatalf("GOMAXPROCS=%d: %d of %d batches cut: the test's file is too short", procs, batches, cap(p.free))
		}
		t.Logf("GOMAXPROCS=%d: %d batches, %d parsers, %d bytes of lines", procs, batches, parsers, held)
		if budget := inFlightBytes + minBatchBytes; held > budget {
			t.Errorf("GOMAXPROCS=%d: %d batches (%d parsers) held %d bytes of lines, over %d", procs, batches, parsers, held, budget)
		}
	}
}

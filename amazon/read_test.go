package amazon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"monomer/internal/ctxtest"
)

func gz(t testing.TB, data string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// metaLines returns n valid 2014 lines with ASINs A0000, A0001, ...
func metaLines(first, n int) string {
	var b strings.Builder
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, "{'asin': 'A%04d', 'title': 'Item %d', 'related': {'also_bought': ['A%04d']}}\n", i, i, i+1)
	}
	return b.String()
}

// readAll runs ReadMeta collecting ASINs and rejects.
func readAll(path string) (asins []string, rejects []Reject, st Stats, err error) {
	st, err = ReadMeta(context.Background(), path, func(p *Product) error {
		asins = append(asins, p.ASIN)
		return nil
	}, func(r Reject) { rejects = append(rejects, r) })
	return asins, rejects, st, err
}

func TestOpen(t *testing.T) {
	const text = "line one\nline two\n"
	tests := []struct {
		name string
		file string
		data []byte
	}{
		{"plain", "meta.json", []byte(text)},
		{"gzip", "meta.json.gz", gz(t, text)},
		{"gzip whatever the name", "meta.json", gz(t, text)},
		{"plain whatever the name", "meta.json.gz", []byte(text)},
		{"concatenated gzip members", "meta.json.gz", append(gz(t, "line one\n"), gz(t, "line two\n")...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, err := Open(writeFile(t, tt.file, tt.data))
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			got, err := io.ReadAll(rc)
			if err != nil || string(got) != text {
				t.Errorf("read %q, %v; want %q", got, err, text)
			}
		})
	}
}

func TestOpenEmptyFile(t *testing.T) {
	rc, err := Open(writeFile(t, "empty.json", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if got, err := io.ReadAll(rc); err != nil || len(got) != 0 {
		t.Errorf("read %q, %v", got, err)
	}
}

func TestOpenMissing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "meta_Nope.json.gz")
	want := "amazon: open " + path + ": no such file or directory"
	_, err := Open(path)
	if err == nil || err.Error() != want || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open: %v\nwant %s", err, want)
	}
	_, err = ReadMeta(context.Background(), path, func(*Product) error { return nil }, nil)
	if err == nil || err.Error() != want {
		t.Errorf("ReadMeta: %v\nwant %s", err, want)
	}
	n := 0
	for _, err := range Reviews(path, nil, nil) {
		n++
		if err == nil || err.Error() != want {
			t.Errorf("Reviews: %v\nwant %s", err, want)
		}
	}
	if n != 1 {
		t.Errorf("Reviews yielded %d times, want once (the error)", n)
	}
}

func TestOpenBadHeader(t *testing.T) {
	path := writeFile(t, "meta_Bad.json.gz", []byte{0x1f, 0x8b, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9})
	_, err := Open(path)
	want := "amazon: " + path + ": corrupt or truncated gzip stream: gzip: invalid header"
	if err == nil || err.Error() != want || !errors.Is(err, ErrCorrupt) {
		t.Errorf("Open: %v\nwant %s", err, want)
	}
}

func TestReadCorruptGzip(t *testing.T) {
	whole := gz(t, metaLines(0, 2000))
	flipped := bytes.Clone(whole)
	flipped[len(flipped)-8] ^= 0xff // CRC-32 in the trailer
	tests := []struct {
		name string
		data []byte
		// want is the exact error; "" means check the form only, because
		// how far a cut stream decodes depends on the decompressor.
		want  string
		lines int64
	}{
		{
			name:  "truncated in the second member's header",
			data:  append(gz(t, metaLines(0, 100)), gz(t, metaLines(100, 100))[:5]...),
			want:  fmt.Sprintf("amazon: meta_Trunc.json.gz: corrupt or truncated gzip stream after 100 complete lines (uncompressed byte %d): unexpected EOF", len(metaLines(0, 100))),
			lines: 100,
		},
		{
			name:  "bad checksum",
			data:  flipped,
			want:  fmt.Sprintf("amazon: meta_Trunc.json.gz: corrupt or truncated gzip stream after 2000 complete lines (uncompressed byte %d): gzip: invalid checksum", len(metaLines(0, 2000))),
			lines: 2000,
		},
		{
			name:  "cut in the middle",
			data:  whole[:len(whole)/2],
			lines: -1,
		},
		{
			name:  "trailer missing",
			data:  whole[:len(whole)-8],
			want:  fmt.Sprintf("amazon: meta_Trunc.json.gz: corrupt or truncated gzip stream after 2000 complete lines (uncompressed byte %d): unexpected EOF", len(metaLines(0, 2000))),
			lines: 2000,
		},
	}
	form := regexp.MustCompile(`^amazon: meta_Trunc\.json\.gz: corrupt or truncated gzip stream after (\d+) complete lines \(uncompressed byte (\d+)\): unexpected EOF$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asins, rejects, st, err := readAll(writeFile(t, "meta_Trunc.json.gz", tt.data))
			if err == nil {
				t.Fatalf("no error; read %d lines", st.Lines)
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%v does not wrap ErrCorrupt", err)
			}
			if tt.want != "" && err.Error() != tt.want {
				t.Errorf("error %q\nwant  %q", err, tt.want)
			}
			m := form.FindStringSubmatch(err.Error())
			if tt.want == "" && (m == nil || m[1] != fmt.Sprint(st.Lines) || m[2] != fmt.Sprint(len(metaLines(0, int(st.Lines))))) {
				t.Errorf("error %q does not name the %d lines read", err, st.Lines)
			}
			if tt.lines >= 0 && st.Lines != tt.lines {
				t.Errorf("lines %d, want %d", st.Lines, tt.lines)
			}
			if int64(len(asins)) != st.Lines || len(rejects) != 0 || st.Lines == 0 || st.Lines >= 2000 && tt.lines < 0 {
				t.Errorf("%d records, %d rejects, stats %+v", len(asins), len(rejects), st)
			}
		})
	}
}

func TestReadMetaRejectsAndDuplicates(t *testing.T) {
	long := `{'asin': 'L1', 'title': '` + strings.Repeat("é", 150) + `', 'x': }`
	lines := []string{
		`{'asin': 'A1', 'title': 'one'}`,
		`{'asin': 'A2', 'title': 'two'}`,
		`{'asin': 'A1', 'title': 'one'}`, // exact repeat
		`{'asin': 'A1', 'title': 'uno'}`, // same ASIN, other content
		``,
		`{'title': 'no asin'}`,
		long,
		"{'asin': 'A3'}\r",
		`{'asin': 'A4', 'title': 'no newline at the end'}`,
	}
	content := strings.Join(lines, "\n")
	offset := func(i int) int64 {
		return int64(len(strings.Join(lines[:i], "\n")) + 1)
	}
	wantRejects := []Reject{
		{File: "meta_T.json", Line: 4, Offset: offset(3), Err: `duplicate asin "A1" first seen at line 1`, Excerpt: lines[3]},
		{File: "meta_T.json", Line: 5, Offset: offset(4), Err: "empty line", Excerpt: ""},
		{File: "meta_T.json", Line: 6, Offset: offset(5), Err: "missing asin", Excerpt: lines[5]},
		// 25 ASCII bytes then two-byte characters: the 200-byte cut falls
		// inside one, which is left out rather than broken.
		{File: "meta_T.json", Line: 7, Offset: offset(6), Err: "unexpected `}` at byte 333, expected a value", Excerpt: long[:199]},
	}
	wantStats := Stats{Lines: 9, Records: 4, Rejected: 4, Duplicates: 1, Bytes: int64(len(content))}
	for _, compress := range []bool{false, true} {
		t.Run(fmt.Sprint("gzip=", compress), func(t *testing.T) {
			data := []byte(content)
			if compress {
				data = gz(t, content)
			}
			asins, rejects, st, err := readAll(writeFile(t, "meta_T.json", data))
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"A1", "A2", "A3", "A4"}; !reflect.DeepEqual(asins, want) {
				t.Errorf("records %q, want %q", asins, want)
			}
			if !reflect.DeepEqual(rejects, wantRejects) {
				t.Errorf("rejects\n%+v\nwant\n%+v", rejects, wantRejects)
			}
			if st != wantStats {
				t.Errorf("stats %+v, want %+v", st, wantStats)
			}
		})
	}
}

func TestReadMetaLongLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 16 MB line")
	}
	long := "{'asin': 'L1', 'title': '" + strings.Repeat("x", MaxLineBytes) + "'}"
	content := metaLines(0, 1) + long + "\n" + metaLines(1, 1)
	asins, rejects, st, err := readAll(writeFile(t, "meta_Long.json", []byte(content)))
	if err != nil {
		t.Fatal(err)
	}
	want := Reject{File: "meta_Long.json", Line: 2, Offset: int64(len(metaLines(0, 1))),
		Err: "line longer than 16777216 bytes", Excerpt: long[:200]}
	if len(rejects) != 1 || rejects[0] != want {
		t.Errorf("rejects %+v\nwant %+v", rejects, want)
	}
	if !reflect.DeepEqual(asins, []string{"A0000", "A0001"}) || st.Bytes != int64(len(content)) || st.Lines != 3 {
		t.Errorf("records %q, stats %+v", asins, st)
	}
}

func TestReadMetaCallbackError(t *testing.T) {
	stop := errors.New("stop here")
	n := 0
	st, err := ReadMeta(context.Background(), writeFile(t, "meta.json", []byte(metaLines(0, 10))), func(p *Product) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	}, nil)
	if err != stop || st.Records != 3 || st.Lines != 3 {
		t.Errorf("err %v, stats %+v; want the callback's error after 3 records", err, st)
	}
}

// TestReadMetaCancel: ReadMeta looks at ctx every ctxLines records and stops
// there with ctx's error, the records before handed over.
func TestReadMetaCancel(t *testing.T) {
	path := writeFile(t, "meta.json", []byte(metaLines(0, 3*ctxLines)))
	for _, live := range []int{0, 1} {
		n := 0
		st, err := ReadMeta(ctxtest.After(live), path, func(*Product) error { n++; return nil }, nil)
		want := (live+1)*ctxLines - 1
		if !errors.Is(err, context.Canceled) || n != want || st.Records != int64(want) {
			t.Errorf("cancelled at check %d: %d records (stats %d), %v; want %d, context.Canceled", live, n, st.Records, err, want)
		}
	}
}

// TestReadMetaNilReject checks that rejects are counted without a callback.
func TestReadMetaNilReject(t *testing.T) {
	st, err := ReadMeta(context.Background(), writeFile(t, "meta.json", []byte("{\n"+metaLines(0, 2))), func(*Product) error { return nil }, nil)
	if err != nil || st != (Stats{Lines: 3, Records: 2, Rejected: 1, Bytes: int64(2 + len(metaLines(0, 2)))}) {
		t.Errorf("stats %+v, err %v", st, err)
	}
}

func TestExcerpt(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"short", "abc", "abc"},
		{"exactly 200", strings.Repeat("a", 200), strings.Repeat("a", 200)},
		{"cut", strings.Repeat("a", 250), strings.Repeat("a", 200)},
		{"cut before a three-byte character", strings.Repeat("a", 199) + "€", strings.Repeat("a", 199)},
		{"invalid bytes replaced", "a\xffb", "a\uFFFDb"},
		{"not UTF-8 at the cut: one U+FFFD per invalid run", strings.Repeat("\xa0", 250), "\uFFFD"},
	}
	for _, tt := range tests {
		if got := excerpt([]byte(tt.line)); got != tt.want {
			t.Errorf("%s: excerpt = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestLineReaderSmallReads feeds the line reader one byte at a time, so
// that every line straddles reads and the buffer is compacted and grown.
func TestLineReaderSmallReads(t *testing.T) {
	content := metaLines(0, 50) + strings.Repeat("z", 600<<10) + "\nlast"
	lr := newLineReader(io.LimitReader(oneByteReader{strings.NewReader(content)}, int64(len(content))))
	var got []string
	var offs []int64
	for {
		line, off, err := lr.next()
		if err != nil {
			t.Fatal(err)
		}
		if line == nil {
			break
		}
		got = append(got, string(line))
		offs = append(offs, off)
	}
	want := strings.Split(content, "\n")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %d lines, want %d", len(got), len(want))
	}
	var off int64
	for i, w := range want {
		if offs[i] != off {
			t.Errorf("line %d at %d, want %d", i+1, offs[i], off)
		}
		off += int64(len(w)) + 1
	}
}

type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

// TestReadMetaBOMAndCRLF: a byte-order mark and CRLF line ends are not
// content: offsets still point into the stream.
func TestReadMetaBOMAndCRLF(t *testing.T) {
	content := "\uFEFF{'asin': 'A1'}\r\n{'asin': 'A2', 'x': ?}\r\n{'asin': 'A1'}\n"
	asins, rejects, st, err := readAll(writeFile(t, "meta_BOM.json", []byte(content)))
	if err != nil {
		t.Fatal(err)
	}
	want := []Reject{{File: "meta_BOM.json", Line: 2, Offset: 19, Err: "unexpected `?` at byte 20, expected a value", Excerpt: "{'asin': 'A2', 'x': ?}"}}
	if !reflect.DeepEqual(asins, []string{"A1"}) || !reflect.DeepEqual(rejects, want) || st.Duplicates != 1 {
		t.Errorf("records %q, rejects %+v, stats %+v", asins, rejects, st)
	}
}

// A bad first line after a byte-order mark: its offset is past the mark.
func TestReadMetaBOMFirstLineRejected(t *testing.T) {
	_, rejects, _, err := readAll(writeFile(t, "meta_BOM1.json", []byte("\uFEFF{'asin': ?}\n{'asin': 'A1'}\n")))
	if err != nil {
		t.Fatal(err)
	}
	want := []Reject{{File: "meta_BOM1.json", Line: 1, Offset: 3, Err: "field asin: expected a string, found `?` at byte 9", Excerpt: "{'asin': ?}"}}
	if !reflect.DeepEqual(rejects, want) {
		t.Errorf("rejects %+v, want %+v", rejects, want)
	}
}

func TestOpenDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(dir)
	if want := "amazon: read " + dir + ": is a directory"; err == nil || err.Error() != want {
		t.Errorf("Open(dir): %v, want %s", err, want)
	}
}

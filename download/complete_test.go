package download

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// rawAnswer is one answer of a rawServer, written byte for byte on the
// hijacked connection, which is then closed: a body shorter than a
// Content-Length is a dropped connection, a body with no Content-Length
// ends where the connection does.
type rawAnswer struct {
	status string   // "200 OK"
	header []string // "Content-Length: 10", ...
	body   []byte
}

// rawServer answers request i (from 0) with answer(i, r), recording each
// request's path, Range and Authorization.
type rawServer struct {
	answer func(i int, r *http.Request) rawAnswer
	mu     sync.Mutex
	reqs   []string
	auths  []string
}

func newRaw(t *testing.T, answer func(i int, r *http.Request) rawAnswer) (*rawServer, *httptest.Server) {
	t.Helper()
	s := &rawServer{answer: answer}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		i := len(s.reqs)
		s.reqs = append(s.reqs, r.URL.Path+" "+r.Header.Get("Range"))
		s.auths = append(s.auths, r.Header.Get("Authorization"))
		s.mu.Unlock()
		a := s.answer(i, r)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 %s\r\n", a.status)
		for _, h := range a.header {
			fmt.Fprintf(buf, "%s\r\n", h)
		}
		fmt.Fprintf(buf, "Connection: close\r\n\r\n")
		buf.Write(a.body)
		buf.Flush()
	}))
	t.Cleanup(ts.Close)
	return s, ts
}

func (s *rawServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

// rangeFrom parses "bytes=N-"; -1 if there is no Range.
func rangeFrom(t *testing.T, r *http.Request) int64 {
	h := r.Header.Get("Range")
	if h == "" {
		return -1
	}
	v, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(h, "bytes="), "-"), 10, 64)
	if err != nil {
		t.Errorf("bad Range %q", h)
	}
	return v
}

// honest serves body as a server that honours Range would, announcing
// lengths or not, with Last-Modified lm if set.
func honest(t *testing.T, body []byte, lengths bool, lm string) func(int, *http.Request) rawAnswer {
	return func(_ int, r *http.Request) rawAnswer {
		var h []string
		if lm != "" {
			h = append(h, "Last-Modified: "+lm)
		}
		from := rangeFrom(t, r)
		switch {
		case from < 0:
			if lengths {
				h = append(h, "Content-Length: "+strconv.Itoa(len(body)))
			}
			return rawAnswer{status: "200 OK", header: h, body: body}
		case from >= int64(len(body)):
			return rawAnswer{status: "416 Range Not Satisfiable", header: append(h, fmt.Sprintf("Content-Range: bytes */%d", len(body)), "Content-Length: 0")}
		}
		rest := body[from:]
		h = append(h, fmt.Sprintf("Content-Range: bytes %d-%d/%d", from, len(body)-1, len(body)))
		if lengths {
			h = append(h, "Content-Length: "+strconv.Itoa(len(rest)))
		}
		return rawAnswer{status: "206 Partial Content", header: h, body: rest}
	}
}

// bFile is a .b file of n records whose bytes differ by seed.
func bFile(n int, seed byte) []byte {
	b := make([]byte, n*recordBytes)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

const lm1 = "Mon, 02 Jan 2006 15:04:05 GMT"

// absent asserts that nothing is at dir/name and no .bad beside it.
func absent(t *testing.T, dir, name string) {
	t.Helper()
	for _, n := range []string{name, name + ".bad"} {
		if _, err := os.Stat(filepath.Join(dir, n)); !os.IsNotExist(err) {
			t.Errorf("%s: %v, want none", n, err)
		}
	}
}

// A body that ends without an announced length is complete only once a
// Range request from its end is answered 416 (or a known length says so):
// a whole number of .b records or a gzip stream that ends proves nothing.
func TestFetchEndWithoutLength(t *testing.T) {
	b3 := bFile(3, 1)
	gz := gzFile(t, 30, 4000)
	tests := []struct {
		name   string
		file   string
		body   []byte
		answer func(t *testing.T, i int, r *http.Request) rawAnswer
		// want: the fetched file is body (else ErrUnavailable, a .part of
		// wantPart bytes kept and nothing at the name).
		want     bool
		wantPart int
		wantReqs []string // Range per request
	}{
		{
			// The whole file, no length: the 416 confirms it.
			name: "whole, 416 confirms", file: "x.b", body: b3, want: true,
			answer:   func(t *testing.T, i int, r *http.Request) rawAnswer { return honest(t, b3, false, lm1)(i, r) },
			wantReqs: []string{"", fmt.Sprintf("bytes=%d-", len(b3))},
		},
		{
			// A 416 with no Content-Range to a request with If-Range:
			// the validator matched, and there is no byte after the end.
			name: "whole, bare 416", file: "x.b", body: b3, want: true,
			answer: func(t *testing.T, i int, r *http.Request) rawAnswer {
				if i == 1 && r.Header.Get("If-Range") == lm1 {
					return rawAnswer{status: "416 Range Not Satisfiable", header: []string{"Content-Length: 0"}}
				}
				return honest(t, b3, false, lm1)(i, r)
			},
			wantReqs: []string{"", fmt.Sprintf("bytes=%d-", len(b3))},
		},
		{
			// H4: cut after 2 of 3 records, no length: the probe finds
			// the third.
			name: "cut after whole records", file: "x.b", body: b3, want: true,
			answer: func(t *testing.T, i int, r *http.Request) rawAnswer {
				a := honest(t, b3, false, lm1)(i, r)
				if i == 0 {
					a.body = a.body[:2*recordBytes]
				}
				return a
			},
			wantReqs: []string{"", fmt.Sprintf("bytes=%d-", 2*recordBytes)},
		},
		{
			// H5: a .gz cut half-way, no length: not a broken gzip
			// stream (exit 3) but bytes still to come.
			name: "gz cut, no length", file: "x.json.gz", body: gz, want: true,
			answer: func(t *testing.T, i int, r *http.Request) rawAnswer {
				a := honest(t, gz, false, lm1)(i, r)
				if i == 0 {
					a.body = a.body[:len(gz)/2]
				}
				return a
			},
			wantReqs: []string{"", fmt.Sprintf("bytes=%d-", len(gz)/2)},
		},
		{
			// H5: a .b cut mid-record, with a length: a dropped
			// connection is retried from where it stopped.
			name: "b cut mid-record, with length", file: "x.b", body: b3, want: true,
			answer: func(t *testing.T, i int, r *http.Request) rawAnswer {
				a := honest(t, b3, true, lm1)(i, r)
				if i == 0 {
					a.body = a.body[:recordBytes+100]
				}
				return a
			},
			wantReqs: []string{"", fmt.Sprintf("bytes=%d-", recordBytes+100)},
		},
		{
			// A server that ignores Range and never announces a length:
			// the end is never confirmed.
			name: "never confirmed", file: "x.b", body: b3, wantPart: len(b3),
			answer: func(t *testing.T, i int, r *http.Request) rawAnswer {
				return rawAnswer{status: "200 OK", header: []string{"Last-Modified: " + lm1}, body: b3}
			},
			wantReqs: []string{"", "bytes=49182-", "bytes=49182-", "bytes=49182-"},
		},
		{
			// H4: the first answer announces the length and is cut; the
			// resume's total is "*" and it is cut at a whole record: the
			// length first announced holds, and the file is not done.
			name: "resume total *", file: "x.b", body: b3, wantPart: 2 * recordBytes,
			answer: func(t *testing.T, i int, r *http.Request) rawAnswer {
				h := []string{"Last-Modified: " + lm1}
				if from := rangeFrom(t, r); from > 0 {
					return rawAnswer{status: "206 Partial Content",
						header: append(h, fmt.Sprintf("Content-Range: bytes %d-%d/*", from, len(b3)-1)),
						body:   b3[from : 2*recordBytes]}
				}
				return rawAnswer{status: "200 OK", header: append(h, "Content-Length: "+strconv.Itoa(len(b3))), body: b3[:len(b3)/2]}
			},
			wantReqs: []string{"", "bytes=24591-", "bytes=32788-", "bytes=32788-"},
		},
		{
			// The same, the third answer bringing the rest: the length
			// first announced completes it.
			name: "resume total *, completed", file: "x.b", body: b3, want: true,
			answer: func(t *testing.T, i int, r *http.Request) rawAnswer {
				h := []string{"Last-Modified: " + lm1}
				if from := rangeFrom(t, r); from > 0 {
					end := len(b3)
					if i == 1 {
						end = 2 * recordBytes
					}
					return rawAnswer{status: "206 Partial Content",
						header: append(h, fmt.Sprintf("Content-Range: bytes %d-%d/*", from, len(b3)-1)),
						body:   b3[from:end]}
				}
				return rawAnswer{status: "200 OK", header: append(h, "Content-Length: "+strconv.Itoa(len(b3))), body: b3[:len(b3)/2]}
			},
			wantReqs: []string{"", "bytes=24591-", "bytes=32788-"},
		},
		{
			// No validators: the probe's 206 says the body was cut, and
			// its rest could be another file's: start again.
			name: "cut, no validators", file: "x.b", body: b3, want: true,
			answer: func(t *testing.T, i int, r *http.Request) rawAnswer {
				if i == 2 {
					return rawAnswer{status: "200 OK", header: []string{"Content-Length: " + strconv.Itoa(len(b3))}, body: b3}
				}
				a := honest(t, b3, false, "")(i, r)
				if i == 0 {
					a.body = a.body[:recordBytes]
				}
				return a
			},
			wantReqs: []string{"", fmt.Sprintf("bytes=%d-", recordBytes), ""},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, ts := newRaw(t, func(i int, r *http.Request) rawAnswer { return tc.answer(t, i, r) })
			dir := t.TempDir()
			o := opts(&sleeps{})
			o.Retries = 2
			_, err := Fetch(context.Background(), dir, file(ts, tc.file), o)
			var got []string
			for _, r := range s.requests() {
				got = append(got, strings.TrimPrefix(r, "/"+tc.file+" "))
			}
			if strings.Join(got, "|") != strings.Join(tc.wantReqs, "|") {
				t.Errorf("requests %q, want %q", got, tc.wantReqs)
			}
			if tc.want {
				if err != nil {
					t.Fatal(err)
				}
				checkFetched(t, dir, tc.file, tc.body)
				return
			}
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "is kept") {
				t.Fatalf("err %v, want ErrUnavailable keeping the .part", err)
			}
			absent(t, dir, tc.file)
			if n := fileSize(filepath.Join(dir, tc.file+".part")); n != int64(tc.wantPart) {
				t.Errorf(".part has %d bytes, want %d", n, tc.wantPart)
			}
			if s := readSums(t, dir); s != "" {
				t.Errorf("SHA256SUMS %q for an unfinished file", s)
			}
		})
	}
}

// An unconfirmed end left by one run is confirmed by the next one's
// resuming request.
func TestFetchEndConfirmedNextRun(t *testing.T) {
	b3 := bFile(3, 2)
	refuse := true
	var mu sync.Mutex
	_, ts := newRaw(t, func(i int, r *http.Request) rawAnswer {
		mu.Lock()
		defer mu.Unlock()
		if refuse && i > 0 {
			return rawAnswer{status: "503 Service Unavailable", header: []string{"Content-Length: 0"}}
		}
		return honest(t, b3, false, lm1)(i, r)
	})
	dir := t.TempDir()
	o := opts(&sleeps{})
	o.Retries = -1
	if _, err := Fetch(context.Background(), dir, file(ts, "x.b"), o); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("first run: %v, want ErrUnavailable", err)
	}
	absent(t, dir, "x.b")
	mu.Lock()
	refuse = false
	mu.Unlock()
	res, err := Fetch(context.Background(), dir, file(ts, "x.b"), o)
	if err != nil {
		t.Fatal(err)
	}
	checkFetched(t, dir, "x.b", b3)
	if !res.Resumed {
		t.Error("not resumed")
	}
}

// Empty answers are bad data (exit 3), not a retry or an internal error.
func TestFetchEmpty(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    rawAnswer
	}{
		{"200 with length 0", rawAnswer{status: "200 OK", header: []string{"Content-Length: 0"}}},
		{"200 without length, 416 confirms", rawAnswer{status: "200 OK"}},
		{"204", rawAnswer{status: "204 No Content"}},
	} {
		for _, name := range []string{"x.json.gz", "x.b"} {
			t.Run(tc.name+" "+name, func(t *testing.T) {
				_, ts := newRaw(t, func(i int, r *http.Request) rawAnswer {
					if r.Header.Get("Range") == "bytes=0-" {
						return rawAnswer{status: "416 Range Not Satisfiable", header: []string{"Content-Range: bytes */0", "Content-Length: 0"}}
					}
					return tc.a
				})
				dir := t.TempDir()
				_, err := Fetch(context.Background(), dir, file(ts, name), opts(&sleeps{}))
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "empty") {
					t.Fatalf("err %v, want ErrCorrupt saying empty", err)
				}
				absent(t, dir, name)
				if _, err := os.Stat(filepath.Join(dir, name+".part")); !os.IsNotExist(err) {
					t.Errorf(".part: %v", err)
				}
			})
		}
	}
}

// H7: a server that sends no ETag and no Last-Modified, and whose file
// changes (same size) between two attempts: the .part is not continued
// with the new file's bytes, within a run or across runs; with a known
// SHA-256 it is, as the sum checks the whole.
func TestFetchResumeWithoutValidators(t *testing.T) {
	old, cur := bFile(3, 3), bFile(3, 4)
	cut := len(old) / 2
	for _, tc := range []struct {
		name      string
		nextRun   bool // the cut ends the first run (else the run retries)
		sha       string
		body      []byte // what is served after the cut
		wantRange bool   // the second request continues the .part
	}{
		{name: "same run", body: cur},
		{name: "next run", nextRun: true, body: cur},
		{name: "known sum", sha: sum(old), body: old, wantRange: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			body := old
			s, ts := newRaw(t, func(i int, r *http.Request) rawAnswer {
				mu.Lock()
				b := body
				body = tc.body // the file changes once the first answer is out
				mu.Unlock()
				from := max(rangeFrom(t, r), 0)
				a := rawAnswer{status: "200 OK", header: []string{"Content-Length: " + strconv.Itoa(len(b))}, body: b}
				if from > 0 {
					a = rawAnswer{status: "206 Partial Content", header: []string{
						fmt.Sprintf("Content-Range: bytes %d-%d/%d", from, len(b)-1, len(b)),
						"Content-Length: " + strconv.Itoa(len(b)-int(from))}, body: b[from:]}
				}
				if i == 0 {
					a.body = a.body[:cut]
				}
				return a
			})
			dir := t.TempDir()
			f := file(ts, "x.b")
			f.SHA256 = tc.sha
			var ev events
			o := opts(&sleeps{})
			o.Event = ev.add
			if tc.nextRun {
				o.Retries = -1
				if _, err := Fetch(context.Background(), dir, f, o); !errors.Is(err, ErrUnavailable) {
					t.Fatalf("first run: %v", err)
				}
				o.Retries = 0
			}
			if _, err := Fetch(context.Background(), dir, f, o); err != nil {
				t.Fatal(err)
			}
			checkFetched(t, dir, "x.b", tc.body)
			reqs := s.requests()
			if len(reqs) != 2 || strings.Contains(reqs[1], "bytes=") != tc.wantRange {
				t.Errorf("requests %q, want 2, the second continuing: %v", reqs, tc.wantRange)
			}
			r := ev.kind("restart")
			if tc.wantRange != (len(r) == 0) || (len(r) == 1 && (r[0].Offset != int64(cut) || !errors.Is(r[0].Err, errUnvalidated))) {
				t.Errorf("restart events %+v", r)
			}
		})
	}
}

// M8: a file already present with no sum known is checked by its format.
func TestFetchPresentFormat(t *testing.T) {
	_, ts := newRaw(t, func(int, *http.Request) rawAnswer {
		t.Error("a request for a present file")
		return rawAnswer{status: "500 No"}
	})
	gz := gzFile(t, 31, 2000)
	b2 := bFile(2, 5)
	var gzb bytes.Buffer
	zw := gzip.NewWriter(&gzb)
	zw.Write(b2)
	zw.Close()
	for _, tc := range []struct {
		name, file string
		put        func(p string) error
		want       error // nil: present and fine
	}{
		{"whole gz", "x.json.gz", writeBytes(gz), nil},
		{"truncated gz", "x.json.gz", writeBytes(gz[:len(gz)-20]), ErrCorrupt},
		{"empty", "x.json.gz", writeBytes(nil), ErrCorrupt},
		{"whole b", "x.b", writeBytes(b2), nil},
		{"20000-byte b", "x.b", writeBytes(b2[:20000]), ErrCorrupt},
		{"gzipped b", "x.b", writeBytes(gzb.Bytes()), nil},
		{"gzipped b, short record", "x.b", writeBytes(gzipped(t, b2[:recordBytes+5])), ErrCorrupt},
		{"directory", "x.b", func(p string) error { return os.Mkdir(p, 0o755) }, ErrUsage},
		{"named pipe", "x.b", func(p string) error { return syscall.Mkfifo(p, 0o644) }, ErrUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, tc.file)
			if err := tc.put(p); err != nil {
				t.Fatal(err)
			}
			res, err := Fetch(context.Background(), dir, file(ts, tc.file), opts(&sleeps{}))
			if tc.want == nil {
				if err != nil || !res.Present {
					t.Fatalf("%+v %v, want present", res, err)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("err %v, want %v naming %s", err, tc.want, p)
			}
			if _, err := os.Lstat(p); err != nil {
				t.Errorf("the present file is gone: %v", err)
			}
		})
	}
}

func writeBytes(b []byte) func(string) error {
	return func(p string) error { return os.WriteFile(p, b, 0o644) }
}

func gzipped(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return buf.Bytes()
}

// L13, L11: a gzipped .b is fetched as run reads it; a .gz gzipped again
// by the server is refused.
func TestFetchGzipLayers(t *testing.T) {
	b2 := bFile(2, 6)
	gz := gzFile(t, 32, 500)
	for _, tc := range []struct {
		name, file string
		body       []byte
		want       error
	}{
		{"gzipped b", "x.b", gzipped(t, b2), nil},
		{"gzipped b, short record", "x.b", gzipped(t, b2[:len(b2)-1]), ErrCorrupt},
		// A server that labels a .gz Content-Encoding: gzip: the bytes
		// are the file, stored as they are.
		{"gz labelled gzip", "x.json.gz", gz, nil},
		// One that compresses it again under that label.
		{"gz inside gz", "x.json.gz", gzipped(t, gz), ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ts := newRaw(t, func(i int, r *http.Request) rawAnswer {
				a := honest(t, tc.body, true, lm1)(i, r)
				if strings.HasSuffix(tc.file, ".gz") {
					a.header = append(a.header, "Content-Encoding: gzip")
				}
				return a
			})
			dir := t.TempDir()
			_, err := Fetch(context.Background(), dir, file(ts, tc.file), opts(&sleeps{}))
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				checkFetched(t, dir, tc.file, tc.body)
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
}

// M4, L9: final answers that are not a 404 are final in their own words;
// a file:// mirror whose folder is missing (a disk not mounted) is
// retryable, a file missing from a folder that is there is not.
func TestFetchRefusalClasses(t *testing.T) {
	loop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Path, http.StatusFound)
	}))
	defer loop.Close()
	_, auth := newRaw(t, func(int, *http.Request) rawAnswer {
		return rawAnswer{status: "401 Unauthorized", header: []string{"WWW-Authenticate: Basic", "Content-Length: 0"}}
	})
	_, moved := newRaw(t, func(int, *http.Request) rawAnswer {
		return rawAnswer{status: "301 Moved Permanently", header: []string{"Content-Length: 0"}}
	})
	mirror := t.TempDir()
	os.Mkdir(filepath.Join(mirror, "categoryFiles"), 0o755)
	for _, tc := range []struct {
		name, url, says string
		want            error
	}{
		{"redirect loop", loop.URL + "/x.b", "redirects", ErrNotFound},
		{"401", auth.URL + "/x.b", "credentials", ErrNotFound},
		{"301 without Location", moved.URL + "/x.b", "no Location", ErrNotFound},
		{"file mirror not mounted", "file://" + filepath.Join(mirror, "absent") + "/categoryFiles/x.b", "not mounted", ErrUnavailable},
		{"file missing from the mirror", "file://" + mirror + "/categoryFiles/x.b", "404", ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var sl sleeps
			_, err := Fetch(context.Background(), dir, File{Name: "x.b", URL: tc.url, Size: -1}, opts(&sl))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err %v, want %v saying %q", err, tc.want, tc.says)
			}
			if len(sl.got) != 0 || strings.Contains(err.Error(), "is kept") {
				t.Errorf("retried (%v) or claims a .part: %v", sl.got, err)
			}
			absent(t, dir, "x.b")
		})
	}
}

// M14: the user name and password of a mirror's URL are sent, and never
// written to .part.meta, SOURCES.tsv or an error or event; a resume sends
// them again.
func TestFetchMirrorCredentials(t *testing.T) {
	gz := gzFile(t, 33, 3000)
	s, ts := newRaw(t, func(i int, r *http.Request) rawAnswer {
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "s3cret" {
			return rawAnswer{status: "401 Unauthorized", header: []string{"Content-Length: 0"}}
		}
		a := honest(t, gz, true, lm1)(i, r)
		if i == 0 {
			a.body = a.body[:len(gz)/2]
		}
		return a
	})
	rel, err := release2014.Files(Request{Categories: []string{"Baby"}, Kinds: []string{Meta},
		Mirror: strings.Replace(ts.URL, "http://", "http://alice:s3cret@", 1)})
	if err != nil {
		t.Fatal(err)
	}
	f := rel[0]
	dir := t.TempDir()
	var ev events
	o := opts(&sleeps{})
	o.Event, o.Retries = ev.add, -1
	_, err1 := Fetch(context.Background(), dir, f, o)
	meta, _ := os.ReadFile(filepath.Join(dir, f.Name+".part.meta"))
	o.Retries = 0
	if _, err := Fetch(context.Background(), dir, f, o); err != nil {
		t.Fatal(err)
	}
	// Nothing listens there any more: the connection error names the URL.
	dead := f
	dead.URL = "http://alice:s3cret@127.0.0.1:1/x"
	o.Retries = -1
	_, err3 := Fetch(context.Background(), t.TempDir(), dead, o)
	sources, _ := os.ReadFile(filepath.Join(dir, SourcesFile))
	seen := []string{fmt.Sprint(err1), string(meta), string(sources), fmt.Sprint(err3)}
	for _, e := range ev.got {
		seen = append(seen, fmt.Sprint(e.Err))
	}
	for _, text := range seen {
		if strings.Contains(text, "s3cret") || strings.Contains(text, "alice") {
			t.Errorf("credentials in %q", text)
		}
	}
	if !strings.Contains(string(meta), ts.URL) || !strings.Contains(string(sources), ts.URL) {
		t.Errorf(".part.meta %q and SOURCES.tsv %q should name %s", meta, sources, ts.URL)
	}
	if reqs := s.requests(); len(reqs) != 2 || !strings.HasSuffix(reqs[1], fmt.Sprintf("bytes=%d-", len(gz)/2)) {
		t.Errorf("requests %q: want the second to continue the .part", reqs)
	}
	for i, a := range s.auths {
		if a == "" {
			t.Errorf("request %d sent no credentials", i)
		}
	}
	checkFetched(t, dir, f.Name, gz)
}

// M1, L16: a --checksums file must be meant for the files.
func TestSumsCovers(t *testing.T) {
	files := []File{{Name: "meta_Baby.json.gz"}, {Name: "reviews_Baby.json.gz"}}
	z := strings.Repeat("0", 64)
	for _, tc := range []struct {
		name, text, says string // says "" for no error
	}{
		{"one of them", z + "  meta_Baby.json.gz\n" + z + "  other.gz\n", ""},
		{"empty (/dev/null)", "", ""},
		{"none of them", z + "  meta_Men.json.gz\n", "none of the files"},
		{"another case", z + "  META_BABY.JSON.GZ\n", `"META_BABY.JSON.GZ" is not meta_Baby.json.gz`},
		{"trailing spaces", z + "  meta_Baby.json.gz  \n", `"meta_Baby.json.gz  " is not meta_Baby.json.gz`},
		{"another case beside a match", z + "  meta_Baby.json.gz\n" + z + "  Reviews_Baby.json.gz\n", "Reviews_Baby"},
		{"two sums for one name", z + "  meta_Baby.json.gz\n" + strings.Repeat("1", 64) + "  meta_Baby.json.gz\n", "line 2"},
		{"the same sum twice", z + "  meta_Baby.json.gz\n" + z + "  meta_Baby.json.gz\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ReadSums(bufio.NewReader(strings.NewReader(tc.text)), "sums")
			if err == nil {
				err = s.Covers(files, "sums")
			}
			if tc.says == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "sums") {
				t.Fatalf("err %v, want ErrUsage naming the file and saying %q", err, tc.says)
			}
		})
	}
	// SHA256SUMS in DIR: a file fetched again has a second line, the last
	// of which holds.
	s, err := ParseSums(strings.NewReader(z+"  a\n"+strings.Repeat("1", 64)+"  a\n"), "SHA256SUMS")
	if err != nil || s["a"] != strings.Repeat("1", 64) {
		t.Errorf("ParseSums: %v %v", s, err)
	}
}

// M9, L1: sums given replace the shipped sizes too; a mirror's query or
// fragment is refused.
func TestFilesSizesAndMirror(t *testing.T) {
	req := Request{Categories: []string{"Gift_Cards"}, Kinds: []string{Meta}}
	fs, err := release2018.Files(req)
	if err != nil || fs[0].Size != 380174 {
		t.Fatalf("shipped: %+v %v", fs, err)
	}
	req.Sums = Sums{}
	if fs, err = release2018.Files(req); err != nil || fs[0].Size != -1 || fs[0].SHA256 != "" {
		t.Errorf("--checksums /dev/null: %+v %v, want no size and no sum", fs, err)
	}
	for _, m := range []string{"http://h/base?token=abc", "http://h/base#x", "http://h/base?"} {
		if _, err := release2014.Files(Request{Categories: []string{"Baby"}, Mirror: m}); !errors.Is(err, ErrUsage) {
			t.Errorf("mirror %q: %v, want ErrUsage", m, err)
		}
	}
	_, err = release2014.Files(Request{Categories: []string{"Baby"}, Mirror: "ftp://alice:s3cret@h/"})
	if !errors.Is(err, ErrUsage) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("bad mirror: %v, want ErrUsage without the password", err)
	}
}

// L2: a failure before any byte arrived claims no .part.
func TestFetchNoPartClaimed(t *testing.T) {
	_, ts := newRaw(t, func(int, *http.Request) rawAnswer {
		return rawAnswer{status: "503 Service Unavailable", header: []string{"Content-Length: 0"}}
	})
	dir := t.TempDir()
	o := opts(&sleeps{})
	o.Retries = 2
	_, err := Fetch(context.Background(), dir, file(ts, "x.b"), o)
	if !errors.Is(err, ErrUnavailable) || strings.Contains(err.Error(), ".part") {
		t.Errorf("err %v: want ErrUnavailable naming no .part", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.b.part")); !os.IsNotExist(err) {
		t.Errorf(".part: %v", err)
	}
}

package download

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// gzFile returns a gzip file of about n compressed bytes of random text,
// seeded, so that a cut anywhere leaves an incomplete stream.
func gzFile(t *testing.T, seed uint64, lines int) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for i := range lines {
		fmt.Fprintf(zw, `{"asin": "B%09d", "x": %d}`+"\n", i, rng.Uint64())
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fault is what the test server does to one request (by its index from 0).
type fault struct {
	status int   // answer this status with an empty body
	cut    int64 // close the connection after this many body bytes (> 0)
}

// server serves files from memory, honouring Range or not, with faults.
type server struct {
	t       *testing.T
	files   map[string][]byte
	ranges  bool          // honour Range requests
	faults  map[int]fault // by request index
	lenDiff int64         // added to every Content-Length (a lie)
	// Validators sent with every file, if set, and whether a Range whose
	// If-Range names neither is ignored (RFC 9110 13.1.5).
	etag, lastModified string
	ifRange            bool
	mu                 sync.Mutex
	reqs               []string // "PATH RANGE" per request
	ifRanges           []string // the If-Range header per request
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := len(s.reqs)
	s.reqs = append(s.reqs, r.URL.Path+" "+r.Header.Get("Range"))
	s.ifRanges = append(s.ifRanges, r.Header.Get("If-Range"))
	f := s.faults[i]
	s.mu.Unlock()
	if s.etag != "" {
		w.Header().Set("ETag", s.etag)
	}
	if s.lastModified != "" {
		w.Header().Set("Last-Modified", s.lastModified)
	}
	body, ok := s.files[r.URL.Path]
	switch {
	case f.status != 0:
		w.WriteHeader(f.status)
		return
	case !ok:
		http.NotFound(w, r)
		return
	}
	start := int64(0)
	status := http.StatusOK
	rg := r.Header.Get("Range")
	if ir := r.Header.Get("If-Range"); s.ifRange && ir != "" && ir != s.etag && ir != s.lastModified {
		rg = ""
	}
	if rg != "" && s.ranges {
		v, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"), 10, 64)
		if err != nil {
			s.t.Errorf("bad Range %q", rg)
		}
		if v >= int64(len(body)) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", len(body)))
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		start, status = v, http.StatusPartialContent
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", v, len(body)-1, len(body)))
	}
	rest := body[start:]
	w.Header().Set("Content-Length", strconv.FormatInt(int64(len(rest))+s.lenDiff, 10))
	w.WriteHeader(status)
	if f.cut > 0 && f.cut < int64(len(rest)) {
		w.Write(rest[:f.cut])
		w.(http.Flusher).Flush()
		// Drop the connection half-way, as a failing network does.
		panic(http.ErrAbortHandler)
	}
	if s.lenDiff < 0 {
		// Go's server sends no more than it declared.
		rest = rest[:int64(len(rest))+s.lenDiff]
	}
	w.Write(rest)
}

func newServer(t *testing.T, s *server) *httptest.Server {
	s.t = t
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// sleeps records the backoff waits instead of waiting.
type sleeps struct{ got []time.Duration }

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.got = append(s.got, d)
	return nil
}

func opts(s *sleeps) Options {
	return Options{Sleep: s.sleep, Backoff: func(n int) time.Duration { return time.Duration(n) * time.Second }}
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func file(ts *httptest.Server, name string) File {
	return File{Name: name, Path: name, URL: ts.URL + "/" + name, Size: -1}
}

func readSums(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, SumsFile))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// checkFetched asserts dir/name holds want, nothing is left beside it, and
// SHA256SUMS has its line.
func checkFetched(t *testing.T, dir, name string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes, want the served %d (sha256 %s, want %s)", name, len(got), len(want), sum(got), sum(want))
	}
	for _, ext := range []string{".part", ".bad"} {
		if _, err := os.Stat(filepath.Join(dir, name+ext)); !os.IsNotExist(err) {
			t.Errorf("%s%s left behind (%v)", name, ext, err)
		}
	}
	if s, line := readSums(t, dir), sum(want)+"  "+name+"\n"; s != line {
		t.Errorf("SHA256SUMS = %q, want %q", s, line)
	}
}

func TestFetchWhole(t *testing.T) {
	body := gzFile(t, 1, 2000)
	s := &server{files: map[string][]byte{"/meta_X.json.gz": body}, ranges: true}
	ts := newServer(t, s)
	dir := t.TempDir()
	var sl sleeps
	f := file(ts, "meta_X.json.gz")
	f.SHA256, f.Size = sum(body), int64(len(body))
	res, err := Fetch(context.Background(), dir, f, opts(&sl))
	if err != nil {
		t.Fatal(err)
	}
	checkFetched(t, dir, "meta_X.json.gz", body)
	if res.Requests != 1 || res.Resumed || res.Bytes != int64(len(body)) || res.SHA256 != sum(body) || len(sl.got) != 0 {
		t.Errorf("result %+v, sleeps %v", res, sl.got)
	}
	// A second Fetch leaves the file alone.
	res, err = Fetch(context.Background(), dir, f, opts(&sl))
	if err != nil || !res.Present || len(s.reqs) != 1 {
		t.Errorf("second fetch: %+v %v, %d requests", res, err, len(s.reqs))
	}
}

// The connection drops half-way; the same Fetch resumes with a Range
// request after one backoff and ends with the served bytes.
func TestFetchResumesAfterDrop(t *testing.T) {
	body := gzFile(t, 2, 5000)
	half := int64(len(body) / 2)
	s := &server{files: map[string][]byte{"/r.json.gz": body}, ranges: true, faults: map[int]fault{0: {cut: half}}, etag: `"v1"`}
	ts := newServer(t, s)
	dir := t.TempDir()
	var sl sleeps
	res, err := Fetch(context.Background(), dir, file(ts, "r.json.gz"), opts(&sl))
	if err != nil {
		t.Fatal(err)
	}
	checkFetched(t, dir, "r.json.gz", body)
	want := []string{"/r.json.gz ", fmt.Sprintf("/r.json.gz bytes=%d-", half)}
	if strings.Join(s.reqs, "|") != strings.Join(want, "|") {
		t.Errorf("requests %q, want %q", s.reqs, want)
	}
	if res.Requests != 2 || fmt.Sprint(sl.got) != "[1s]" {
		t.Errorf("requests %d, sleeps %v; want 2 and [1s]", res.Requests, sl.got)
	}
}

// A run that gives up leaves NAME.part; the next invocation continues it
// with a Range request.
func TestFetchResumesNextRun(t *testing.T) {
	body := gzFile(t, 3, 5000)
	cut := int64(len(body) / 3)
	s := &server{files: map[string][]byte{"/r.json.gz": body}, ranges: true, faults: map[int]fault{0: {cut: cut}}, etag: `"v1"`}
	ts := newServer(t, s)
	dir := t.TempDir()
	o := opts(&sleeps{})
	o.Retries = -1
	_, err := Fetch(context.Background(), dir, file(ts, "r.json.gz"), o)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("first run: %v, want ErrUnavailable", err)
	}
	if n := fileSize(filepath.Join(dir, "r.json.gz.part")); n != cut {
		t.Fatalf(".part has %d bytes, want %d", n, cut)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.json.gz")); !os.IsNotExist(err) {
		t.Fatalf("destination exists after a failed run: %v", err)
	}
	res, err := Fetch(context.Background(), dir, file(ts, "r.json.gz"), o)
	if err != nil {
		t.Fatal(err)
	}
	checkFetched(t, dir, "r.json.gz", body)
	if !res.Resumed || s.reqs[1] != fmt.Sprintf("/r.json.gz bytes=%d-", cut) {
		t.Errorf("resumed %v, requests %q", res.Resumed, s.reqs)
	}
}

// A server that ignores Range answers 200 with the whole file: the .part
// starts again rather than growing a duplicate head.
func TestFetchServerIgnoresRange(t *testing.T) {
	body := gzFile(t, 4, 3000)
	s := &server{files: map[string][]byte{"/r.json.gz": body}, ranges: false, faults: map[int]fault{0: {cut: int64(len(body) / 2)}}, etag: `"v1"`}
	ts := newServer(t, s)
	dir := t.TempDir()
	if _, err := Fetch(context.Background(), dir, file(ts, "r.json.gz"), opts(&sleeps{})); err != nil {
		t.Fatal(err)
	}
	checkFetched(t, dir, "r.json.gz", body)
	if len(s.reqs) != 2 || !strings.Contains(s.reqs[1], "bytes=") {
		t.Errorf("requests %q: want a second one asking for a range", s.reqs)
	}
}

// 404 and 403 are final: no retry, an ErrNotFound naming the URL, nothing
// at NAME.
func TestFetchRefused(t *testing.T) {
	for _, code := range []int{http.StatusNotFound, http.StatusForbidden, http.StatusGone} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			s := &server{files: map[string][]byte{"/x.json.gz": gzFile(t, 5, 10)}, faults: map[int]fault{0: {status: code}}}
			ts := newServer(t, s)
			dir := t.TempDir()
			var sl sleeps
			f := file(ts, "x.json.gz")
			_, err := Fetch(context.Background(), dir, f, opts(&sl))
			if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), f.URL) || !strings.Contains(err.Error(), strconv.Itoa(code)) {
				t.Fatalf("err %v: want ErrNotFound naming %s and %d", err, f.URL, code)
			}
			if len(s.reqs) != 1 || len(sl.got) != 0 {
				t.Errorf("%d requests, sleeps %v: want one request, no retry", len(s.reqs), sl.got)
			}
			if _, err := os.Stat(filepath.Join(dir, "x.json.gz")); !os.IsNotExist(err) {
				t.Errorf("destination: %v", err)
			}
		})
	}
}

// 503 is retried with growing waits; after the retries it is
// ErrUnavailable, and a .part of the bytes so far is kept.
func TestFetch503(t *testing.T) {
	body := gzFile(t, 6, 500)
	t.Run("then ok", func(t *testing.T) {
		s := &server{files: map[string][]byte{"/x.json.gz": body}, faults: map[int]fault{0: {status: 503}, 1: {status: 502}}}
		ts := newServer(t, s)
		dir := t.TempDir()
		var sl sleeps
		if _, err := Fetch(context.Background(), dir, file(ts, "x.json.gz"), opts(&sl)); err != nil {
			t.Fatal(err)
		}
		checkFetched(t, dir, "x.json.gz", body)
		if fmt.Sprint(sl.got) != "[1s 2s]" {
			t.Errorf("sleeps %v, want [1s 2s]", sl.got)
		}
	})
	t.Run("always", func(t *testing.T) {
		f := map[int]fault{}
		for i := range 10 {
			f[i] = fault{status: 503}
		}
		s := &server{files: map[string][]byte{"/x.json.gz": body}, faults: f}
		ts := newServer(t, s)
		dir := t.TempDir()
		var sl sleeps
		o := opts(&sl)
		o.Retries = 3
		_, err := Fetch(context.Background(), dir, file(ts, "x.json.gz"), o)
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "503") {
			t.Fatalf("err %v, want ErrUnavailable with the status", err)
		}
		if len(s.reqs) != 4 || fmt.Sprint(sl.got) != "[1s 2s 3s]" {
			t.Errorf("%d requests, sleeps %v: want 4 and [1s 2s 3s]", len(s.reqs), sl.got)
		}
	})
}

// A sum that does not match keeps the bytes as NAME.bad, nothing at NAME,
// and no line in SHA256SUMS.
func TestFetchChecksumMismatch(t *testing.T) {
	body := gzFile(t, 7, 500)
	s := &server{files: map[string][]byte{"/x.json.gz": body}}
	ts := newServer(t, s)
	dir := t.TempDir()
	f := file(ts, "x.json.gz")
	f.SHA256 = strings.Repeat("0", 64)
	_, err := Fetch(context.Background(), dir, f, opts(&sleeps{}))
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), sum(body)) || !strings.Contains(err.Error(), "x.json.gz.bad") {
		t.Fatalf("err %v: want ErrMismatch with the sum and the .bad path", err)
	}
	bad, rerr := os.ReadFile(filepath.Join(dir, "x.json.gz.bad"))
	if rerr != nil || !bytes.Equal(bad, body) {
		t.Errorf(".bad: %v, %d bytes, want the %d served", rerr, len(bad), len(body))
	}
	for _, n := range []string{"x.json.gz", "x.json.gz.part"} {
		if _, err := os.Stat(filepath.Join(dir, n)); !os.IsNotExist(err) {
			t.Errorf("%s: %v", n, err)
		}
	}
	if s := readSums(t, dir); s != "" {
		t.Errorf("SHA256SUMS = %q after a mismatch", s)
	}
}

// Servers that lie about lengths.
func TestFetchLyingLengths(t *testing.T) {
	body := gzFile(t, 8, 3000)
	t.Run("shorter", func(t *testing.T) {
		// Content-Length 100 bytes short: the body ends there, the gzip
		// stream with it.
		s := &server{files: map[string][]byte{"/x.json.gz": body}, lenDiff: -100}
		ts := newServer(t, s)
		dir := t.TempDir()
		_, err := Fetch(context.Background(), dir, file(ts, "x.json.gz"), opts(&sleeps{}))
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "gzip") {
			t.Fatalf("err %v, want ErrCorrupt about the gzip stream", err)
		}
		if n := fileSize(filepath.Join(dir, "x.json.gz.bad")); n != int64(len(body)-100) {
			t.Errorf(".bad has %d bytes, want %d", n, len(body)-100)
		}
	})
	t.Run("longer", func(t *testing.T) {
		// Content-Length 100 bytes long: the connection ends early; the
		// retry asks for the rest and learns the file is whole.
		s := &server{files: map[string][]byte{"/x.json.gz": body}, ranges: true, lenDiff: 100, etag: `"v1"`}
		ts := newServer(t, s)
		dir := t.TempDir()
		if _, err := Fetch(context.Background(), dir, file(ts, "x.json.gz"), opts(&sleeps{})); err != nil {
			t.Fatal(err)
		}
		checkFetched(t, dir, "x.json.gz", body)
	})
	t.Run("not the known size", func(t *testing.T) {
		s := &server{files: map[string][]byte{"/x.json.gz": body}}
		ts := newServer(t, s)
		dir := t.TempDir()
		f := file(ts, "x.json.gz")
		f.Size = int64(len(body)) + 1
		_, err := Fetch(context.Background(), dir, f, opts(&sleeps{}))
		if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), strconv.Itoa(len(body))) {
			t.Fatalf("err %v, want ErrMismatch naming the announced size", err)
		}
	})
}

// A .b file must be a whole number of records.
func TestFetchImageFeaturesRecords(t *testing.T) {
	whole := make([]byte, 2*recordBytes)
	s := &server{files: map[string][]byte{"/whole.b": whole, "/cut.b": whole[:recordBytes+7]}}
	ts := newServer(t, s)
	dir := t.TempDir()
	if _, err := Fetch(context.Background(), dir, file(ts, "whole.b"), opts(&sleeps{})); err != nil {
		t.Fatal(err)
	}
	_, err := Fetch(context.Background(), dir, file(ts, "cut.b"), opts(&sleeps{}))
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "records") {
		t.Fatalf("err %v, want ErrCorrupt about records", err)
	}
}

// A mirror on disk (file://) serves ranges too.
func TestFetchFileMirror(t *testing.T) {
	body := gzFile(t, 9, 3000)
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "categoryFiles"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "categoryFiles", "meta_Baby.json.gz"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := release2014.Files(Request{Categories: []string{"Baby"}, Kinds: []string{Meta}, Mirror: "file://" + src})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Half of it from an earlier run, with its record: the file's
	// Last-Modified, which a file:// mirror sends as a web server does.
	if err := os.WriteFile(filepath.Join(dir, "meta_Baby.json.gz.part"), body[:len(body)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(src, "categoryFiles", "meta_Baby.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	lm := st.ModTime().UTC().Format(http.TimeFormat)
	if err := os.WriteFile(filepath.Join(dir, "meta_Baby.json.gz.part.meta"), []byte(`{"url":"`+fs[0].URL+`","last_modified":"`+lm+`","size":-1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Fetch(context.Background(), dir, fs[0], opts(&sleeps{}))
	if err != nil {
		t.Fatal(err)
	}
	checkFetched(t, dir, "meta_Baby.json.gz", body)
	if !res.Resumed {
		t.Error("not resumed")
	}
}

func TestContentRange(t *testing.T) {
	tests := []struct {
		h            string
		start, total int64
		ok           bool
	}{
		{"bytes 10-99/100", 10, 100, true},
		{"bytes */100", 0, 100, true},
		{"bytes 0-9/*", 0, -1, true},
		{"bytes x-9/100", 0, 0, false},
		{"items 0-9/100", 0, 0, false},
		{"bytes 0-9", 0, 0, false},
	}
	for _, tc := range tests {
		s, tot, ok := contentRange(tc.h)
		if s != tc.start || tot != tc.total || ok != tc.ok {
			t.Errorf("%q: %d %d %v, want %d %d %v", tc.h, s, tot, ok, tc.start, tc.total, tc.ok)
		}
	}
}

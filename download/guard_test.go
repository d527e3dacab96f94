package download

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// events collects a Fetch's events by kind.
type events struct {
	mu  sync.Mutex
	got []Event
}

func (e *events) add(ev Event) {
	e.mu.Lock()
	e.got = append(e.got, ev)
	e.mu.Unlock()
}

func (e *events) kind(k string) []Event {
	var out []Event
	for _, ev := range e.got {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// firstRunCut fetches name from s with its first response cut after cut
// bytes and no retry, leaving a .part of cut bytes.
func firstRunCut(t *testing.T, dir string, f File, cut int64) {
	t.Helper()
	o := opts(&sleeps{})
	o.Retries = -1
	if _, err := Fetch(context.Background(), dir, f, o); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("first run: %v, want ErrUnavailable", err)
	}
	if n := fileSize(filepath.Join(dir, f.Name+".part")); n != cut {
		t.Fatalf(".part has %d bytes, want %d", n, cut)
	}
}

// The file changes on the server between two runs: the .part of the old
// one must not be continued with the new one's bytes.
func TestFetchResumeFileChanged(t *testing.T) {
	old, cur := gzFile(t, 20, 4000), gzFile(t, 21, 4000)
	cut := int64(len(old) / 3)
	for _, tc := range []struct {
		name string
		// The server's validators for the old and the new file, and
		// whether it honours If-Range.
		etag, lastModified [2]string
		ifRange            bool
		cur                []byte
		wantReqs           int
	}{
		// If-Range names the old ETag: the server answers 200 with the
		// new file.
		{name: "etag", etag: [2]string{`"v1"`, `"v2"`}, ifRange: true, cur: cur, wantReqs: 2},
		{name: "last-modified", lastModified: [2]string{"Mon, 02 Jan 2006 15:04:05 GMT", "Tue, 03 Jan 2006 15:04:05 GMT"}, ifRange: true, cur: cur, wantReqs: 2},
		// A server that ignores If-Range answers 206 with the new ETag:
		// the .part is emptied and the next attempt fetches all of it.
		{name: "if-range ignored", etag: [2]string{`"v1"`, `"v2"`}, cur: cur, wantReqs: 3},
		// An ETag that does not change with the file (a server that
		// makes it from the name): the new file's size differs from the
		// one recorded. (With no validator at all the .part is not
		// continued: complete_test.go.)
		{name: "size", etag: [2]string{`"same"`, `"same"`}, cur: gzFile(t, 22, 4100), wantReqs: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &server{files: map[string][]byte{"/r.json.gz": old}, ranges: true, ifRange: tc.ifRange,
				faults: map[int]fault{0: {cut: cut}}, etag: tc.etag[0], lastModified: tc.lastModified[0]}
			ts := newServer(t, s)
			dir := t.TempDir()
			f := file(ts, "r.json.gz")
			firstRunCut(t, dir, f, cut)
			b, err := os.ReadFile(filepath.Join(dir, "r.json.gz.part.meta"))
			var m partMeta
			if err == nil {
				err = json.Unmarshal(b, &m)
			}
			if err != nil || m != (partMeta{URL: f.URL, ETag: tc.etag[0], LastModified: tc.lastModified[0], Size: int64(len(old))}) {
				t.Errorf(".part.meta %s: %+v %v", b, m, err)
			}

			s.mu.Lock()
			s.files["/r.json.gz"], s.etag, s.lastModified = tc.cur, tc.etag[1], tc.lastModified[1]
			s.mu.Unlock()
			var ev events
			o := opts(&sleeps{})
			o.Event = ev.add
			if _, err := Fetch(context.Background(), dir, f, o); err != nil {
				t.Fatal(err)
			}
			checkFetched(t, dir, "r.json.gz", tc.cur)
			if want := tc.etag[0] + tc.lastModified[0]; s.ifRanges[1] != want || s.reqs[1] != fmt.Sprintf("/r.json.gz bytes=%d-", cut) {
				t.Errorf("resuming request %q If-Range %q, want If-Range %q", s.reqs[1], s.ifRanges[1], want)
			}
			if len(s.reqs) != tc.wantReqs {
				t.Errorf("requests %q, want %d", s.reqs, tc.wantReqs)
			}
			if _, err := os.Stat(filepath.Join(dir, "r.json.gz.part.meta")); !os.IsNotExist(err) {
				t.Errorf(".part.meta left behind: %v", err)
			}
			if tc.ifRange && len(ev.kind("restart")) != 1 {
				t.Errorf("events %+v: want one restart", ev.got)
			}
		})
	}
}

// The same file unchanged: If-Range matches and the .part is continued.
func TestFetchResumeIfRangeMatches(t *testing.T) {
	body := gzFile(t, 23, 4000)
	cut := int64(len(body) / 2)
	s := &server{files: map[string][]byte{"/r.json.gz": body}, ranges: true, ifRange: true, etag: `"v1"`,
		faults: map[int]fault{0: {cut: cut}}}
	ts := newServer(t, s)
	dir := t.TempDir()
	f := file(ts, "r.json.gz")
	firstRunCut(t, dir, f, cut)
	res, err := Fetch(context.Background(), dir, f, opts(&sleeps{}))
	if err != nil {
		t.Fatal(err)
	}
	checkFetched(t, dir, "r.json.gz", body)
	if !res.Resumed || len(s.reqs) != 2 || s.ifRanges[1] != `"v1"` {
		t.Errorf("resumed %v, requests %q, If-Range %q", res.Resumed, s.reqs, s.ifRanges)
	}
}

// A .part begun from one mirror and continued from another: only if the
// other's Last-Modified is the recorded one.
func TestFetchResumeOtherMirror(t *testing.T) {
	body := gzFile(t, 24, 4000)
	cut := int64(len(body) / 2)
	const date = "Mon, 02 Jan 2006 15:04:05 GMT"
	for _, tc := range []struct {
		name       string
		aDate      string // Last-Modified of mirror A ("" none)
		bDate      string
		wantRange  bool
		wantIfDate string
	}{
		{name: "no date recorded", aDate: "", bDate: date},
		{name: "same date", aDate: date, bDate: date, wantRange: true, wantIfDate: date},
		{name: "other date", aDate: date, bDate: "Tue, 03 Jan 2006 15:04:05 GMT", wantRange: true, wantIfDate: date},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &server{files: map[string][]byte{"/r.json.gz": body}, ranges: true, etag: `"a"`, lastModified: tc.aDate,
				faults: map[int]fault{0: {cut: cut}}}
			b := &server{files: map[string][]byte{"/r.json.gz": body}, ranges: true, ifRange: true, etag: `"b"`, lastModified: tc.bDate}
			ta, tb := newServer(t, a), newServer(t, b)
			dir := t.TempDir()
			firstRunCut(t, dir, file(ta, "r.json.gz"), cut)
			var ev events
			o := opts(&sleeps{})
			o.Event = ev.add
			if _, err := Fetch(context.Background(), dir, file(tb, "r.json.gz"), o); err != nil {
				t.Fatal(err)
			}
			checkFetched(t, dir, "r.json.gz", body)
			if len(b.reqs) != 1 || strings.Contains(b.reqs[0], "bytes=") != tc.wantRange || b.ifRanges[0] != tc.wantIfDate {
				t.Errorf("mirror B's requests %q If-Range %q; want a Range %v with If-Range %q", b.reqs, b.ifRanges, tc.wantRange, tc.wantIfDate)
			}
			wantRestart := 0
			if tc.bDate != tc.aDate {
				wantRestart = 1
			}
			if r := ev.kind("restart"); len(r) != wantRestart || (wantRestart == 1 && r[0].Offset != cut) {
				t.Errorf("restarts %+v, want %d of %d bytes", r, wantRestart, cut)
			}
		})
	}
}

// A second Fetch of a file being fetched into the same directory is
// refused with ErrLocked naming the file and the holder, and sends no
// request; once the first is done the file is there.
func TestFetchLocked(t *testing.T) {
	body := gzFile(t, 25, 3000)
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var reqs int
	var mu sync.Mutex
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reqs++
		mu.Unlock()
		first := false
		once.Do(func() { first = true })
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if !first {
			w.Write(body)
			return
		}
		// The first request hangs half-way until the test releases it.
		w.Write(body[:100])
		w.(http.Flusher).Flush()
		close(started)
		<-release
		w.Write(body[100:])
	}))
	defer ts.Close()
	dir := t.TempDir()
	f := file(ts, "r.json.gz")
	done := make(chan error)
	go func() {
		_, err := Fetch(context.Background(), dir, f, opts(&sleeps{}))
		done <- err
	}()
	<-started
	_, err := Fetch(context.Background(), dir, f, opts(&sleeps{}))
	close(release)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), filepath.Join(dir, "r.json.gz")) ||
		!strings.Contains(err.Error(), fmt.Sprintf("pid %d started", os.Getpid())) {
		t.Errorf("second fetch: %v; want ErrLocked naming the file and pid %d", err, os.Getpid())
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkFetched(t, dir, "r.json.gz", body)
	mu.Lock()
	if reqs != 1 {
		t.Errorf("%d requests, want 1", reqs)
	}
	mu.Unlock()
	if _, err := os.Stat(filepath.Join(dir, "r.json.gz.part.lock")); !os.IsNotExist(err) {
		t.Errorf("lock file left behind: %v", err)
	}
}

// A file already present is checked against what is known of it, sends no
// request, and is left in place.
func TestFetchPresentChecked(t *testing.T) {
	body, other := gzFile(t, 26, 500), gzFile(t, 27, 500)
	s := &server{files: map[string][]byte{"/m.json.gz": body}}
	ts := newServer(t, s)
	put := func(t *testing.T, b []byte) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "m.json.gz"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	left := func(t *testing.T, dir string, want []byte) {
		t.Helper()
		if got, err := os.ReadFile(filepath.Join(dir, "m.json.gz")); err != nil || !bytes.Equal(got, want) {
			t.Errorf("present file changed: %v", err)
		}
		if len(s.reqs) != 0 {
			t.Errorf("requests %q for a present file", s.reqs)
		}
	}
	t.Run("size", func(t *testing.T) {
		s.reqs = nil
		dir := put(t, other[:len(other)-1])
		f := file(ts, "m.json.gz")
		f.Size = int64(len(other))
		_, err := Fetch(context.Background(), dir, f, opts(&sleeps{}))
		if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), fmt.Sprintf("%d bytes, expected %d", len(other)-1, len(other))) ||
			!strings.Contains(err.Error(), filepath.Join(dir, "m.json.gz")) {
			t.Errorf("err %v: want ErrMismatch naming the file and both sizes", err)
		}
		left(t, dir, other[:len(other)-1])
	})
	t.Run("known sum", func(t *testing.T) {
		s.reqs = nil
		dir := put(t, other)
		f := file(ts, "m.json.gz")
		f.SHA256 = sum(body)
		var ev events
		o := opts(&sleeps{})
		o.Event = ev.add
		_, err := Fetch(context.Background(), dir, f, o)
		if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), sum(other)) || !strings.Contains(err.Error(), sum(body)) {
			t.Errorf("err %v: want ErrMismatch naming both sums", err)
		}
		if c := ev.kind("check"); len(c) != 1 || c[0].Total != int64(len(other)) {
			t.Errorf("check events %+v", c)
		}
		left(t, dir, other)
		// The right bytes pass, with their sum.
		s.reqs = nil
		dir = put(t, body)
		res, err := Fetch(context.Background(), dir, f, opts(&sleeps{}))
		if err != nil || !res.Present || res.SHA256 != sum(body) {
			t.Errorf("good present file: %+v %v", res, err)
		}
		left(t, dir, body)
	})
	t.Run("SHA256SUMS line", func(t *testing.T) {
		dir := t.TempDir()
		f := file(ts, "m.json.gz")
		if _, err := Fetch(context.Background(), dir, f, opts(&sleeps{})); err != nil {
			t.Fatal(err)
		}
		// Damaged after the download (a copy cut short, a disk error).
		if err := os.WriteFile(filepath.Join(dir, "m.json.gz"), body[:len(body)-10], 0o644); err != nil {
			t.Fatal(err)
		}
		s.reqs = nil
		_, err := Fetch(context.Background(), dir, f, opts(&sleeps{}))
		if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), SumsFile) || !strings.Contains(err.Error(), sum(body)) {
			t.Errorf("err %v: want ErrMismatch naming SHA256SUMS and the recorded sum", err)
		}
		left(t, dir, body[:len(body)-10])
	})
	t.Run("other release", func(t *testing.T) {
		s.reqs = nil
		dir := t.TempDir()
		f := file(ts, "m.json.gz")
		f.Release = "2014"
		if _, err := Fetch(context.Background(), dir, f, opts(&sleeps{})); err != nil {
			t.Fatal(err)
		}
		s.reqs = nil
		g := f
		g.Release, g.URL = "2018", ts.URL+"/metaFiles2/m.json.gz"
		_, err := Fetch(context.Background(), dir, g, opts(&sleeps{}))
		if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "release 2014") || !strings.Contains(err.Error(), f.URL) ||
			!strings.Contains(err.Error(), "another --out") {
			t.Errorf("err %v: want ErrMismatch naming release 2014, its URL and another --out", err)
		}
		left(t, dir, body)
		// The same release passes.
		if _, err := Fetch(context.Background(), dir, f, opts(&sleeps{})); err != nil {
			t.Error(err)
		}
	})
}

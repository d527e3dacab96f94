package main

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"monomer/download"
)

// rawMirror answers every request with the bytes of answer(r), written on
// the hijacked connection, which is then closed (no Content-Length: the
// body ends where the connection does).
func rawMirror(t *testing.T, answer func(r *http.Request) string) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		buf.WriteString(answer(r))
		buf.Flush()
	}))
	t.Cleanup(ts.Close)
	return ts
}

// TestDownloadCompleteness: the exit codes a scheduler acts on for ends
// it cannot confirm, empty answers and sums files meant for other files,
// and a mirror's credentials kept out of the log.
func TestDownloadCompleteness(t *testing.T) {
	feats := make([]byte, 3*(10+4*4096))
	// A server that announces no length and ignores Range: exit 5, the
	// .part kept, nothing at the name.
	nolen := rawMirror(t, func(r *http.Request) string {
		if r.URL.Path == "/2014/categoryFiles/meta_Baby.json.gz" {
			return "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
		}
		return "HTTP/1.1 200 OK\r\nLast-Modified: Mon, 02 Jan 2006 15:04:05 GMT\r\n\r\n" + string(feats[:2*(10+4*4096)])
	})
	dir := t.TempDir()
	run := func(args ...string) result {
		t.Helper()
		return monomer(t, dir, "fake", nil, append([]string{"download", "--release", "2014", "--category", "Baby"}, args...)...)
	}
	r := run("--what", "image_features", "--mirror", nolen.URL+"/2014", "--out", "a", "--retries", "0")
	if r.code != exitInputMissing || !strings.Contains(r.stderr, "no length announced") || !strings.Contains(r.stderr, "is kept") {
		t.Errorf("no length: exit %d, want 5 saying so:\n%s", r.code, r.stderr)
	}
	if fileSize(t, filepath.Join(dir, "a", "image_features_Baby.b")) != -1 || fileSize(t, filepath.Join(dir, "a", "image_features_Baby.b.part")) != 2*(10+4*4096) {
		t.Error("no length: want the .part kept and nothing at the name")
	}
	// An empty 200: exit 3, "empty".
	r = run("--what", "meta", "--mirror", nolen.URL+"/2014", "--out", "b", "--retries", "0")
	if r.code != exitBadInput || !strings.Contains(r.stderr, "empty") {
		t.Errorf("empty: exit %d, want 3 saying empty:\n%s", r.code, r.stderr)
	}
	// A directory at the name: exit 2 naming it.
	os.MkdirAll(filepath.Join(dir, "c", "meta_Baby.json.gz"), 0o755)
	r = run("--what", "meta", "--mirror", nolen.URL+"/2014", "--out", "c")
	if r.code != exitUsage || !strings.Contains(r.stderr, "is a directory") {
		t.Errorf("directory at the name: exit %d, want 2:\n%s", r.code, r.stderr)
	}

	// Sums files that name none of the files, or one in another case:
	// exit 2 before anything is fetched.
	z := strings.Repeat("0", 64)
	for _, tc := range []struct{ text, says string }{
		{z + "  meta_Men.json.gz\n", "none of the files"},
		{z + "  META_BABY.JSON.GZ\n", "META_BABY.JSON.GZ"},
		{z + "  meta_Baby.json.gz  \n", "case and spaces"},
	} {
		write(t, filepath.Join(dir, "sums"), tc.text)
		r = run("--what", "meta", "--mirror", nolen.URL+"/2014", "--out", "d", "--checksums", "sums")
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.says) {
			t.Errorf("sums %q: exit %d, want 2 saying %q:\n%s", tc.text, r.code, tc.says, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "d")); err == nil {
		entries, _ := os.ReadDir(filepath.Join(dir, "d"))
		if len(entries) > 0 {
			t.Errorf("files fetched despite the sums file: %v", entries)
		}
	}

	// Credentials in --mirror: sent, and in no log line, file or listing.
	var auths []string
	var mu sync.Mutex
	secret := rawMirror(t, func(r *http.Request) string {
		u, p, _ := r.BasicAuth()
		mu.Lock()
		defer mu.Unlock()
		auths = append(auths, u+":"+p)
		return "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"
	})
	mirror := strings.Replace(secret.URL, "http://", "http://alice:s3cret@", 1) + "/2014"
	r = run("--what", "meta", "--mirror", mirror, "--out", "e", "--retries", "0")
	l := run("--mirror", mirror, "--list")
	mu.Lock()
	defer mu.Unlock()
	if r.code != exitInputMissing || len(auths) != 1 || auths[0] != "alice:s3cret" {
		t.Errorf("credentials: exit %d, sent %q; want 5 and alice:s3cret sent:\n%s", r.code, auths, r.stderr)
	}
	for _, text := range []string{r.stderr, l.stdout, l.stderr} {
		if strings.Contains(text, "s3cret") || strings.Contains(text, "alice") {
			t.Errorf("credentials shown:\n%s", text)
		}
	}
}

// M5: a --out that cannot be written (a read-only disk, another user's
// folder) is a usage error, exit 2. Tests run as root here, which writes
// into any folder, so the classification is checked on the errors the
// fetch meets.
func TestDownloadOutNotWritable(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EROFS, syscall.EACCES, syscall.EPERM} {
		err := outError(fmt.Errorf("download: x: %w", &fs.PathError{Op: "open", Path: "out/x.part.lock", Err: errno}), "out")
		if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "--out out") {
			t.Errorf("%v: exit %d (%v), want 2 naming --out", errno, exitCode(err), err)
		}
	}
	if err := outError(syscall.ECONNRESET, "out"); exitCode(err) == exitUsage {
		t.Errorf("a network error became a usage error: %v", err)
	}
	// sysfs refuses new files even to root: a folder that exists and
	// cannot be written into, end to end.
	const sysfsMagic = 0x62656572 // SYSFS_MAGIC, linux/magic.h
	var st syscall.Statfs_t
	if err := syscall.Statfs("/sys", &st); err != nil || st.Type != sysfsMagic {
		t.Skip("no sysfs at /sys")
	}
	r := monomer(t, t.TempDir(), "fake", nil, "download", "--release", "2014", "--category", "Baby", "--what", "meta",
		"--mirror", "http://127.0.0.1:1/", "--out", "/sys")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--out /sys") {
		t.Errorf("--out /sys: exit %d, want 2 naming --out:\n%s", r.code, r.stderr)
	}
}

// TestDownloadRetryableWins: of several files' failures, one that a retry
// may mend (a network failure, exit 5) decides the exit code over a bad
// file's 3, as a run's failures do; every message is kept.
func TestDownloadRetryableWins(t *testing.T) {
	bad := fmt.Errorf("a: checksum mismatch: %w", download.ErrMismatch)
	net := fmt.Errorf("b: connection reset: %w", download.ErrUnavailable)
	for _, errs := range [][]error{{bad, net}, {net, bad}} {
		err := retryableFirst(errs)
		if got := exitCode(err); got != exitCode(net) || !strings.Contains(err.Error(), "checksum mismatch") || !strings.Contains(err.Error(), "connection reset") {
			t.Errorf("%v: exit %d (%v), want %d with both messages", errs, got, err, exitCode(net))
		}
	}
	if got := exitCode(retryableFirst([]error{bad})); got != exitCode(bad) {
		t.Errorf("one bad file: exit %d", got)
	}
}

package download

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"

	"monomer/imagefeat"
	"monomer/internal/filelock"
	"monomer/internal/rawio"
	"monomer/internal/sidefile"
)

// Options tune Fetch. The zero value works.
type Options struct {
	// Client makes the requests. If nil, a client whose transport waits at
	// most a minute for response headers and also serves file:// URLs
	// (a mirror on a local or network disk).
	Client *http.Client
	// Retries bounds the attempts in a row that bring no new byte, after
	// the first: an attempt that makes progress starts the count again,
	// so a large file on a flaky link keeps resuming. If 0, 5; negative,
	// no retry. Asking for the bytes after a body that ended without a
	// length, to confirm its end, is no retry.
	Retries int
	// Backoff is the wait before the n-th retry of a streak (n from 1).
	// If nil, 2 s doubling to at most 2 min.
	Backoff func(n int) time.Duration
	// Sleep waits d or until ctx is done; tests pass one that records d and
	// returns at once. If nil, a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// StallTimeout ends an attempt whose body brings no byte for this
	// long, so that a silent connection is retried. If 0, 2 min.
	StallTimeout time.Duration
	// Event, if set, is told what Fetch does (Event's doc).
	Event func(Event)
	// Progress, if set, is called as bytes arrive with the bytes of the
	// file on disk so far and its total size (-1 if unknown).
	Progress func(f File, done, total int64)
}

// Event is one step of a Fetch.
type Event struct {
	// Kind is "present" (DIR/NAME exists: not fetched), "check" (reading
	// a present file's Total bytes to compare its SHA-256 with a known
	// one, or, with none known, to check it is whole by its format),
	// "request" (an attempt starts at Offset, Resumed if that
	// continues a .part), "restart" (the Offset bytes of the .part are
	// thrown away, Err says why: the server's file is not the one they
	// came from, or the server ignores Range, or nothing can tell whether
	// it is: no validator, no known SHA-256), "retry" (an attempt failed
	// with Err; the next starts after Wait), "verify" (the Total bytes are
	// all there: reading them through), "warn" (Err says what was
	// left alone: a SHA256SUMS or SOURCES.tsv in DIR not in monomer's
	// form, so not read) or "done" (renamed into place; SHA256 is its
	// sum).
	Kind    string
	File    File
	Attempt int
	Offset  int64
	Total   int64
	Resumed bool
	Wait    time.Duration
	Err     error
	SHA256  string // of "done"
}

// Result is what a Fetch did.
type Result struct {
	File File
	// Path is DIR/NAME; Bytes its size; SHA256 its sum (empty if Present
	// and no sum was known to check it against).
	Path   string
	Bytes  int64
	SHA256 string
	// Present: DIR/NAME existed and was left alone. Resumed: a .part left
	// by an earlier run was continued. Requests counts the HTTP requests.
	Present, Resumed bool
	Requests         int
}

// Fetch fetches f into dir/f.Name (module doc).
//
// An existing dir/f.Name is not fetched again but checked, and left alone
// either way: SourcesFile must not record it for another release than
// f.Release, and it must have f.Size bytes and the SHA-256 f.SHA256 (or,
// if that is unknown, the one its line in SumsFile recorded when it was
// fetched) where these are known; a mismatch is ErrMismatch. With no sum
// known it must be whole by its format (verify's checks: not empty, a
// gzip stream to its end, whole .b records), else ErrCorrupt; something
// other than a regular file at that name is an ErrUsage.
//
// Bytes arrive in dir/f.Name.part, which survives a failure or an
// interruption for the next Fetch to continue. Beside it,
// dir/f.Name.part.meta records the URL and the server's ETag and
// Last-Modified, which a resuming request sends as If-Range: a server
// whose file has changed answers with all of it, and the .part starts
// again. A .part from another URL (another mirror) is continued only if
// that URL's Last-Modified is the same (a copy that kept the file's time,
// as rsync -t and wget -N make), else it starts again. A .part with bytes
// but without a .part.meta is not known to be monomer's: ErrUsage, left
// as it is (sidefile.go). dir/f.Name.part.lock is held while the file is
// fetched: a second Fetch of the same file into the same dir returns
// ErrLocked naming the holder.
//
// A .part whose .part.meta holds no validator (the server sent no ETag and
// no Last-Modified) is not continued but started again, with a "restart"
// event, unless f.SHA256 is known: nothing else would tell two versions of
// the file spliced together. The file is complete only at a length
// confirmed: announced (Content-Length, a Content-Range total, the length
// .part.meta recorded from the first answer when a resume's total is "*"),
// known (f.Size), or, for a body that ended without one, a 416 answer to
// a Range request for the bytes after it. An end left unconfirmed keeps the
// .part and is ErrUnavailable once the retries are spent; an empty file
// (a 204, a length of 0) is ErrCorrupt.
//
// A verification failure renames the .part to dir/f.Name.bad (or the
// first free dir/f.Name.bad.N) and returns
// ErrMismatch or ErrCorrupt; a refusal (404, 403, 410, 401, another 4xx, a
// redirect loop or one with no Location) returns ErrNotFound naming the
// URL; network failures and 5xx answers are retried, then returned as
// ErrUnavailable, as is at once a file:// mirror whose folder is missing (a
// disk not mounted yet); ctx's error is returned as is. No URL in an error,
// an event or a file carries the user name and password of f.URL
// (File.SafeURL).
func Fetch(ctx context.Context, dir string, f File, opt Options) (Result, error) {
	dst := filepath.Join(dir, f.Name)
	res := Result{File: f, Path: dst}
	if ok, err := present(dst); err != nil || ok {
		return checkPresentOr(dir, f, opt, res, err)
	}
	part := dst + ".part"
	lk, err := filelock.TryLock(part + ".lock")
	if err != nil {
		if errors.Is(err, sidefile.ErrForeign) {
			return res, sideError(err)
		}
		var he *filelock.HeldError
		if errors.As(err, &he) {
			return res, fmt.Errorf("download: %s: %w: %s (lock %s); once it is done the file is there, or use another --out",
				dst, ErrLocked, he.Holder, he.Path)
		}
		return res, fmt.Errorf("download: %s: %w", dst, err)
	}
	defer lk.Unlock()
	// The holder we may have just missed could have put the file there.
	if ok, err := present(dst); err != nil || ok {
		return checkPresentOr(dir, f, opt, res, err)
	}
	fe := fetcher{opt: opt, f: f, part: part, meta: part + ".meta", bad: dst + ".bad", total: -1}
	if err := fe.checkSide(); err != nil {
		return res, err
	}
	if err := fe.prepare(); err != nil {
		return res, err
	}
	err = fe.loop(ctx, &res)
	res.Resumed = fe.resumed
	if fileSize(part) == 0 && !errors.Is(err, sidefile.ErrForeign) {
		// Nothing arrived: leave no empty .part behind, if it is ours.
		if removeOwnEmpty(part) {
			os.Remove(fe.meta)
		}
		if err == nil {
			// Complete at 0 bytes: the length announced (or confirmed)
			// is 0. No data file is empty, and the same answer is what a
			// retry gets.
			return res, fmt.Errorf("download: %s: empty: %s sent 0 bytes: %w", f.Name, f.SafeURL(), ErrCorrupt)
		}
	}
	if err != nil {
		if errors.Is(err, ErrMismatch) && fileSize(part) > 0 {
			// The server's file is not the one expected: what an earlier
			// run fetched of it is not to be continued either.
			if rerr := fe.toBad(); rerr != nil {
				return res, errors.Join(err, rerr)
			}
			return res, fmt.Errorf("%w; the bytes fetched so far are kept in %s", err, fe.bad)
		}
		return res, err
	}
	opt.event(Event{Kind: "verify", File: f, Total: fileSize(part)})
	sum, n, err := fe.verify()
	if err != nil {
		if rerr := fe.toBad(); rerr != nil {
			return res, errors.Join(err, rerr)
		}
		return res, fmt.Errorf("%w; the bytes are kept in %s", err, fe.bad)
	}
	if err := fe.finish(dst); err != nil {
		return res, err
	}
	os.Remove(fe.meta)
	res.Bytes, res.SHA256 = n, sum
	if err := appendSide(dir, SumsFile, sumLine, sum+"  "+f.Name); err != nil {
		return res, err
	}
	if err := appendSide(dir, SourcesFile, sourceLine, f.Name+"\t"+f.Release+"\t"+f.SafeURL()); err != nil {
		return res, err
	}
	opt.event(Event{Kind: "done", File: f, Total: n, SHA256: sum})
	return res, nil
}

// checkPresentOr is checkPresent, or err if present found none to check.
func checkPresentOr(dir string, f File, opt Options, res Result, err error) (Result, error) {
	if err != nil {
		return res, err
	}
	return checkPresent(dir, f, opt, res)
}

// checkPresent checks a file already at res.Path (Fetch's doc) and leaves
// it where it is: it may be a good file of another release, and a bad one
// is the user's to look at.
func checkPresent(dir string, f File, opt Options, res Result) (Result, error) {
	st, err := os.Stat(res.Path)
	if err != nil {
		return res, err
	}
	if !st.Mode().IsRegular() {
		// Not a download's result (a directory, a pipe): nothing to
		// check, and nothing to fetch over it.
		return res, fmt.Errorf("%w: %s is %s, not a file: move it away, or use another --out", ErrUsage, res.Path, sidefile.Kind(st.Mode()))
	}
	res.Present, res.Bytes = true, st.Size()
	opt.event(Event{Kind: "present", File: f, Total: st.Size()})
	src, err := readSources(dir, f, &opt)
	if err != nil {
		return res, err
	}
	if s, ok := src[f.Name]; ok && f.Release != "" && s.release != "" && s.release != f.Release {
		return res, fmt.Errorf("download: %s was fetched for release %s (from %s, %s), not %s, whose file has the same name: %w; use another --out for release %s",
			res.Path, s.release, s.url, s.file, f.Release, ErrMismatch, f.Release)
	}
	if f.Size >= 0 && st.Size() != f.Size {
		return res, fmt.Errorf("download: %s (present): %d bytes, expected %d: %w; delete it to fetch it again",
			res.Path, st.Size(), f.Size, ErrMismatch)
	}
	want, from := f.SHA256, "expected"
	if want == "" {
		sum, file, err := recordedSum(dir, f, &opt)
		if err != nil {
			return res, err
		}
		want, from = sum, "recorded in "+file+" when it was fetched"
	}
	opt.event(Event{Kind: "check", File: f, Total: st.Size()})
	in, err := os.Open(res.Path)
	if err != nil {
		return res, err
	}
	defer in.Close()
	if want == "" {
		// No sum to compare: the file must at least be whole by its
		// format, as a fetched one must (a copy cut short, an empty file).
		if _, err := readThrough(in, f.Name, st.Size()); err != nil {
			return res, fmt.Errorf("%w (present at %s; delete it to fetch it again)", err, res.Path)
		}
		return res, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, in); err != nil {
		return res, fmt.Errorf("download: %s: %w", res.Path, err)
	}
	res.SHA256 = hex.EncodeToString(h.Sum(nil))
	if res.SHA256 != want {
		return res, fmt.Errorf("download: %s (present): sha256 %s, %s %s: %w; delete it to fetch it again",
			res.Path, res.SHA256, from, want, ErrMismatch)
	}
	return res, nil
}

func (o *Options) event(e Event) {
	if o.Event != nil {
		o.Event(e)
	}
}

// fetcher is one Fetch's state.
type fetcher struct {
	opt             Options
	f               File
	part, meta, bad string
	total           int64 // the size the server announced, -1 if unknown
	calls           int
	// probe: the last response ended without a known length; the next
	// request asks for the bytes after it, which only a 416 may answer
	// for the file to be complete.
	probe bool
	// resumed: the first request continued the .part of an earlier run.
	resumed bool
	// rec is what part.meta records, nil if nothing (yet).
	rec *partMeta
}

// partMeta is NAME.part.meta: where the bytes of NAME.part came from, with
// the validators the server sent for them (RFC 9110 8.8), so that a later
// request continues only the same file (If-Range, RFC 9110 13.1.5).
type partMeta struct {
	URL          string `json:"url"` // File.SafeURL: no password on disk
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	Size         int64  `json:"size"` // -1 if not announced
}

// prepare reads part.meta and throws the .part away if nothing can tell
// whether its bytes are those of f.URL's file.
func (fe *fetcher) prepare() error {
	n := fileSize(fe.part)
	if n == 0 {
		os.Remove(fe.meta)
		return nil
	}
	if b, err := sidefile.ReadFile(fe.meta, 1<<16); err == nil {
		var m partMeta
		if json.Unmarshal(b, &m) == nil && m.URL != "" {
			fe.rec = &m
		}
	}
	if m := fe.rec; m != nil && m.URL != fe.f.SafeURL() && m.LastModified == "" {
		if err := fe.truncatePart(); err != nil {
			return err
		}
		os.Remove(fe.meta)
		fe.rec = nil
		fe.opt.event(Event{Kind: "restart", File: fe.f, Offset: n,
			Err: fmt.Errorf("%s came from %s, which sent no Last-Modified to compare %s's with", fe.part, stripUserinfo(m.URL), fe.f.SafeURL())})
	}
	return nil
}

// ifRange is the validator a resuming request sends: the recorded strong
// ETag if the URL is the same (an ETag is the server's own token, and a
// weak one never matches in If-Range), else the Last-Modified date.
func (fe *fetcher) ifRange() string {
	m := fe.rec
	switch {
	case m == nil:
		return ""
	case m.URL == fe.f.SafeURL() && m.ETag != "" && !strings.HasPrefix(m.ETag, "W/"):
		return m.ETag
	}
	return m.LastModified
}

// changed says how the file resp describes differs from the recorded one,
// "" if it does not as far as resp shows.
func (fe *fetcher) changed(resp *http.Response, total int64) string {
	m := fe.rec
	if m == nil {
		return ""
	}
	if total >= 0 && m.Size >= 0 && total != m.Size {
		return fmt.Sprintf("%d bytes, %d when %s was started", total, m.Size, fe.part)
	}
	lm := resp.Header.Get("Last-Modified")
	if m.URL != fe.f.SafeURL() {
		// Another server's ETags mean nothing here; its date must match.
		if lm != m.LastModified {
			return fmt.Sprintf("Last-Modified %q, %q at %s where %s came from", lm, m.LastModified, stripUserinfo(m.URL), fe.part)
		}
		return ""
	}
	if e := resp.Header.Get("ETag"); e != "" && m.ETag != "" && e != m.ETag {
		return fmt.Sprintf("ETag %s, %s when %s was started", e, m.ETag, fe.part)
	}
	if lm != "" && m.LastModified != "" && lm != m.LastModified {
		return fmt.Sprintf("Last-Modified %q, %q when %s was started", lm, m.LastModified, fe.part)
	}
	return ""
}

// record writes part.meta for the file resp describes, atomically (a
// temporary file renamed), before any of its bytes are written.
func (fe *fetcher) record(resp *http.Response, total int64) error {
	m := &partMeta{URL: fe.f.SafeURL(), ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified"), Size: total}
	if err := fe.writeMeta(m); err != nil {
		return err
	}
	fe.rec = m
	return nil
}

// errIncomplete: a response ended cleanly short of the announced total.
var errIncomplete = errors.New("response ended before the end of the file")

// loop runs attempts until the file is complete, a failure is final or the
// retries are spent.
func (fe *fetcher) loop(ctx context.Context, res *Result) error {
	retries := fe.opt.Retries
	switch {
	case retries == 0:
		retries = 5
	case retries < 0:
		retries = 0
	}
	// Progress is bytes beyond the most the .part ever held: an attempt
	// that starts again from 0 and falls short of it brings none, so
	// that a server alternating restarts and cuts cannot loop forever.
	streak, best := 0, fileSize(fe.part)
	for {
		done, err := fe.once(ctx)
		res.Requests = fe.calls
		if err == nil && done {
			return nil
		}
		if err == nil {
			err = errIncomplete
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !retryable(err) {
			return err
		}
		if n := fileSize(fe.part); n > best {
			streak, best = 0, n
			if fe.probe {
				// Ask at once whether the bytes that came are all: that
				// is no retry.
				continue
			}
		}
		if streak >= retries {
			kept := ""
			if fileSize(fe.part) > 0 {
				kept = fmt.Sprintf("; %s is kept for the next run to continue", fe.part)
			}
			return fmt.Errorf("download: %s: %w (the last of %d attempt(s): %v)%s",
				fe.f.SafeURL(), ErrUnavailable, fe.calls, err, kept)
		}
		streak++
		wait := fe.backoff(streak)
		fe.opt.event(Event{Kind: "retry", File: fe.f, Attempt: fe.calls, Offset: fileSize(fe.part), Total: fe.total, Wait: wait, Err: err})
		if err := fe.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

func (fe *fetcher) backoff(n int) time.Duration {
	if fe.opt.Backoff != nil {
		return fe.opt.Backoff(n)
	}
	d := 2 * time.Second << min(n-1, 6)
	return min(d, 2*time.Minute)
}

func (fe *fetcher) sleep(ctx context.Context, d time.Duration) error {
	if fe.opt.Sleep != nil {
		return fe.opt.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryError marks a failure a later attempt may not meet.
type retryError struct{ err error }

func (e retryError) Error() string { return e.err.Error() }
func (e retryError) Unwrap() error { return e.err }

func retryable(err error) bool {
	var r retryError
	return errors.As(err, &r) || errors.Is(err, errIncomplete)
}

// defaultClient serves http, https and file URLs.
var defaultClient = func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = time.Minute
	t.RegisterProtocol("file", http.NewFileTransport(http.Dir("/")))
	return &http.Client{Transport: t}
}()

// once makes one request and appends what it brings to the .part file. It
// reports whether the file is complete.
func (fe *fetcher) once(ctx context.Context) (bool, error) {
	out, err := fe.openPart()
	if err != nil {
		return false, err
	}
	defer out.Close()
	st, err := out.Stat()
	if err != nil {
		return false, err
	}
	off := st.Size()
	probe := fe.probe
	fe.probe = false
	if off > 0 && !probe && !fe.resumable() {
		fe.opt.event(Event{Kind: "restart", File: fe.f, Attempt: fe.calls + 1, Offset: off, Total: fe.total,
			Err: fmt.Errorf("%s: %w", fe.f.SafeURL(), errUnvalidated)})
		if err := out.Truncate(0); err != nil {
			return false, err
		}
		off = 0
	}

	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, fe.f.URL, nil)
	if err != nil {
		return false, fmt.Errorf("%w: %s: %v", ErrUsage, fe.f.SafeURL(), scrub(err))
	}
	if off > 0 || probe {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", off))
		if v := fe.ifRange(); v != "" {
			req.Header.Set("If-Range", v)
		}
	}
	// Ask for the bytes as stored: a transport must not inflate a .gz
	// whose server labels it Content-Encoding: gzip.
	req.Header.Set("Accept-Encoding", "identity")
	client := fe.opt.Client
	if client == nil {
		client = defaultClient
	}
	if client.CheckRedirect == nil {
		c := *client
		c.CheckRedirect = limitRedirects
		client = &c
	}
	fe.calls++
	fe.opt.event(Event{Kind: "request", File: fe.f, Attempt: fe.calls, Offset: off, Total: fe.total, Resumed: off > 0})
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, errRedirectLoop) {
			return false, refusal(fmt.Sprintf("download: %s: %v, a loop at the server that a retry will not undo", fe.f.SafeURL(), errRedirectLoop))
		}
		return false, retryError{fmt.Errorf("%s: %w", fe.f.SafeURL(), scrub(err))}
	}
	defer resp.Body.Close()

	switch c := resp.StatusCode; {
	case c == http.StatusOK:
		// The whole file, whether or not a range was asked for: a server
		// whose file is not the one If-Range names, or that ignores
		// Range, starts again from byte 0.
		fe.total = resp.ContentLength
		if fe.total < 0 {
			// The file transport leaves the parsed length unset.
			if n, err := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
				fe.total = n
			}
		}
		if fe.total < 0 {
			fe.total = fe.f.Size
		}
		if off > 0 {
			why := fe.changed(resp, fe.total)
			if why != "" {
				why = "the file at the URL is not the one the bytes came from: " + why
			} else {
				why = "the server ignores Range"
			}
			fe.opt.event(Event{Kind: "restart", File: fe.f, Attempt: fe.calls, Offset: off, Total: fe.total,
				Err: fmt.Errorf("%s: %s", fe.f.SafeURL(), why)})
		}
		off = 0
		if err := fe.record(resp, fe.total); err != nil {
			return false, err
		}
	case c == http.StatusPartialContent:
		start, total, ok := contentRange(resp.Header.Get("Content-Range"))
		if !ok || start != off {
			// Bytes for another offset than asked: start afresh.
			if err := out.Truncate(0); err != nil {
				return false, err
			}
			return false, retryError{fmt.Errorf("%s: asked for bytes from %d, got Content-Range %q", fe.f.SafeURL(), off, resp.Header.Get("Content-Range"))}
		}
		if why := fe.changed(resp, total); why != "" {
			// A server that honours Range but not If-Range.
			if err := out.Truncate(0); err != nil {
				return false, err
			}
			os.Remove(fe.meta)
			fe.rec = nil
			return false, retryError{fmt.Errorf("%s: the file at the URL is not the one the bytes came from (%s): starting again from byte 0", fe.f.SafeURL(), why)}
		}
		if probe && !fe.resumable() {
			// The body before ended without a length and was cut: its
			// rest may be of another file.
			if err := out.Truncate(0); err != nil {
				return false, err
			}
			return false, retryError{fmt.Errorf("%s: the body ended at byte %d with no length announced, and the file goes on: starting again from byte 0 (%v)",
				fe.f.SafeURL(), off, errUnvalidated)}
		}
		if total < 0 {
			// "*": the length announced first, else the known one.
			total = fe.f.Size
			if m := fe.rec; m != nil && m.Size >= 0 {
				total = m.Size
			}
		}
		fe.total = total
		fe.resumed = fe.resumed || (off > 0 && fe.calls == 1)
		if fe.rec == nil || fe.rec.URL != fe.f.SafeURL() {
			// A .part without a record, or from a mirror with the same
			// Last-Modified: from now on, this URL's validators.
			if err := fe.record(resp, total); err != nil {
				return false, err
			}
		}
	case c == http.StatusRequestedRangeNotSatisfiable:
		// The .part may already hold the whole file (an earlier run died
		// between the last byte and the rename).
		_, total, ok := contentRange(resp.Header.Get("Content-Range"))
		if !ok && req.Header.Get("If-Range") != "" {
			// No length given (RFC 9110 15.5.17 asks for one), but the
			// validator matched, or the answer would be a 200: the file
			// the off bytes came from has no byte at off.
			total, ok = off, true
		}
		if ok && total == off {
			fe.total = total
			fe.resumed = fe.calls == 1
			return true, nil
		}
		if err := out.Truncate(0); err != nil {
			return false, err
		}
		return false, retryError{fmt.Errorf("%s: range from byte %d not satisfiable (%q): starting again", fe.f.SafeURL(), off, resp.Header.Get("Content-Range"))}
	case c == http.StatusNoContent:
		return false, fmt.Errorf("download: %s: empty: %s answered %s: %w", fe.f.Name, fe.f.SafeURL(), resp.Status, ErrCorrupt)
	case c == http.StatusTooManyRequests || c == http.StatusRequestTimeout || c >= 500:
		return false, retryError{fmt.Errorf("%s: %s", fe.f.SafeURL(), resp.Status)}
	default:
		return false, fe.refused(req, resp)
	}
	if fe.f.Size >= 0 && fe.total >= 0 && fe.total != fe.f.Size {
		return false, fmt.Errorf("download: %s: the server announces %d bytes, %s is known to have %d: %w",
			fe.f.SafeURL(), fe.total, fe.f.Name, fe.f.Size, ErrMismatch)
	}
	if err := out.Truncate(off); err != nil {
		return false, err
	}
	if _, err := out.Seek(off, io.SeekStart); err != nil {
		return false, err
	}

	stall := cmpDur(fe.opt.StallTimeout, 2*time.Minute)
	watchdog := time.AfterFunc(stall, cancel)
	defer watchdog.Stop()
	buf := make([]byte, 1<<20)
	done := off
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			watchdog.Reset(stall)
			if _, err := out.Write(buf[:n]); err != nil {
				return false, err
			}
			done += int64(n)
			if fe.opt.Progress != nil {
				fe.opt.Progress(fe.f, done, fe.total)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			if actx.Err() != nil {
				rerr = fmt.Errorf("no byte for %v", stall)
			}
			return false, retryError{fmt.Errorf("%s: at byte %d: %w", fe.f.SafeURL(), done, rerr)}
		}
	}
	if err := out.Sync(); err != nil {
		return false, err
	}
	if fe.total < 0 {
		// A connection closed without a length looks like the end of
		// the file; a 416 to the bytes after it is the proof.
		fe.probe = true
		return false, retryError{fmt.Errorf("%s: the body ended at byte %d with no length announced: %w", fe.f.SafeURL(), done, errUnconfirmed)}
	}
	return done == fe.total, nil
}

// errUnconfirmed: a body without an announced length ended, and the server
// did not (yet) answer the request for the bytes after it with 416.
var errUnconfirmed = errors.New("its end is confirmed only by a 416 answer to a Range request from there")

// errUnvalidated says why bytes of an earlier attempt are not continued.
var errUnvalidated = errors.New("nothing tells whether the file there is still the one the bytes fetched so far came from " +
	"(the server sent no ETag and no Last-Modified) and no SHA-256 is known to check the whole, so they are thrown away")

// resumable says whether the bytes in the .part may be continued: the
// validators recorded with them let If-Range or the 206's own validators
// tell a changed file, or a known SHA-256 checks the whole at the end. A
// .part without a .part.meta is continued as is (Fetch's doc).
func (fe *fetcher) resumable() bool {
	m := fe.rec
	return fe.f.SHA256 != "" || m == nil || m.ETag != "" || m.LastModified != ""
}

// scrub removes user names and passwords from the URL a *url.Error names.
func scrub(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = stripUserinfo(ue.URL)
	}
	return err
}

// errRedirectLoop: more redirects than a client follows.
var errRedirectLoop = errors.New("more than 10 redirects")

func limitRedirects(_ *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errRedirectLoop
	}
	return nil
}

// refusal is a final answer of the server other than a plain 404: it
// counts as ErrNotFound (a retry gets the same), in its own words.
type refusal string

func (e refusal) Error() string        { return string(e) }
func (e refusal) Is(target error) bool { return target == ErrNotFound }

// refused is the error of a final answer resp to req.
func (fe *fetcher) refused(req *http.Request, resp *http.Response) error {
	u := fe.f.SafeURL()
	switch c := resp.StatusCode; {
	case c == http.StatusNotFound && req.URL.Scheme == "file":
		// A folder missing from a mirror on disk is most often a disk
		// not mounted yet; a file missing from a folder that is there
		// is missing from the mirror.
		dir := filepath.Dir(filepath.FromSlash(req.URL.Path))
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("download: %s: %w: the mirror has no folder %s (a disk not mounted yet?); a later run may find it", u, ErrUnavailable, dir)
		}
	case c == http.StatusUnauthorized || c == http.StatusProxyAuthRequired:
		return refusal(fmt.Sprintf("download: %s: %s: the server wants credentials (a --mirror URL https://USER:PASSWORD@HOST/... sends them); a retry without them gets the same answer", u, resp.Status))
	case c >= 300 && c < 400:
		return refusal(fmt.Sprintf("download: %s: %s with no Location to follow; a retry gets the same answer", u, resp.Status))
	}
	return fmt.Errorf("download: %s: %s: %w (check the release, the category and --mirror)", u, resp.Status, ErrNotFound)
}

func cmpDur(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// contentRange parses "bytes START-END/TOTAL" or "bytes */TOTAL"; total is
// -1 for "*".
func contentRange(h string) (start, total int64, ok bool) {
	rest, found := strings.CutPrefix(h, "bytes ")
	if !found {
		return 0, 0, false
	}
	span, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	total = -1
	if tot != "*" {
		t, err := strconv.ParseInt(tot, 10, 64)
		if err != nil || t < 0 {
			return 0, 0, false
		}
		total = t
	}
	if span == "*" {
		return 0, total, true
	}
	a, _, found := strings.Cut(span, "-")
	s, err := strconv.ParseInt(a, 10, 64)
	if !found || err != nil {
		return 0, 0, false
	}
	return s, total, true
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

// recordBytes is the size of one .b record: the ASIN, then the features
// (imagefeat's format).
const recordBytes = imagefeat.ASINLen + 4*imagefeat.Dim

// verify reads the complete .part file once: its SHA-256, its size against
// the announced and the known one, and its format (readThrough).
func (fe *fetcher) verify() (sum string, n int64, err error) {
	in, err := sidefile.Open(fe.part, os.O_RDONLY, 0)
	if err != nil {
		return "", 0, err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return "", 0, err
	}
	n = st.Size()
	name := fe.f.Name
	switch {
	case fe.total >= 0 && n != fe.total:
		return "", n, fmt.Errorf("download: %s: %d bytes, the server announced %d: %w", name, n, fe.total, ErrMismatch)
	case fe.f.Size >= 0 && n != fe.f.Size:
		return "", n, fmt.Errorf("download: %s: %d bytes, known to have %d: %w", name, n, fe.f.Size, ErrMismatch)
	}
	sum, err = readThrough(in, name, n)
	if err != nil {
		return sum, n, err
	}
	if fe.f.SHA256 != "" && sum != fe.f.SHA256 {
		return sum, n, fmt.Errorf("download: %s: sha256 %s, expected %s: %w", name, sum, fe.f.SHA256, ErrMismatch)
	}
	return sum, n, nil
}

// readThrough reads the n bytes of a file called name once and returns
// their SHA-256, checking that the file is whole by its format: not empty;
// a .gz a gzip stream read to its end, holding no second gzip stream (a
// server that compressed it again under Content-Encoding: gzip); a .b a
// whole number of records, counted after inflating it when it is gzip, as
// imagefeat reads it. Such failures are ErrCorrupt.
func readThrough(in io.Reader, name string, n int64) (string, error) {
	if n == 0 {
		return "", fmt.Errorf("download: %s: empty: %w", name, ErrCorrupt)
	}
	h := sha256.New()
	// Every byte read is hashed on its way, the rest after.
	br := bufio.NewReader(io.TeeReader(in, h))
	magic, _ := br.Peek(2)
	gz := rawio.IsGzip(magic)
	isB := strings.HasSuffix(name, ".b")
	switch {
	case strings.HasSuffix(name, ".gz") || (isB && gz):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return "", fmt.Errorf("download: %s: not a gzip stream: %v: %w", name, err, ErrCorrupt)
		}
		zbr := bufio.NewReader(zr)
		if inner, _ := zbr.Peek(2); !isB && rawio.IsGzip(inner) {
			return "", fmt.Errorf("download: %s: a gzip stream inside the gzip stream (a server that compressed it again, Content-Encoding: gzip): %w", name, ErrCorrupt)
		}
		m, err := io.Copy(io.Discard, zbr)
		if err != nil {
			return "", fmt.Errorf("download: %s: gzip stream broken after %d uncompressed bytes: %v: %w", name, m, err, ErrCorrupt)
		}
		if isB && m%recordBytes != 0 {
			return "", fmt.Errorf("download: %s: gzip stream of %d bytes, not a whole number of %d-byte records (ASIN and %d float32): %w",
				name, m, recordBytes, imagefeat.Dim, ErrCorrupt)
		}
	case isB && n%recordBytes != 0:
		return "", fmt.Errorf("download: %s: %d bytes is not a whole number of %d-byte records (ASIN and %d float32): %w",
			name, n, recordBytes, imagefeat.Dim, ErrCorrupt)
	}
	if _, err := io.Copy(h, in); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

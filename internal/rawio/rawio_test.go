package rawio

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

var errTest = errors.New("test: corrupt")

// gz compresses each part as a gzip member of its own, one after another.
func gz(t *testing.T, parts ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, p := range parts {
		w := gzip.NewWriter(&buf)
		if _, err := io.WriteString(w, p); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// tempFile is a new file holding data.
func tempFile(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// numbered is n short lines of varying length: enough text for several
// read-ahead buffers at n in the hundred thousands.
func numbered(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteByte('\n')
	}
	return b.String()
}

func TestOpen(t *testing.T) {
	long := numbered(300000)
	tests := []struct {
		name     string
		data     []byte
		want     string
		wantGzip bool
	}{
		{name: "empty", data: nil, want: ""},
		{name: "one byte", data: []byte{0x1f}, want: "\x1f"},
		{name: "plain", data: []byte("a\nb\n"), want: "a\nb\n"},
		{name: "gzip", data: gz(t, "a\nb\n"), want: "a\nb\n", wantGzip: true},
		{name: "gzip of nothing", data: gz(t, ""), want: "", wantGzip: true},
		{name: "concatenated members", data: gz(t, "a\n", "b\n"), want: "a\nb\n", wantGzip: true},
		{name: "gzip over several buffers", data: gz(t, long), want: long, wantGzip: true},
		{name: "plain over several buffers", data: []byte(long), want: long},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Open(tempFile(t, tc.data), errTest)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Gzip() != tc.wantGzip {
				t.Errorf("Gzip() = %v, want %v", r.Gzip(), tc.wantGzip)
			}
			got, err := io.ReadAll(r)
			if err != nil || string(got) != tc.want {
				t.Errorf("read %d bytes, %v; want %d bytes", len(got), err, len(tc.want))
			}
		})
	}
}

func TestOpenMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope")
	_, err := Open(path, errTest)
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != path {
		t.Errorf("Open: %v, want the not-exist *fs.PathError of %s", err, path)
	}
}

// failAfter gives the first n bytes of data, then fails with err.
func failAfter(data []byte, n int, err error) io.Reader {
	return io.MultiReader(bytes.NewReader(data[:n]), errReader{err})
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestErrors: an error of the source comes out as the source gave it, even
// through the decompressor; damage to the stream is a *CorruptError wrapping
// the caller's sentinel and the decompressor's error.
func TestErrors(t *testing.T) {
	boom := errors.New("boom")
	whole := gz(t, numbered(100000))
	flipped := bytes.Clone(whole)
	flipped[len(flipped)-8] ^= 0xff // CRC-32 in the trailer
	tests := []struct {
		name    string
		src     io.Reader
		openErr error // want from NewReader; nil: it succeeds
		readErr error // want from Read at the end
		corrupt bool  // the error is a *CorruptError wrapping errTest
	}{
		{name: "source fails at once", src: errReader{boom}, openErr: boom},
		{name: "plain source fails", src: failAfter([]byte("plain text"), 10, boom), readErr: boom},
		{name: "source fails in the gzip header", src: failAfter(whole, 5, boom), openErr: boom},
		{name: "source fails under the gzip stream", src: failAfter(whole, len(whole)/2, boom), readErr: boom},
		{name: "bad gzip header", src: bytes.NewReader([]byte{0x1f, 0x8b, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}), openErr: gzip.ErrHeader, corrupt: true},
		{name: "gzip header cut", src: bytes.NewReader(whole[:5]), openErr: io.ErrUnexpectedEOF, corrupt: true},
		{name: "gzip stream cut", src: bytes.NewReader(whole[:len(whole)/2]), readErr: io.ErrUnexpectedEOF, corrupt: true},
		{name: "bad checksum", src: bytes.NewReader(flipped), readErr: gzip.ErrChecksum, corrupt: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check := func(what string, err, want error) {
				t.Helper()
				var ce *CorruptError
				isCorrupt := errors.As(err, &ce)
				switch {
				case tc.corrupt && (!isCorrupt || ce.Err != want || !errors.Is(err, errTest)):
					t.Fatalf("%s: %v, want a *CorruptError of %v wrapping errTest", what, err, want)
				case !tc.corrupt && err != want:
					t.Fatalf("%s: %v, want exactly %v", what, err, want)
				}
			}
			r, err := NewReader(tc.src, errTest)
			if tc.openErr != nil {
				check("NewReader", err, tc.openErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			_, err = io.ReadAll(r)
			check("Read", err, tc.readErr)
		})
	}
}

func TestCorruptErrorMessage(t *testing.T) {
	err := &CorruptError{Err: gzip.ErrChecksum, Sentinel: errTest}
	if got, want := err.Error(), "corrupt or truncated gzip stream: gzip: invalid checksum"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if err := (&CorruptError{Err: io.ErrUnexpectedEOF}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%v without a sentinel does not wrap its error", err)
	}
}

// TestCloseEarly stops reading part way: Close must stop the decompressing
// goroutine, and later reads must fail rather than hang.
func TestCloseEarly(t *testing.T) {
	r, err := Open(tempFile(t, gz(t, numbered(300000))), errTest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(r, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	<-r.ahead.exited
	if _, err := r.Read(make([]byte, 10)); !errors.Is(err, os.ErrClosed) {
		t.Errorf("read after close: %v", err)
	}
	if err := r.Close(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("second close: %v", err)
	}
}

// TestReadAheadOrder checks that data read before an error all arrives
// before the error, across buffer boundaries.
func TestReadAheadOrder(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), aheadSize/3) // ~1.3 buffers
	boom := errors.New("boom")
	ra := newReadAhead(io.MultiReader(bytes.NewReader(data), errReader{boom}))
	defer ra.stop()
	got, err := io.ReadAll(ra)
	if err != boom || !bytes.Equal(got, data) {
		t.Errorf("read %d bytes, %v; want %d bytes, boom", len(got), err, len(data))
	}
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

// TestReadAheadNoProgress: a source that keeps returning nothing ends with
// io.ErrNoProgress instead of spinning.
func TestReadAheadNoProgress(t *testing.T) {
	ra := newReadAhead(emptyReader{})
	defer ra.stop()
	if _, err := io.ReadAll(ra); err != io.ErrNoProgress {
		t.Errorf("read: %v, want io.ErrNoProgress", err)
	}
}

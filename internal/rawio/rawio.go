package rawio

import (
	"bufio"
	"errors"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
)

// bufSize is the buffer in front of the source: the gzip sniff peeks into
// it and the decompressor reads its input from it.
const bufSize = 256 << 10

// IsGzip reports whether b starts with the gzip magic bytes.
func IsGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// CorruptError is a compressed stream that is damaged or ends early (bad
// header, bad checksum, corrupt deflate data, unexpected EOF); an I/O error
// of the source under the stream is never one.
type CorruptError struct {
	Err      error // the decompressor's error
	Sentinel error // the caller's sentinel, or nil; wrapped beside Err
}

func (e *CorruptError) Error() string { return "corrupt or truncated gzip stream: " + e.Err.Error() }

func (e *CorruptError) Unwrap() []error {
	if e.Sentinel == nil {
		return []error{e.Err}
	}
	return []error{e.Sentinel, e.Err}
}

// Reader delivers the content of a source, decompressed when it is gzip.
// Concatenated gzip members are read as one stream.
//
// Read errors: damaged compressed data is a *CorruptError; an error of the
// source is returned as the source gave it (for a file, its *fs.PathError).
// Reads after Close fail with os.ErrClosed.
type Reader struct {
	plain  io.Reader  // the buffered source, when it is not gzip
	ahead  *readAhead // the inflating goroutine, when it is
	file   *os.File   // closed by Close: Open opened it
	closed bool
}

// Open opens the file at path as NewReader does; Close closes the file.
// Errors opening or sniffing it are the *fs.PathError of os.Open or of the
// first read; a damaged gzip header is a *CorruptError.
func Open(path string, corrupt error) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, corrupt)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

// NewReader reads the first bytes of src and, when they are the gzip magic,
// reads the gzip header and starts a goroutine that inflates at most 1 MiB
// ahead of Read; Close stops it. A plain source is read directly: there a
// read-ahead goroutine costs more than it saves (imagefeat measured 5 GB/s
// direct, 1.5 GB/s through the hand-off). Every *CorruptError wraps
// corrupt, so that errors.Is(err, corrupt) holds; Close does not close src.
func NewReader(src io.Reader, corrupt error) (*Reader, error) {
	br := bufio.NewReaderSize(tagged{src}, bufSize)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, untag(err)
	}
	if !IsGzip(magic) {
		return &Reader{plain: br}, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, classify(err, corrupt)
	}
	return &Reader{ahead: newReadAhead(inflater{zr, corrupt})}, nil
}

// Gzip reports whether the source is gzip-compressed.
func (r *Reader) Gzip() bool { return r.ahead != nil }

func (r *Reader) Read(p []byte) (int, error) {
	if r.closed {
		return 0, os.ErrClosed
	}
	if r.ahead != nil {
		return r.ahead.Read(p)
	}
	n, err := r.plain.Read(p)
	if err != nil && err != io.EOF {
		err = untag(err)
	}
	return n, err
}

// Close stops the inflating goroutine, if any, and closes the file Open
// opened. A second Close returns os.ErrClosed.
func (r *Reader) Close() error {
	if r.closed {
		return os.ErrClosed
	}
	r.closed = true
	if r.ahead != nil {
		r.ahead.stop()
	}
	if r.file != nil {
		return r.file.Close()
	}
	return nil
}

// tagged marks the source's errors, so that an I/O error seen through the
// decompressor is not mistaken for corrupt data. (Telling them apart by
// type, say *fs.PathError, would misjudge a source that is not a file.)
type tagged struct{ r io.Reader }

type sourceErr struct{ err error }

func (e sourceErr) Error() string { return e.err.Error() }
func (e sourceErr) Unwrap() error { return e.err }

func (t tagged) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF {
		err = sourceErr{err}
	}
	return n, err
}

func untag(err error) error {
	var se sourceErr
	if errors.As(err, &se) {
		return se.err
	}
	return err
}

// classify returns a decompressor's error: the source's own error untagged, or
// a *CorruptError.
func classify(err, corrupt error) error {
	var se sourceErr
	if errors.As(err, &se) {
		return se.err
	}
	return &CorruptError{Err: err, Sentinel: corrupt}
}

// inflater is the decompressor with its errors sorted.
type inflater struct {
	zr      *gzip.Reader
	corrupt error
}

func (z inflater) Read(p []byte) (int, error) {
	n, err := z.zr.Read(p)
	if err != nil && err != io.EOF {
		err = classify(err, z.corrupt)
	}
	return n, err
}

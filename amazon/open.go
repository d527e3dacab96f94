package amazon

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
)

// ErrCorrupt marks a compressed stream that is truncated or damaged.
var ErrCorrupt = errors.New("amazon: corrupt or truncated gzip stream")

// MaxLineBytes is the longest line the readers accept (newline excluded);
// a longer line is rejected, not read into memory.
const MaxLineBytes = 16 << 20

// Open opens the file at path and returns its content, decompressed when it
// starts with the gzip magic bytes (whatever its name says). Concatenated
// gzip members are read as one stream. Damaged compressed data surfaces as a
// Read error wrapping ErrCorrupt, never as a short stream.
//
// A compressed file is decompressed ahead of the reader on another
// goroutine (at most 1 MiB ahead), so that decompression and parsing use two
// cores; Close stops it. The bytes delivered are the same either way.
func Open(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("amazon: %w", err)
	}
	br := bufio.NewReaderSize(fileReader{f}, 256<<10)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		f.Close()
		return nil, fmt.Errorf("amazon: %w", unwrapFile(err)) // names the path
	}
	if !bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		return readCloser{br, f}, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		f.Close()
		if isFileErr(err) {
			return nil, fmt.Errorf("amazon: %w", unwrapFile(err))
		}
		return nil, fmt.Errorf("amazon: %s: %w", path, &gzipError{err})
	}
	return newReadahead(&gunzipReader{zr: zr, f: f}), nil
}

type readCloser struct {
	io.Reader
	f *os.File
}

func (r readCloser) Read(p []byte) (int, error) {
	n, err := r.Reader.Read(p)
	return n, unwrapFile(err)
}

func (r readCloser) Close() error { return r.f.Close() }

// fileReader tags errors of the underlying file, so that an I/O error seen
// through the decompressor is not mistaken for corrupt data.
type fileReader struct{ f *os.File }

type fileErr struct{ err error }

func (e fileErr) Error() string { return e.err.Error() }
func (e fileErr) Unwrap() error { return e.err }

func (r fileReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	if err != nil && err != io.EOF {
		err = fileErr{err}
	}
	return n, err
}

func isFileErr(err error) bool {
	var fe fileErr
	return errors.As(err, &fe)
}

func unwrapFile(err error) error {
	var fe fileErr
	if errors.As(err, &fe) {
		return fe.err
	}
	return err
}

type gunzipReader struct {
	zr *gzip.Reader
	f  *os.File
}

func (g *gunzipReader) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	switch {
	case err == nil || err == io.EOF:
	case isFileErr(err):
		err = unwrapFile(err)
	default:
		err = &gzipError{err}
	}
	return n, err
}

func (g *gunzipReader) Close() error {
	g.zr.Close()
	return g.f.Close()
}

// readahead runs Read of its source on a goroutine, a fixed number of
// buffers ahead of the consumer.
type readahead struct {
	src    io.ReadCloser
	full   chan chunk  // read by the goroutine, in order
	free   chan []byte // consumed, for the goroutine to refill
	done   chan struct{}
	exit   chan struct{} // closed when the goroutine has returned
	cur    chunk
	pos    int
	closed bool
}

type chunk struct {
	b   []byte
	err error
}

const (
	aheadBuffers = 4
	aheadSize    = 256 << 10
)

func newReadahead(src io.ReadCloser) *readahead {
	r := &readahead{
		src:  src,
		full: make(chan chunk, aheadBuffers),
		free: make(chan []byte, aheadBuffers),
		done: make(chan struct{}),
		exit: make(chan struct{}),
	}
	for range aheadBuffers {
		r.free <- make([]byte, aheadSize)
	}
	go r.run()
	return r
}

func (r *readahead) run() {
	defer close(r.exit)
	for {
		var buf []byte
		select {
		case buf = <-r.free:
		case <-r.done:
			return
		}
		// Fill the buffer, so that chunks are large whatever the
		// decompressor's read sizes.
		n, err := io.ReadFull(r.src, buf)
		if err == io.ErrUnexpectedEOF && n > 0 {
			// Short final read; the next ReadFull reports how it ended.
			// An unexpected EOF from the decompressor itself is wrapped
			// in gzipError, so it cannot be confused with this one.
			err = nil
		}
		select {
		case r.full <- chunk{buf[:n], err}:
		case <-r.done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (r *readahead) Read(p []byte) (int, error) {
	if r.closed {
		return 0, os.ErrClosed
	}
	for r.pos == len(r.cur.b) {
		if r.cur.err != nil {
			return 0, r.cur.err
		}
		if r.cur.b != nil {
			r.free <- r.cur.b[:cap(r.cur.b)]
		}
		r.cur, r.pos = <-r.full, 0
	}
	n := copy(p, r.cur.b[r.pos:])
	r.pos += n
	return n, nil
}

func (r *readahead) Close() error {
	if r.closed {
		return os.ErrClosed
	}
	r.closed = true
	close(r.done)
	<-r.exit
	return r.src.Close()
}

// gzipError is damaged compressed data; it wraps ErrCorrupt and the
// decompressor's error.
type gzipError struct{ err error }

func (e *gzipError) Error() string   { return "corrupt or truncated gzip stream: " + e.err.Error() }
func (e *gzipError) Unwrap() []error { return []error{ErrCorrupt, e.err} }

// streamError is a read failure part way through a file.
type streamError struct {
	msg string
	err []error
}

func (e *streamError) Error() string   { return e.msg }
func (e *streamError) Unwrap() []error { return e.err }

// readError names the file and how far reading got.
func readError(base string, lines int64, err error) error {
	var ge *gzipError
	if errors.As(err, &ge) {
		return &streamError{
			msg: fmt.Sprintf("amazon: %s: corrupt or truncated gzip stream after %d complete lines: %v", base, lines, ge.err),
			err: []error{ErrCorrupt, ge.err},
		}
	}
	return &streamError{
		msg: fmt.Sprintf("amazon: %s: read error after %d complete lines: %v", base, lines, err),
		err: []error{err},
	}
}

// lineReader splits a stream into lines without copying them, holding at
// most one line (up to MaxLineBytes) plus one read's worth in memory.
type lineReader struct {
	r                io.Reader
	buf              []byte
	start, end, scan int   // unread data is buf[start:end]; no '\n' in buf[start:scan]
	off              int64 // stream offset of buf[start]
	bytes            int64 // bytes read from r
	err              error // sticky error from r
	tooLong          bool  // the last line returned was cut to an excerpt
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: r, buf: make([]byte, 256<<10)}
}

// next returns the next line (without its '\n') and its offset; the line is
// valid until the following call. At the end of the stream it returns a nil
// line; a read error is returned once the complete lines before it are out,
// and a partial line before a read error is dropped, not returned.
func (l *lineReader) next() (line []byte, off int64, err error) {
	l.tooLong = false
	for {
		if i := bytes.IndexByte(l.buf[l.scan:l.end], '\n'); i >= 0 {
			nl := l.scan + i
			off := l.off
			return l.take(nl, nl+1), off, nil
		}
		l.scan = l.end
		if l.err != nil {
			if l.err != io.EOF {
				return nil, 0, l.err
			}
			if l.start == l.end {
				return nil, l.off, nil
			}
			off := l.off
			return l.take(l.end, l.end), off, nil
		}
		if l.end-l.start > MaxLineBytes {
			return l.discard()
		}
		l.fill()
	}
}

// take returns buf[start:end] and moves past it to next.
func (l *lineReader) take(end, next int) []byte {
	line := l.buf[l.start:end]
	l.off += int64(next - l.start)
	l.start, l.scan = next, next
	return line
}

// fill reads once, making room first.
func (l *lineReader) fill() {
	if l.start > 0 && (l.end == len(l.buf) || l.start >= len(l.buf)/2) {
		n := copy(l.buf, l.buf[l.start:l.end])
		l.scan -= l.start
		l.start, l.end = 0, n
	}
	if l.end == len(l.buf) {
		nb := make([]byte, min(2*len(l.buf), MaxLineBytes+1))
		copy(nb, l.buf[:l.end])
		l.buf = nb
	}
	n, err := l.r.Read(l.buf[l.end:])
	l.end += n
	l.bytes += int64(n)
	if err != nil {
		l.err = err
	}
}

// discard skips the rest of an overlong line, returning its start as the
// line, for the excerpt.
func (l *lineReader) discard() ([]byte, int64, error) {
	head := bytes.Clone(l.buf[l.start : l.start+256])
	off := l.off
	for {
		if i := bytes.IndexByte(l.buf[l.start:l.end], '\n'); i >= 0 {
			l.take(l.start+i, l.start+i+1)
			break
		}
		l.off += int64(l.end - l.start)
		l.start, l.end, l.scan = 0, 0, 0
		if l.err == io.EOF {
			break
		}
		if l.err != nil {
			return nil, 0, l.err
		}
		l.fill()
	}
	l.tooLong = true
	return head, off, nil
}

// excerpt is the first 200 bytes of a line as valid UTF-8.
func excerpt(line []byte) string {
	const n = 200
	if len(line) > n {
		cut := n
		for cut > n-utf8.UTFMax && !utf8.RuneStart(line[cut]) {
			cut--
		}
		if !utf8.RuneStart(line[cut]) {
			cut = n // not UTF-8 around here anyway
		}
		line = line[:cut]
	}
	return string(bytes.ToValidUTF8(line, []byte("\uFFFD")))
}

package amazon

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"monomer/internal/rawio"
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
	r, err := rawio.Open(path, ErrCorrupt)
	var ce *rawio.CorruptError
	switch {
	case errors.As(err, &ce):
		return nil, fmt.Errorf("amazon: %s: %w", path, err)
	case err != nil:
		return nil, fmt.Errorf("amazon: %w", err) // names the path
	}
	return r, nil
}

// streamError is a read failure part way through a file.
type streamError struct {
	msg string
	err []error
}

func (e *streamError) Error() string   { return e.msg }
func (e *streamError) Unwrap() []error { return e.err }

// readError names the file and how far reading got: the complete lines
// and the uncompressed byte offset where they end (the damage is at or
// after it).
func readError(base string, lines, off int64, err error) error {
	var ce *rawio.CorruptError
	if errors.As(err, &ce) {
		return &streamError{
			msg: fmt.Sprintf("amazon: %s: corrupt or truncated gzip stream after %d complete lines (uncompressed byte %d): %v", base, lines, off, ce.Err),
			err: []error{ErrCorrupt, ce.Err},
		}
	}
	return &streamError{
		msg: fmt.Sprintf("amazon: %s: read error after %d complete lines (uncompressed byte %d): %v", base, lines, off, err),
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

package imagefeat

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Writer writes a plain (uncompressed) .b file.
type Writer struct {
	name  string
	f     *os.File // nil when the caller owns the destination
	bw    *bufio.Writer
	dim   int
	rec   []byte
	off   int64
	err   error // sticky
	close bool
}

// Create creates (or truncates) path and returns a Writer of records of dim
// values; dim <= 0 means Dim (4096). The caller must Close it.
func Create(path string, dim int) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("imagefeat: %w", err)
	}
	w := NewWriter(f, filepath.Base(path), dim)
	w.f = f
	return w, nil
}

// NewWriter writes records of dim values (dim <= 0 means Dim) to dst, e.g. a
// gzip stream; name is the file name used in errors. Close flushes but does
// not close dst.
func NewWriter(dst io.Writer, name string, dim int) *Writer {
	if dim <= 0 {
		dim = Dim
	}
	return &Writer{
		name: name,
		bw:   bufio.NewWriterSize(dst, chunkBytes),
		dim:  dim,
		rec:  make([]byte, RecordSize(dim)),
	}
}

// Write appends one record. The ASIN must be 1 to 10 printable ASCII bytes
// without spaces (a space would cut it when read back); vec must have the
// Writer's dimension and hold finite values only, so every file written reads
// back without error.
func (w *Writer) Write(asin string, vec []float32) error {
	if w.err != nil {
		return w.err
	}
	if w.close {
		return fmt.Errorf("imagefeat: %s: write after Close", w.name)
	}
	if len(asin) == 0 || len(asin) > ASINLen {
		return fmt.Errorf("imagefeat: %s: %w at byte %d: %q is %d bytes, want 1 to %d",
			w.name, ErrASIN, w.off, asin, len(asin), ASINLen)
	}
	for i := 0; i < len(asin); i++ {
		if b := asin[i]; b <= 0x20 || b > 0x7e {
			return fmt.Errorf("imagefeat: %s: %w at byte %d: %q has byte %#02x at position %d",
				w.name, ErrASIN, w.off, asin, b, i)
		}
	}
	if len(vec) != w.dim {
		return fmt.Errorf("imagefeat: %s: %w at byte %d (asin %s): %d values, want %d",
			w.name, ErrDim, w.off, asin, len(vec), w.dim)
	}
	n := copy(w.rec, asin)
	for i := n; i < ASINLen; i++ {
		w.rec[i] = ' '
	}
	if j := firstNonFinite(vec); j >= 0 {
		return fmt.Errorf("imagefeat: %s: %w: %v at byte %d (asin %s, dim %d)",
			w.name, ErrNonFinite, vec[j], w.off+ASINLen+4*int64(j), asin, j)
	}
	encodeValues(w.rec[ASINLen:], vec)
	if _, err := w.bw.Write(w.rec); err != nil {
		w.err = fmt.Errorf("imagefeat: %s: write at byte %d: %w", w.name, w.off, err)
		return w.err
	}
	w.off += int64(len(w.rec))
	return nil
}

// Close flushes the records and closes the file Create created.
func (w *Writer) Close() error {
	if w.close {
		return w.err
	}
	w.close = true
	if w.err == nil {
		if err := w.bw.Flush(); err != nil {
			w.err = fmt.Errorf("imagefeat: %s: write at byte %d: %w", w.name, w.off, err)
		}
	}
	if w.f != nil {
		if err := w.f.Close(); err != nil && w.err == nil {
			w.err = fmt.Errorf("imagefeat: %s: %w", w.name, err)
		}
	}
	return w.err
}

package imagefeat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"monomer/imagefeat/fc7"
	"monomer/internal/par"
	"monomer/internal/rawio"
)

// Dim is the dimension of the paper's image features (FC7 of the Caffe
// reference network), declared in fc7 for the job file's checks.
const Dim = fc7.Dim

// ASINLen is the width of a record's ASIN header in bytes.
const ASINLen = 10

// RecordSize is the size in bytes of one record at dimension dim.
func RecordSize(dim int) int { return ASINLen + 4*dim }

// Sentinel errors; every error of the package that is about the content of a
// file wraps one of them (with %w) and names the file and the byte offset.
var (
	// ErrTruncated: the file ends inside a record.
	ErrTruncated = errors.New("truncated record")
	// ErrASIN: an ASIN header with a non-printable or non-ASCII byte, or an
	// empty ASIN.
	ErrASIN = errors.New("bad ASIN")
	// ErrNonFinite: a NaN or infinite feature value.
	ErrNonFinite = errors.New("non-finite value")
	// ErrCorrupt: a gzip stream that is corrupt or ends early.
	ErrCorrupt = errors.New("corrupt gzip stream")
	// ErrDim: a vector or file of the wrong dimension.
	ErrDim = errors.New("wrong dimension")
	// ErrMissingRows: Extract found no record for some wanted rows.
	ErrMissingRows = errors.New("rows without a record")
	// ErrFormat: a matrix file that is not the Arrow layout OpenMatrix reads.
	ErrFormat = errors.New("not an image-feature matrix")
)

// Option tunes Open, NewReader, ScanASINs and Extract.
type Option func(*config)

type config struct {
	dim       int
	batchRows int
	progress  func(int64)
	sha256    *string
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.dim <= 0 {
		c.dim = Dim
	}
	return c
}

// WithDim sets the number of float32 values per record of the .b file (and
// so per row of Extract's matrix). The default (and any value <= 0) is Dim,
// 4096.
func WithDim(dim int) Option { return func(c *config) { c.dim = dim } }

// WithBatchRows sets the rows per Arrow record batch that Extract writes. The
// default (and any value <= 0) is 4096 rows, fewer when a batch would exceed
// 64 MiB of features.
func WithBatchRows(n int) Option { return func(c *config) { c.batchRows = n } }

// WithProgress makes Extract and ScanASINs call f with the number of
// (uncompressed) bytes consumed since the previous call, about once per MiB.
// It never influences a result. The default is no reporting.
func WithProgress(f func(n int64)) Option { return func(c *config) { c.progress = f } }

// WithSHA256 makes Extract set *dst, once it succeeds, to the hex sha256
// of the matrix file's bytes, computed as the file is written where it can
// (a plain .b file), so a caller that needs the digest need not read the
// file again. It is ignored by the other functions.
func WithSHA256(dst *string) Option { return func(c *config) { c.sha256 = dst } }

// chunkBytes is how much the reader asks of the source at a time.
const chunkBytes = 1 << 20

// Reader streams the records of a .b file.
type Reader struct {
	name    string // file name in errors
	closer  io.Closer
	src     *rawio.Reader // the content, inflated when gzipped
	dim     int
	recSize int

	buf      []byte // chunk: whole records plus perhaps a partial one
	pos, end int    // unread bytes are buf[pos:end]
	bufOff   int64  // stream offset of buf[0]
	pending  error  // read error to report once buf holds no whole record
	gz       bool   // src decompresses
	last     int64  // offset of the record Next returned last
	records  int64
	vec      []float32
	progress func(int64)
	ctx      context.Context // checked before each chunk (Background from Open and NewReader: their caller stops)
}

// Open opens a .b file, plain or gzip-compressed, for streaming. The caller
// must Close the Reader.
func Open(path string, opts ...Option) (*Reader, error) {
	return newReaderFile(context.Background(), path, newConfig(opts))
}

// NewReader streams the records of a .b file read from src, plain or gzipped;
// name is the file name used in errors. Close does not close src.
func NewReader(src io.Reader, name string, opts ...Option) (*Reader, error) {
	return newReader(context.Background(), src, name, newConfig(opts))
}

// newReader is NewReader for the package's own loops: reading a chunk
// first checks ctx.
func newReader(ctx context.Context, src io.Reader, name string, c config) (*Reader, error) {
	rs := RecordSize(c.dim)
	per := max(1, chunkBytes/rs)
	r := &Reader{
		name:     name,
		dim:      c.dim,
		recSize:  rs,
		buf:      make([]byte, per*rs),
		vec:      make([]float32, c.dim),
		progress: c.progress,
		ctx:      ctx,
	}
	// A gzip stream is inflated on another core (it costs far more than
	// parsing); a plain file is read directly.
	raw, err := rawio.NewReader(src, ErrCorrupt)
	var ce *rawio.CorruptError
	switch {
	case errors.As(err, &ce):
		return nil, fmt.Errorf("imagefeat: %s: %w at byte 0: %w", name, ErrCorrupt, ce.Err)
	case err != nil:
		return nil, fmt.Errorf("imagefeat: %s: %w", name, err)
	}
	r.src, r.gz = raw, raw.Gzip()
	return r, nil
}

// Dim is the number of values per record.
func (r *Reader) Dim() int { return r.dim }

// Offset is the byte offset, in the uncompressed stream, of the record the
// last call to Next returned (0 before the first call).
func (r *Reader) Offset() int64 { return r.last }

// Records is the number of records Next has returned.
func (r *Reader) Records() int64 { return r.records }

// Next returns the next record's ASIN and values. vec is reused by the next
// call. At the end of the file Next returns io.EOF; any other error is final
// and names the file and the offset.
func (r *Reader) Next() (asin string, vec []float32, err error) {
	a, v, err := r.next()
	if err != nil {
		return "", nil, err
	}
	return string(a), v, nil
}

// next is Next without allocating: asin points into the chunk buffer and is
// valid until the following call.
func (r *Reader) next() (asin []byte, vec []float32, err error) {
	if r.end-r.pos < r.recSize {
		if err := r.fill(); err != nil {
			return nil, nil, err
		}
	}
	rec := r.buf[r.pos : r.pos+r.recSize]
	off := r.bufOff + int64(r.pos)
	asin, err = r.parseASIN(rec[:ASINLen], off)
	if err != nil {
		return nil, nil, err
	}
	if j := decodeValues(r.vec, rec[ASINLen:]); j >= 0 {
		return nil, nil, r.nonFinite(math.Float32bits(r.vec[j]), off, asin, j)
	}
	r.pos += r.recSize
	r.last = off
	r.records++
	return asin, r.vec, nil
}

// fill makes buf hold at least one whole record, or returns io.EOF or the
// error that stops the stream.
func (r *Reader) fill() error {
	if r.pending != nil {
		return r.stop()
	}
	if err := r.ctx.Err(); err != nil {
		return err
	}
	// Keep the partial record, if any, at the front.
	n := copy(r.buf, r.buf[r.pos:r.end])
	r.bufOff += int64(r.pos)
	r.pos, r.end = 0, n
	for empty := 0; r.end < len(r.buf); {
		m, err := r.src.Read(r.buf[r.end:])
		r.end += m
		if m == 0 && err == nil {
			// A source that keeps returning nothing would spin forever.
			if empty++; empty == 100 {
				err = io.ErrNoProgress
			}
		}
		if err != nil {
			r.pending = err
			break
		}
	}
	if r.progress != nil && r.end > n {
		r.progress(int64(r.end - n))
	}
	if r.end < r.recSize {
		return r.stop()
	}
	return nil
}

// stop turns the pending read error into the error Next reports once no whole
// record is left.
func (r *Reader) stop() error {
	got := r.end - r.pos
	off := r.bufOff + int64(r.pos)
	var ce *rawio.CorruptError
	switch {
	case r.pending == io.EOF && got == 0:
		return io.EOF
	case r.pending == io.EOF:
		return fmt.Errorf("imagefeat: %s: %w at byte %d: %d of %d bytes",
			r.name, ErrTruncated, off, got, r.recSize)
	case errors.As(r.pending, &ce):
		return fmt.Errorf("imagefeat: %s: %w after %d complete records (uncompressed byte %d): %w",
			r.name, ErrCorrupt, r.records, off, ce.Err)
	default:
		return fmt.Errorf("imagefeat: %s: read after %d complete records (uncompressed byte %d): %w",
			r.name, r.records, off, r.pending)
	}
}

// parseASIN checks a 10-byte header and returns the ASIN: the bytes before
// the first space. Every header byte must be printable ASCII.
func (r *Reader) parseASIN(h []byte, off int64) ([]byte, error) {
	end := -1
	for i, b := range h {
		if b < 0x20 || b > 0x7e {
			kind := "control"
			if b > 0x7f {
				kind = "non-ASCII"
			}
			return nil, fmt.Errorf("imagefeat: %s: %w at byte %d: %s byte %#02x at position %d",
				r.name, ErrASIN, off, kind, b, i)
		}
		if b == ' ' && end < 0 {
			end = i
		}
	}
	if end < 0 {
		end = len(h)
	}
	if end == 0 {
		return nil, fmt.Errorf("imagefeat: %s: %w at byte %d: empty", r.name, ErrASIN, off)
	}
	return h[:end], nil
}

func (r *Reader) nonFinite(bits uint32, off int64, asin []byte, j int) error {
	what := "NaN"
	if bits&0x007fffff == 0 {
		what = "+Inf"
		if bits>>31 == 1 {
			what = "-Inf"
		}
	}
	return fmt.Errorf("imagefeat: %s: %w: %s at byte %d (asin %s, dim %d)",
		r.name, ErrNonFinite, what, off+ASINLen+4*int64(j), asin, j)
}

// Close stops the reader's read-ahead goroutine and closes the file Open
// opened. Call it also on a Reader from NewReader that was not read to the
// end.
func (r *Reader) Close() error {
	if r.src != nil {
		r.src.Close() // stops the read-ahead; does not close the file
	}
	if r.closer == nil {
		return nil
	}
	err := r.closer.Close()
	r.closer = nil
	return err
}

// ScanASINs returns the ASINs of a .b file in file order, duplicates
// included. For a plain file it reads only the 10-byte headers (one
// positioned read per record), so it checks the headers and that the size is
// a whole number of records but not the values; a gzipped file is streamed
// and fully validated as by Next. Once ctx is done it returns ctx.Err()
// within about 1 MiB of input (64 headers of a plain file). Options: WithDim
// and WithProgress (uncompressed bytes).
func ScanASINs(ctx context.Context, path string, opts ...Option) ([]string, error) {
	c := newConfig(opts)
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("imagefeat: %w", err)
	}
	defer f.Close()
	var magic [2]byte
	if n, _ := f.ReadAt(magic[:], 0); rawio.IsGzip(magic[:n]) {
		r, err := newReader(ctx, f, name, c)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		var asins []string
		for {
			a, _, err := r.Next()
			if err == io.EOF {
				return asins, nil
			}
			if err != nil {
				return nil, err
			}
			asins = append(asins, a)
		}
	}
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("imagefeat: %w", err)
	}
	rs := int64(RecordSize(c.dim))
	n := st.Size() / rs
	asins := make([]string, n)
	r := Reader{name: name}
	// Spans of 64 headers (about 1 MiB of file) on all cores: one positioned
	// read a record, 659,566 of them at Women's size, took 0.7 serial s of
	// ingest. The error is the first record's in file order: spans after
	// a failed one are skipped, those before it still run.
	const span = 64
	spans := (n + span - 1) / span
	errs := make([]error, spans)
	var failed atomic.Int64 // lowest failed span so far
	failed.Store(spans)
	var progress sync.Mutex
	par.For(int(spans), 0, func(_, k int) {
		if int64(k) > failed.Load() {
			return
		}
		if errs[k] = ctx.Err(); errs[k] == nil {
			errs[k] = scanSpan(f, &r, asins, int64(k)*span, min(int64(k+1)*span, n), rs)
		}
		if errs[k] != nil {
			for cur := failed.Load(); int64(k) < cur && !failed.CompareAndSwap(cur, int64(k)); cur = failed.Load() {
			}
			return
		}
		if c.progress != nil {
			progress.Lock()
			c.progress((min(int64(k+1)*span, n) - int64(k)*span) * rs)
			progress.Unlock()
		}
	})
	if k := failed.Load(); k < spans {
		return nil, errs[k]
	}
	if rest := st.Size() - n*rs; rest != 0 {
		return nil, fmt.Errorf("imagefeat: %s: %w at byte %d: %d of %d bytes",
			name, ErrTruncated, n*rs, rest, rs)
	}
	return asins, nil
}

// scanSpan reads the ASINs of records [lo, hi) of a plain .b file of
// records of rs bytes into asins.
func scanSpan(f *os.File, r *Reader, asins []string, lo, hi, rs int64) error {
	var h [ASINLen]byte
	for i := lo; i < hi; i++ {
		off := i * rs
		if _, err := f.ReadAt(h[:], off); err != nil {
			return fmt.Errorf("imagefeat: %s: read at byte %d: %w", r.name, off, err)
		}
		a, err := r.parseASIN(h[:], off)
		if err != nil {
			return err
		}
		asins[i] = string(a)
	}
	return nil
}

package imagefeat

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"monomer/catalogue"
	"monomer/schema"
)

// ErrEmbeddings marks an embeddings file ExtractEmbeddings refuses: one it
// cannot read (no id column, a bad .npy header, a missing or short id
// file), one without a usable vector, or rejected rows over the threshold.
var ErrEmbeddings = errors.New("bad embeddings file")

// MaxEmbeddingDim bounds an embedding's dimension: far above any image or
// text encoder's (CLIP's are 512 to 1024, FC7's 4096), and low enough that
// a row's buffers stay small.
const MaxEmbeddingDim = 1 << 20

// npyExt is the name ending, in any case, that makes an embeddings file a
// NumPy matrix; any other file is read as Parquet. The file's first bytes
// must agree with its name (see sniffEmbeddings).
const npyExt = ".npy"

// EmbeddingFiles are the files ExtractEmbeddings reads for path: path
// itself and, for a NumPy matrix (a name ending in .npy), its id file,
// path with ".npy" replaced by ".ids.txt" (vectors.npy, vectors.ids.txt).
func EmbeddingFiles(path string) []string {
	if ids, ok := npyIDFile(path); ok {
		return []string{path, ids}
	}
	return []string{path}
}

func npyIDFile(path string) (string, bool) {
	n := len(path) - len(npyExt)
	if n < 0 || !strings.EqualFold(path[n:], npyExt) {
		return "", false
	}
	return path[:n] + ".ids.txt", true
}

// sniffEmbeddings checks that the file's first bytes are what its name
// says (NumPy's magic for a .npy name, Parquet's otherwise), so that a
// compressed file or a misnamed one is refused naming what it is instead
// of failing deep in the wrong reader.
func sniffEmbeddings(path, name string, isNPY bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("imagefeat: %w", err)
	}
	head := make([]byte, 8)
	n, _ := io.ReadFull(f, head)
	f.Close()
	head = head[:n]
	is := func(magic string) bool { return strings.HasPrefix(string(head), magic) }
	switch {
	case is("\x1f\x8b"):
		return fmt.Errorf("imagefeat: %s: %w: gzip-compressed; decompress it first (embeddings are read uncompressed, as .npy or Parquet)", name, ErrEmbeddings)
	case is(npyMagic) && !isNPY:
		return fmt.Errorf("imagefeat: %s: %w: a NumPy file; name it *.npy (its ids are read from the same name ending in .ids.txt)", name, ErrEmbeddings)
	case is("PAR1") && isNPY:
		return fmt.Errorf("imagefeat: %s: %w: a Parquet file, named .npy; rename it (a .npy name is read as a NumPy matrix)", name, ErrEmbeddings)
	}
	return nil
}

// EmbeddingStats counts what ExtractEmbeddings read. Every row of the file
// is exactly one of Kept, Unknown or Rejected.
type EmbeddingStats struct {
	// Format is "parquet" or "npy"; IDColumn and VectorColumn name the
	// Parquet columns read, VectorType the vector column's type.
	Format       string
	IDColumn     string `json:"id_column,omitempty"`
	VectorColumn string `json:"vector_column,omitempty"`
	VectorType   string `json:"vector_type,omitempty"`
	// Dim is the embeddings' dimension: the .npy file's columns, or the
	// length of the first Parquet vector that is not null.
	Dim  int
	Rows int64 // rows of the file
	// Kept is the number of matrix rows written: the first usable row of
	// each wanted id.
	Kept int64
	// Unknown counts the first usable rows of ids that are not items.
	Unknown int64
	// Rejected rows, by reason. A row's id counts as seen only once a row
	// of it is usable, so a rejected row never hides a later good one.
	Rejected   int64
	NonFinite  int64 // a NaN or infinite value (or a float64 beyond float32)
	WrongDim   int64 // a length other than Dim
	NullRows   int64 // a null vector or a null value in it
	EmptyIDs   int64 // an empty or null id
	Duplicates int64 // an id a usable row already had
	// FirstReject and FirstUnknown describe the first such rows ("" if
	// none), for a one-line report.
	FirstReject, FirstUnknown string `json:",omitempty"`
	// Missing lists, ascending, the rows (items) without a vector; their
	// matrix rows are zero.
	Missing []int32 `json:"-"`
	// MissingCount is len(Missing).
	MissingCount int
}

// ExtractEmbeddings reads the embeddings file at path, a Parquet table
// (see schema.ReadVectors) or a NumPy .npy matrix with its id file (see
// EmbeddingFiles), and writes the matrix of the n items in rows (id ->
// row, a bijection onto 0..n-1) to out, in the layout Extract writes (see
// the package doc; scale 1: values are used as given). Row i holds item
// i's vector, converted to float32; an item without one keeps a zero row
// and is listed in the stats' Missing. Output bytes depend only on the
// vectors of the wanted ids, rows and the batch size.
//
// Rows are validated like .b records, but a bad row is counted and
// skipped rather than fatal: a NaN or infinite value, a length other than
// the first vector's, a null vector or value, an empty id, an id a usable
// row already had. When more than rejectRatio of the rows are rejected
// (a negative ratio never fails) the error wraps ErrEmbeddings and names
// the first rejected row: "row 17" counts from 0 as pyarrow and NumPy
// index; a .npy row also gives its byte offset. Rows of ids that are not
// items are counted, not rejected. On any error out is removed.
//
// Memory: one batch of rows (4096 Parquet rows, or one .npy row) plus the
// ids seen. Options: WithBatchRows, WithProgress (rows read).
func ExtractEmbeddings(ctx context.Context, path string, rows map[string]int32, n int, rejectRatio float64, out string, opts ...Option) (EmbeddingStats, error) {
	var st EmbeddingStats
	c := newConfig(opts)
	name := filepath.Base(path)
	asins, err := rowASINs(name, rows, n)
	if err != nil {
		return st, err
	}
	s := &embedSink{name: name, rows: rows, asins: asins, out: out, batch: c.batchRows, st: &st,
		filled: make([]bool, n), usable: map[string]bool{}, progress: c.progress}
	defer s.abort()
	_, isNPY := npyIDFile(path)
	if err := sniffEmbeddings(path, name, isNPY); err != nil {
		return st, err
	}
	if isNPY {
		st.Format = "npy"
		err = s.readNPY(ctx, path)
	} else {
		st.Format = "parquet"
		err = s.readParquet(ctx, path)
	}
	if err != nil {
		return st, err
	}
	if rejectRatio >= 0 && st.Rejected > 0 && float64(st.Rejected) > rejectRatio*float64(st.Rows) {
		return st, fmt.Errorf("imagefeat: %s: %w: %d of %d rows rejected (over %g); first: %s",
			name, ErrEmbeddings, st.Rejected, st.Rows, rejectRatio, st.FirstReject)
	}
	if s.f == nil {
		return st, fmt.Errorf("imagefeat: %s: %w: no usable vector in %d rows (first reject: %s)", name, ErrEmbeddings, st.Rows, cmp.Or(st.FirstReject, "none"))
	}
	for i, ok := range s.filled {
		if !ok {
			st.Missing = append(st.Missing, int32(i))
		}
	}
	st.MissingCount = len(st.Missing)
	if err := s.f.Close(); err != nil {
		return st, fmt.Errorf("imagefeat: %w", err)
	}
	s.f, s.done = nil, true
	return st, nil
}

// rowASINs inverts rows, checking it is a bijection onto 0..n-1.
func rowASINs(name string, rows map[string]int32, n int) ([]string, error) {
	if n < 0 || len(rows) != n {
		return nil, fmt.Errorf("imagefeat: extract %s: %d ids for %d rows", name, len(rows), n)
	}
	asins := make([]string, n)
	for a, i := range rows {
		if i < 0 || int(i) >= n {
			return nil, fmt.Errorf("imagefeat: extract %s: id %s has row %d, outside 0..%d", name, a, i, n-1)
		}
		if asins[i] != "" {
			lo, hi := min(a, asins[i]), max(a, asins[i])
			return nil, fmt.Errorf("imagefeat: extract %s: ids %s and %s share row %d", name, lo, hi, i)
		}
		if a == "" {
			return nil, fmt.Errorf("imagefeat: extract %s: empty id for row %d", name, i)
		}
		asins[i] = a
	}
	return asins, nil
}

// embedSink validates rows and writes the usable ones of wanted ids into
// the matrix file, created at the first usable row (which fixes Dim).
type embedSink struct {
	name     string
	rows     map[string]int32
	asins    []string
	out      string
	batch    int
	st       *EmbeddingStats
	filled   []bool
	usable   map[string]bool // ids of unwanted usable rows, and wanted ones via filled
	progress func(int64)

	f      *os.File
	dataAt []int64
	enc    []byte
	vec    []float32
	done   bool
}

func (s *embedSink) abort() {
	if s.f != nil {
		s.f.Close()
	}
	if !s.done {
		os.Remove(s.out)
	}
}

// place is where a row is: its index, counted from 0, and for a .npy
// file its byte offset (-1 for Parquet). It is formatted only for the
// rows a report names.
type place struct{ row, byteAt int64 }

func (p place) String() string {
	if p.byteAt < 0 {
		return fmt.Sprintf("row %d", p.row)
	}
	return fmt.Sprintf("row %d (byte %d)", p.row, p.byteAt)
}

// reject counts a rejected row.
func (s *embedSink) reject(count *int64, at place, format string, a ...any) {
	*count++
	s.st.Rejected++
	if s.st.FirstReject == "" {
		s.st.FirstReject = at.String() + ": " + fmt.Sprintf(format, a...)
	}
}

// setDim fixes the dimension and writes the matrix skeleton.
func (s *embedSink) setDim(dim int) error {
	s.st.Dim = dim
	batch := s.batch
	if batch <= 0 {
		batch = max(1, min(4096, maxBatchBytes/(4*dim)))
	}
	s.batch = batch
	f, err := os.OpenFile(s.out, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("imagefeat: %w", err)
	}
	s.f = f
	if s.dataAt, err = writeSkeleton(f, s.asins, dim, batch, 1); err != nil {
		return fmt.Errorf("imagefeat: %s: %w", filepath.Base(s.out), err)
	}
	s.enc = make([]byte, 4*dim)
	s.vec = make([]float32, dim)
	return nil
}

// row takes one row: its id and its values, as float32 (f32) or float64
// (f64, when f32 is nil), already known not to be null.
func (s *embedSink) row(id string, at place, f32 []float32, f64 []float64) error {
	n := len(f32)
	if f32 == nil {
		n = len(f64)
	}
	if id == "" {
		s.reject(&s.st.EmptyIDs, at, "empty id")
		return nil
	}
	if s.st.Dim == 0 {
		if n == 0 {
			s.reject(&s.st.WrongDim, at, "id %s: empty vector", id)
			return nil
		}
		if n > MaxEmbeddingDim {
			return fmt.Errorf("imagefeat: %s %s: %w: dimension %d above %d", s.name, at, ErrEmbeddings, n, MaxEmbeddingDim)
		}
		if err := s.setDim(n); err != nil {
			return err
		}
	}
	if n != s.st.Dim {
		s.reject(&s.st.WrongDim, at, "id %s: dimension %d, want %d (the first vector's)", id, n, s.st.Dim)
		return nil
	}
	for j := range n {
		var v float32
		if f32 != nil {
			v = f32[j]
		} else {
			v = float32(f64[j])
		}
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			orig := float64(v)
			if f32 == nil {
				orig = f64[j]
			}
			s.reject(&s.st.NonFinite, at, "id %s: non-finite value %g at position %d", id, orig, j)
			return nil
		}
		s.vec[j] = v
	}
	row, want := s.rows[id]
	switch {
	case want && !s.filled[row]:
		s.filled[row] = true
		encodeValues(s.enc, s.vec)
		b := int(row) / s.batch
		at := s.dataAt[b] + int64(int(row)-b*s.batch)*int64(len(s.enc))
		if _, err := s.f.WriteAt(s.enc, at); err != nil {
			return fmt.Errorf("imagefeat: %w", err)
		}
		s.st.Kept++
	case !want && !s.usable[id]:
		s.usable[id] = true
		s.st.Unknown++
		if s.st.FirstUnknown == "" {
			s.st.FirstUnknown = at.String() + ": " + id
		}
	default:
		s.reject(&s.st.Duplicates, at, "duplicate id %s", id)
	}
	return nil
}

func (s *embedSink) readParquet(ctx context.Context, path string) error {
	info, err := schema.ReadVectors(ctx, path, func(b *schema.VectorBatch) error {
		for i, id := range b.IDs {
			// The items table's id rule (catalogue.ID, after invalid UTF-8
			// is made U+FFFD), so that a padded or Latin-1 id names the
			// same item in both tables.
			id = catalogue.ID(strings.ToValidUTF8(id, "\uFFFD"))
			s.st.Rows++
			at := place{b.Row + int64(i), -1}
			lo, hi := b.Off[i], b.Off[i+1]
			var err error
			switch {
			case b.IDNull[i]:
				s.reject(&s.st.EmptyIDs, at, "null id")
			case b.Null[i]:
				s.reject(&s.st.NullRows, at, "id %s: null vector", id)
			case b.ValueNull != nil && b.ValueNull[i]:
				s.reject(&s.st.NullRows, at, "id %s: a null value in the vector", id)
			case b.F32 != nil:
				err = s.row(id, at, b.F32[lo:hi:hi], nil)
			default:
				err = s.row(id, at, nil, b.F64[lo:hi:hi])
			}
			if err != nil {
				return err
			}
		}
		if s.progress != nil {
			s.progress(int64(len(b.IDs)))
		}
		return nil
	})
	s.st.IDColumn, s.st.VectorColumn, s.st.VectorType = info.IDColumn, info.VectorColumn, info.Type
	if errors.Is(err, schema.ErrVectors) {
		return fmt.Errorf("imagefeat: %w: %w", ErrEmbeddings, err)
	}
	return err
}

func (s *embedSink) readNPY(ctx context.Context, path string) error {
	idPath, _ := npyIDFile(path)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("imagefeat: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("imagefeat: %w", err)
	}
	r := bufio.NewReaderSize(f, chunkBytes)
	pre, _ := r.Peek(12) // magic, version and length: enough to size the header
	want := 12
	if len(pre) >= 10 && pre[6] == 1 {
		want = 10 + int(binary.LittleEndian.Uint16(pre[8:]))
	} else if len(pre) >= 12 && pre[6] != 1 {
		want = 12 + int(min(binary.LittleEndian.Uint32(pre[8:]), maxNPYHeader))
	}
	head, _ := r.Peek(want)
	h, err := parseNPYHeader(head)
	if err != nil {
		return fmt.Errorf("imagefeat: %s: %w: header: %w", s.name, ErrEmbeddings, err)
	}
	if h.Cols > MaxEmbeddingDim {
		return fmt.Errorf("imagefeat: %s: %w: dimension %d above %d", s.name, ErrEmbeddings, h.Cols, MaxEmbeddingDim)
	}
	rowBytes := h.Cols * int64(h.Width)
	if size := h.DataAt + h.Rows*rowBytes; fi.Size() != size {
		return fmt.Errorf("imagefeat: %s: %w: %d bytes, the header's shape (%d, %d) of %d-byte values makes %d",
			s.name, ErrEmbeddings, fi.Size(), h.Rows, h.Cols, h.Width, size)
	}
	if _, err := r.Discard(int(h.DataAt)); err != nil {
		return fmt.Errorf("imagefeat: %s: %w", s.name, err)
	}
	idf, err := os.Open(idPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("imagefeat: %s: %w: no id file %s (one id a line, line i naming row i)", s.name, ErrEmbeddings, filepath.Base(idPath))
		}
		return fmt.Errorf("imagefeat: %w", err)
	}
	defer idf.Close()
	ids := bufio.NewScanner(idf)
	ids.Buffer(nil, 1<<20)
	idName := filepath.Base(idPath)

	raw := make([]byte, rowBytes)
	f32 := make([]float32, h.Cols)
	var f64 []float64
	if h.Width == 8 {
		f32, f64 = nil, make([]float64, h.Cols)
	}
	for k := range h.Rows {
		if k%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if !ids.Scan() {
			if err := ids.Err(); err != nil {
				return fmt.Errorf("imagefeat: %s line %d: %w: %w", idName, k+1, ErrEmbeddings, err)
			}
			return fmt.Errorf("imagefeat: %s: %w: %d lines for the %d rows of %s", idName, ErrEmbeddings, k, h.Rows, s.name)
		}
		id := strings.TrimSuffix(ids.Text(), "\r")
		if k == 0 {
			id = strings.TrimPrefix(id, "\ufeff") // a byte-order mark some editors write
		}
		if strings.TrimSpace(id) != id {
			return fmt.Errorf("imagefeat: %s line %d: %w: id %q has leading or trailing whitespace (one id a line, nothing else)", idName, k+1, ErrEmbeddings, id)
		}
		if _, err := io.ReadFull(r, raw); err != nil {
			return fmt.Errorf("imagefeat: %s row %d: %w", s.name, k, err)
		}
		for j := range h.Cols {
			if f64 != nil {
				f64[j] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*j:]))
			} else {
				f32[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
			}
		}
		s.st.Rows++
		at := place{k, h.DataAt + k*rowBytes}
		if h.Cols == 0 {
			s.reject(&s.st.WrongDim, at, "id %s: empty vector", id)
		} else if err := s.row(id, at, f32, f64); err != nil {
			return err
		}
		if s.progress != nil {
			s.progress(1)
		}
	}
	// Blank lines after the last id (an editor's final newline) are not ids.
	for line := h.Rows + 1; ids.Scan(); line++ {
		if strings.TrimSpace(ids.Text()) != "" {
			return fmt.Errorf("imagefeat: %s line %d: %w: more ids than the %d rows of %s", idName, line, ErrEmbeddings, h.Rows, s.name)
		}
	}
	if err := ids.Err(); err != nil {
		return fmt.Errorf("imagefeat: %s: %w: %w", idName, ErrEmbeddings, err)
	}
	return nil
}

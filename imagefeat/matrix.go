package imagefeat

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"monomer/schema"
)

// Matrix is a read-only, memory-mapped image-feature matrix (the file
// Extract writes, or any Arrow IPC file with a non-null "features" column of
// fixed_size_list<float32>). It satisfies the models package's Dense
// interface. A Matrix is safe for concurrent use until Close.
type Matrix struct {
	name   string
	data   []byte // the mapping
	rows   int
	dim    int
	batch  int   // rows of every batch but the last; 0 when they vary
	starts []int // first row of each batch, then rows
	vals   [][]float32
	asins  []*array.String // nil when the file has no asin column
	recs   []arrow.RecordBatch
	scale  float32
}

// OpenMatrix memory-maps the matrix file at path. Nothing of the features is
// read until a row is used. The caller must Close it.
func OpenMatrix(path string) (m *Matrix, err error) {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("imagefeat: %w", err)
	}
	defer f.Close() // the mapping outlives the descriptor
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("imagefeat: %w", err)
	}
	if fi.Size() == 0 || int64(int(fi.Size())) != fi.Size() {
		return nil, fmt.Errorf("imagefeat: %s: %w: size %d", name, ErrFormat, fi.Size())
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("imagefeat: %s: mmap: %w", name, err)
	}
	m = &Matrix{name: name, data: data}
	defer func() {
		// The flatbuffers of a damaged file can make arrow-go index out of
		// range; report that as a format error, not a crash.
		if p := recover(); p != nil {
			err = fmt.Errorf("imagefeat: %s: %w: %v", name, ErrFormat, p)
		}
		if err != nil {
			m.Close()
			m = nil
		}
	}()
	err = m.load()
	return m, err
}

func (m *Matrix) load() error {
	// arrow-go sizes slices from the footer's counts: a damaged one must
	// be an error here, not the process running out of memory.
	if err := schema.CheckArrowFile(m.data); err != nil {
		return fmt.Errorf("imagefeat: %s: %w: %w", m.name, ErrFormat, err)
	}
	// Big-endian files would need swapping into the read-only mapping.
	fr, err := ipc.NewMappedFileReader(m.data, ipc.WithEnsureNativeEndian(false), ipc.WithBodySizeLimit(0))
	if err != nil {
		return fmt.Errorf("imagefeat: %s: %w: %w", m.name, ErrFormat, err)
	}
	defer fr.Close()
	sc := fr.Schema()
	if !sc.IsNativeEndian() {
		return fmt.Errorf("imagefeat: %s: %w: not native-endian", m.name, ErrFormat)
	}
	fIdx := sc.FieldIndices("features")
	if len(fIdx) != 1 {
		return fmt.Errorf("imagefeat: %s: %w: no single features column", m.name, ErrFormat)
	}
	ft, ok := sc.Field(fIdx[0]).Type.(*arrow.FixedSizeListType)
	if !ok || ft.Elem().ID() != arrow.FLOAT32 || ft.Len() <= 0 {
		return fmt.Errorf("imagefeat: %s: %w: features is %s, want fixed_size_list<float32>", m.name, ErrFormat, sc.Field(fIdx[0]).Type)
	}
	m.dim = int(ft.Len())
	aIdx := -1
	if ix := sc.FieldIndices("asin"); len(ix) == 1 && sc.Field(ix[0]).Type.ID() == arrow.STRING {
		aIdx = ix[0]
	}
	if i := sc.Metadata().FindKey(metaScale); i >= 0 {
		s, _ := strconv.ParseFloat(sc.Metadata().Values()[i], 32)
		m.scale = float32(s)
	}
	nb := fr.NumRecords()
	m.starts = make([]int, 0, nb+1)
	for b := range nb {
		rec, err := fr.RecordBatchAt(b)
		if err != nil {
			return fmt.Errorf("imagefeat: %s: batch %d: %w: %w", m.name, b, ErrFormat, err)
		}
		m.recs = append(m.recs, rec)
		col, ok := rec.Column(fIdx[0]).(*array.FixedSizeList)
		if !ok || col.NullN() != 0 {
			return fmt.Errorf("imagefeat: %s: batch %d: %w: null feature rows", m.name, b, ErrFormat)
		}
		fv, ok := col.ListValues().(*array.Float32)
		if !ok || fv.NullN() != 0 {
			return fmt.Errorf("imagefeat: %s: batch %d: %w: null feature values", m.name, b, ErrFormat)
		}
		k := col.Len()
		v := fv.Float32Values()
		lo, hi := col.Offset()*m.dim, (col.Offset()+k)*m.dim
		if hi > len(v) {
			return fmt.Errorf("imagefeat: %s: batch %d: %w: %d values for %d rows", m.name, b, ErrFormat, len(v), k)
		}
		m.vals = append(m.vals, v[lo:hi:hi])
		if aIdx >= 0 {
			// Offsets checked once here (a few MB): a damaged one would
			// make ASIN panic far from the file's name.
			a := rec.Column(aIdx).(*array.String)
			if err := a.ValidateFull(); err != nil {
				return fmt.Errorf("imagefeat: %s: batch %d: %w: asin column: %w", m.name, b, ErrFormat, err)
			}
			m.asins = append(m.asins, a)
		}
		m.starts = append(m.starts, m.rows)
		m.rows += k
	}
	m.starts = append(m.starts, m.rows)
	if nb > 0 {
		m.batch = m.starts[1]
		for b := 1; b < nb-1; b++ {
			if m.starts[b+1]-m.starts[b] != m.batch {
				m.batch = 0
				break
			}
		}
		if m.batch > 0 && m.starts[nb]-m.starts[nb-1] > m.batch {
			m.batch = 0
		}
	}
	return nil
}

// Rows is the number of items.
func (m *Matrix) Rows() int { return m.rows }

// Dim is the feature dimension.
func (m *Matrix) Dim() int { return m.dim }

// Scale is the divisor Extract applied (from the file's metadata; 0 if
// absent).
func (m *Matrix) Scale() float32 { return m.scale }

// locate returns the batch of row i and i's index inside it.
func (m *Matrix) locate(i int) (b, k int) {
	if i < 0 || i >= m.rows {
		panic(fmt.Sprintf("imagefeat: %s: row %d out of range [0,%d)", m.name, i, m.rows))
	}
	if m.batch > 0 {
		return i / m.batch, i % m.batch
	}
	b = sort.Search(len(m.starts)-1, func(j int) bool { return m.starts[j+1] > i })
	return b, i - m.starts[b]
}

// Row returns item i's features: a view into the mapping, read-only (writing
// to it faults), valid until Close. It panics if i is out of range.
func (m *Matrix) Row(i int) []float32 {
	b, k := m.locate(i)
	lo, hi := k*m.dim, (k+1)*m.dim
	return m.vals[b][lo:hi:hi]
}

// Block returns rows lo..hi-1 as one contiguous read-only view into the
// mapping when they lie in one record batch, else nil (models multiply on
// it without copying rows). It panics if the range is out of bounds.
func (m *Matrix) Block(lo, hi int) []float32 {
	if lo >= hi {
		return nil
	}
	b, k := m.locate(lo)
	if hb, _ := m.locate(hi - 1); hb != b {
		return nil
	}
	return m.vals[b][k*m.dim : (k+hi-lo)*m.dim : (k+hi-lo)*m.dim]
}

// ASIN returns item i's ASIN, or "" if the file has no asin column.
func (m *Matrix) ASIN(i int) string {
	b, k := m.locate(i)
	if m.asins == nil {
		return ""
	}
	return strings.Clone(m.asins[b].Value(k))
}

// Close unmaps the file; rows obtained before become invalid.
func (m *Matrix) Close() error {
	for _, r := range m.recs {
		r.Release()
	}
	m.recs, m.vals, m.asins = nil, nil, nil
	if m.data == nil {
		return nil
	}
	err := syscall.Munmap(m.data)
	m.data = nil
	if err != nil {
		return fmt.Errorf("imagefeat: %s: munmap: %w", m.name, err)
	}
	return nil
}

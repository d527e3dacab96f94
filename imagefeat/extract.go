package imagefeat

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// DefaultScale is what the original code divides FC7 activations by: their
// maximum over the data set.
const DefaultScale = 58.388599

// maxBatchBytes bounds the features of one record batch (Arrow readers limit
// message bodies; arrow-go's default limit is 256 MiB).
const maxBatchBytes = 64 << 20

// Metadata keys of the matrix file's schema.
const (
	metaDim   = "monomer.imagefeat.dim"
	metaRows  = "monomer.imagefeat.rows"
	metaScale = "monomer.imagefeat.scale"
)

// ExtractStats counts what Extract read. Every record of the .b file is
// exactly one of Kept, Unwanted or DuplicateASINs.
type ExtractStats struct {
	Records int64 // records in the .b file
	Bytes   int64 // uncompressed bytes of the .b stream
	// Kept is the number of rows written: the first record of each wanted
	// ASIN.
	Kept int64
	// Unwanted counts the first records of ASINs not in rows.
	Unwanted int64
	// DuplicateASINs counts records whose ASIN occurred earlier in the file,
	// wanted or not. The first record of an ASIN wins; later ones are skipped.
	DuplicateASINs int64
	// FirstDuplicate and FirstDuplicateOffset name the first such record
	// ("" and 0 if none), for a one-line report.
	FirstDuplicate       string
	FirstDuplicateOffset int64
	// Missing lists, ascending, the rows whose ASIN has no record. Extract
	// fails with ErrMissingRows when it is not empty.
	Missing []int32
}

// Extract reads the .b file at path and writes the matrix of the n
// items in rows (ASIN -> row, a bijection onto 0..n-1) to out, as the Arrow IPC
// file described in the package doc: row i holds item i's record, each value
// divided by scale in float32 arithmetic. The output bytes depend only on the
// records of the wanted ASINs, rows, the dimension, scale and the batch size,
// so reruns give identical files.
//
// The caller drops items without a record before calling (ScanASINs lists
// them), so a wanted ASIN without a record is an error wrapping
// ErrMissingRows; the returned stats still count everything and list the
// rows. Duplicate ASINs are not an error: the first record wins and the rest
// are counted. On any error out is removed.
//
// A gzipped file is streamed once; a plain one is copied on all cores
// (extractPlain), with the same bytes, stats and errors.
//
// Memory: a few MiB of buffers per core, the ASINs of rows, a set of the
// file's unwanted ASINs (to count duplicates) and, for a plain file, 19
// bytes per record. Options: WithDim, WithBatchRows, WithProgress
// (uncompressed bytes) and WithSHA256.
//
// Once ctx is done Extract returns ctx.Err() within about 1 MiB of input
// per core, and removes out.
func Extract(ctx context.Context, path string, rows map[string]int32, n int, scale float32, out string, opts ...Option) (ExtractStats, error) {
	var st ExtractStats
	c := newConfig(opts)
	dim := c.dim
	if !(scale > 0) || math.IsInf(float64(scale), 0) {
		return st, fmt.Errorf("imagefeat: extract %s: scale %v is not a positive finite number", filepath.Base(path), scale)
	}
	if n < 0 || len(rows) != n {
		return st, fmt.Errorf("imagefeat: extract %s: %d ASINs for %d rows", filepath.Base(path), len(rows), n)
	}
	asins := make([]string, n)
	for a, i := range rows {
		if i < 0 || int(i) >= n {
			return st, fmt.Errorf("imagefeat: extract %s: ASIN %s has row %d, outside 0..%d", filepath.Base(path), a, i, n-1)
		}
		if asins[i] != "" {
			lo, hi := min(a, asins[i]), max(a, asins[i]) // stable message whatever the map order
			return st, fmt.Errorf("imagefeat: extract %s: ASINs %s and %s share row %d", filepath.Base(path), lo, hi, i)
		}
		if a == "" {
			return st, fmt.Errorf("imagefeat: extract %s: empty ASIN for row %d", filepath.Base(path), i)
		}
		asins[i] = a
	}
	batch := c.batchRows
	if batch <= 0 {
		batch = max(1, min(4096, maxBatchBytes/(4*dim)))
	}

	plain, err := isPlainFile(path)
	if err != nil {
		return st, err
	}
	if plain {
		st, err = extractPlain(ctx, path, rows, asins, dim, batch, scale, out, c)
	} else {
		st, err = extractStream(ctx, path, rows, asins, dim, batch, scale, out, c)
	}
	if err == nil && c.sha256 != nil && *c.sha256 == "" {
		// The streaming path does not hash as it writes.
		if *c.sha256, err = hashFile(out); err != nil {
			os.Remove(out)
		}
	}
	return st, err
}

// extractStream is Extract's loop over a stream of records: a gzipped file
// is inflated on another core and the records are copied in file order on
// this one.
func extractStream(ctx context.Context, path string, rows map[string]int32, asins []string, dim, batch int, scale float32, out string, c config) (ExtractStats, error) {
	var st ExtractStats
	n := len(asins)
	r, err := newReaderFile(ctx, path, c)
	if err != nil {
		return st, err
	}
	defer r.Close()

	f, err := os.OpenFile(out, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return st, fmt.Errorf("imagefeat: %w", err)
	}
	fail := func(err error) (ExtractStats, error) {
		f.Close()
		os.Remove(out)
		return st, err
	}
	dataAt, err := writeSkeleton(f, asins, dim, batch, scale)
	if err != nil {
		return fail(fmt.Errorf("imagefeat: %s: %w", filepath.Base(out), err))
	}

	filled := make([]uint64, (n+63)/64)
	seen := make(map[[ASINLen]byte]struct{})
	rowBytes := 4 * dim
	enc := make([]byte, rowBytes)
	scaled := make([]float32, dim)
	for {
		a, vec, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(err)
		}
		st.Records++
		row, want := rows[string(a)]
		if want && filled[row/64]&(1<<(row%64)) == 0 {
			filled[row/64] |= 1 << (row % 64)
			for j, v := range vec {
				scaled[j] = v / scale
			}
			encodeValues(enc, scaled)
			b := int(row) / batch
			at := dataAt[b] + int64(int(row)-b*batch)*int64(rowBytes)
			if _, err := f.WriteAt(enc, at); err != nil {
				return fail(fmt.Errorf("imagefeat: %w", err))
			}
			st.Kept++
			continue
		}
		var k [ASINLen]byte
		copy(k[:], a)
		_, dup := seen[k]
		if !want && !dup {
			seen[k] = struct{}{}
			st.Unwanted++
			continue
		}
		st.DuplicateASINs++
		if st.FirstDuplicate == "" {
			st.FirstDuplicate, st.FirstDuplicateOffset = string(a), r.Offset()
		}
	}
	st.Bytes = st.Records * int64(r.recSize)
	for i := range n {
		if filled[i/64]&(1<<(i%64)) == 0 {
			st.Missing = append(st.Missing, int32(i))
		}
	}
	if len(st.Missing) > 0 {
		m := st.Missing[0]
		return fail(fmt.Errorf("imagefeat: %s: %w: %d of %d rows (first: row %d, asin %s)",
			r.name, ErrMissingRows, len(st.Missing), n, m, asins[m]))
	}
	if err := f.Close(); err != nil {
		os.Remove(out)
		return st, fmt.Errorf("imagefeat: %w", err)
	}
	return st, nil
}

func newReaderFile(ctx context.Context, path string, c config) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("imagefeat: %w", err)
	}
	r, err := newReader(ctx, f, filepath.Base(path), c)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// matrixSchema is the schema of a matrix file; see the package doc.
func matrixSchema(dim, rows int, scale float32) *arrow.Schema {
	md := arrow.NewMetadata(
		[]string{metaDim, metaRows, metaScale},
		[]string{strconv.Itoa(dim), strconv.Itoa(rows), strconv.FormatFloat(float64(scale), 'g', -1, 32)},
	)
	return arrow.NewSchema([]arrow.Field{
		{Name: "asin", Type: arrow.BinaryTypes.String},
		{Name: "features", Type: arrow.FixedSizeListOfNonNullable(int32(dim), arrow.PrimitiveTypes.Float32)},
	}, &md)
}

// writeSkeleton writes the complete Arrow IPC file to f with all feature
// values zero, leaving the feature buffers as holes, and returns the file
// offset of each batch's feature buffer.
func writeSkeleton(f *os.File, asins []string, dim, batch int, scale float32) ([]int64, error) {
	n := len(asins)
	batchBytes := batch * dim * 4
	if n < batch {
		batchBytes = n * dim * 4
	}
	// The zero source: an anonymous read-only mapping, never touched, so it
	// costs no memory; holeWriter recognises it by address.
	var zero []byte
	if batchBytes > 0 {
		var err error
		zero, err = syscall.Mmap(-1, 0, batchBytes, syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			return nil, fmt.Errorf("map zero buffer: %w", err)
		}
		defer syscall.Munmap(zero)
	}
	hw := &holeWriter{f: f, zero: zero}
	schema := matrixSchema(dim, n, scale)
	// Arrow's writer holds fields as non-nullable only in the schema; the
	// buffers carry no validity bitmaps since there are no nulls.
	w, err := ipc.NewFileWriter(hw, ipc.WithSchema(schema), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return nil, err
	}
	ft := schema.Field(1).Type.(*arrow.FixedSizeListType)
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	defer sb.Release()
	for lo := 0; lo < n; lo += batch {
		hi := min(n, lo+batch)
		k := hi - lo
		sb.Reserve(k)
		for _, a := range asins[lo:hi] {
			sb.Append(a)
		}
		ids := sb.NewArray()
		vals := array.NewData(arrow.PrimitiveTypes.Float32, k*dim,
			[]*memory.Buffer{nil, memory.NewBufferBytes(zero[:k*dim*4])}, nil, 0, 0)
		lst := array.NewData(ft, k, []*memory.Buffer{nil}, []arrow.ArrayData{vals}, 0, 0)
		feats := array.MakeFromData(lst)
		rec := array.NewRecordBatch(schema, []arrow.Array{ids, feats}, int64(k))
		err := w.Write(rec)
		rec.Release()
		feats.Release()
		lst.Release()
		vals.Release()
		ids.Release()
		if err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if hw.err != nil {
		return nil, hw.err
	}
	if want := (n + batch - 1) / batch; len(hw.holes) != want {
		// Arrow's writer copied the zero buffers instead of handing them over.
		return nil, fmt.Errorf("arrow writer passed %d of %d feature buffers through", len(hw.holes), want)
	}
	// Zero-fill the tail if the file were to end in a hole.
	if err := f.Truncate(hw.pos); err != nil {
		return nil, err
	}
	return hw.holes, nil
}

// holeWriter writes at increasing offsets of f, skipping (leaving as holes)
// any slice of zero and recording where it would have gone.
type holeWriter struct {
	f     *os.File
	zero  []byte
	pos   int64
	holes []int64
	err   error
}

func (h *holeWriter) Write(p []byte) (int, error) {
	if h.err != nil {
		return 0, h.err
	}
	if len(p) > 0 && len(h.zero) > 0 {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(h.zero)))
		at := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
		if at >= base && at < base+uintptr(len(h.zero)) {
			h.holes = append(h.holes, h.pos)
			h.pos += int64(len(p))
			return len(p), nil
		}
	}
	n, err := h.f.WriteAt(p, h.pos)
	h.pos += int64(n)
	if err != nil {
		h.err = err
	}
	return n, err
}

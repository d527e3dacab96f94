package models

import (
	"fmt"
	"sync/atomic"

	"monomer/internal/hugemem"
)

// Features is an item-feature matrix: row i is item i's feature vector. The
// features stage produces either kind; models accept both through this
// interface and check which access a value offers.
type Features interface {
	Rows() int
	Dim() int
}

// Dense gives rows as contiguous float32 slices (image features). The slice
// is read-only and may point into a memory-mapped file.
type Dense interface {
	Features
	Row(i int) []float32
}

// DenseBlock is a Dense that can give consecutive rows lo..hi-1 as one
// contiguous slice (a memory-mapped matrix), or nil where they are not
// contiguous. The kernels then multiply on it instead of copying the rows.
// Where Block(lo, hi) is nil, Block(lo, h) is nil for every h > hi too
// (storage in consecutive pieces, such as record batches): the kernels
// search for where a range of rows stops being contiguous.
type DenseBlock interface {
	Dense
	Block(lo, hi int) []float32
}

// Sparse gives rows as sorted column indices with their values (bag of
// words). The slices are read-only and the same on every call: the models
// hold on to them (and index them unchecked once checked, see crossSum).
type Sparse interface {
	Features
	SparseRow(i int) (idx []int32, val []float32)
}

// maxSparseDensity is the share of non-zero values up to which dense
// features are multiplied as sparse rows. ReLU image features (FC7) are
// mostly zeros: at Women's size (density 0.14) the sparse rows took LMT's
// evaluation from 15.3 to about 7 CPU-s and WNN's pass from 5.5 to 2.1-2.6 on
// AMD Zen 4 (docs/notes/2026-11-24-sparse-relu-rows.md). There a non-zero cost LMT's
// two products about 16 ns against 4.8-5.0 ns a dense entry in OpenBLAS's
// sgemm, so dense rows win above a density of about 0.3; Intel, whose
// sgemm is faster, is not measured. The pure-Go build's dense products
// are three times slower than OpenBLAS's here (16.8 ns a value), so
// sparse rows cost no more there at any density; one threshold for both
// builds keeps their choice, and so their results, the same.
const maxSparseDensity = 0.25

// nonZeros counts the non-zero values in the first dim columns of the rows
// of items, stopping as soon as they exceed maxSparseDensity of all the
// values: ok says they did not, and only then is nnz the whole count.
func nonZeros(d Dense, items []int32, dim int) (nnz int64, ok bool) {
	budget := int64(maxSparseDensity * float64(len(items)) * float64(dim))
	// Spans in parallel (one pass over every row: serial, 2 % of an LMT fit
	// at the medium world's Women's size), all stopping once the running
	// total exceeds the budget; below it every span counts all its rows, so
	// the total is exact whatever the order.
	var total atomic.Int64
	forSpans(len(items), 0, func(lo, hi int) {
		for _, it := range items[lo:hi] {
			if total.Load() > budget {
				return
			}
			n := int64(0)
			for _, v := range d.Row(int(it))[:dim] {
				if v != 0 {
					n++
				}
			}
			total.Add(n)
		}
	})
	nnz = total.Load()
	return nnz, nnz <= budget
}

// packedRows holds the non-zeros of some rows of a dense matrix, as sparse
// rows (columns ascending). Asking for a row not packed panics: an empty
// row would pass for an item whose features are all zero.
type packedRows struct {
	dim    int
	off    []int64 // row i is idx[off[i]:off[i+1]], val likewise
	idx    []int32
	val    []float32
	packed []bool
}

func (p *packedRows) Rows() int { return len(p.off) - 1 }
func (p *packedRows) Dim() int  { return p.dim }

func (p *packedRows) SparseRow(i int) ([]int32, []float32) {
	if !p.packed[i] {
		panic(fmt.Sprintf("models: feature row %d was not packed with its pair set's items", i))
	}
	lo, hi := p.off[i], p.off[i+1]
	return p.idx[lo:hi:hi], p.val[lo:hi:hi]
}

// packSparse returns the rows of items (ascending) as packed sparse rows
// when at most maxSparseDensity of their values are non-zero, or nil.
// Zeros of either sign are left out, which changes no sum (at most the
// sign of a zero one); NaN and infinite values are kept. It reads the rows twice, counting first so the
// copy is allocated once.
func packSparse(d Dense, items []int32, dim int) *packedRows {
	if _, ok := nonZeros(d, items, dim); !ok {
		return nil
	}
	return packRows(d, items, dim)
}

// packRows packs the rows of items (ascending). Both passes over the rows
// run on all cores (serial, packing was a quarter of the time a second
// core left idle in a WNN fit at the medium world's Women's size): each
// row's non-zeros are counted, then copied to the offsets the counts give.
func packRows(d Dense, items []int32, dim int) *packedRows {
	cnt := make([]int64, len(items))
	forSpans(len(items), 0, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			n := int64(0)
			for _, v := range d.Row(int(items[k]))[:dim] {
				if v != 0 {
					n++
				}
			}
			cnt[k] = n
		}
	})
	p := &packedRows{dim: dim, off: make([]int64, d.Rows()+1), packed: make([]bool, d.Rows())}
	next, total := 0, int64(0)
	for k, it := range items {
		p.packed[it] = true
		for ; next <= int(it); next++ {
			p.off[next] = total
		}
		total += cnt[k]
	}
	for ; next < len(p.off); next++ {
		p.off[next] = total
	}
	// Huge pages: 1.35 GB each at Women's size, first written here by every
	// worker at once; in 4 KB pages that was 330,000 more page faults a WNN
	// fit (the time they cost is within the machine's noise:
	// docs/notes/2026-11-28-list-columns.md).
	p.idx, p.val = hugemem.Slice[int32](int(total)), hugemem.Slice[float32](int(total))
	forSpans(len(items), 0, func(lo, hi int) {
		for _, it := range items[lo:hi] {
			o := p.off[it]
			for j, v := range d.Row(int(it))[:dim] {
				if v != 0 {
					p.idx[o], p.val[o] = int32(j), v
					o++
				}
			}
		}
	})
	return p
}

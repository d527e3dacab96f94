package csrkern

import (
	"math"
	"slices"
	"unsafe"
)

// path is a family of kernels; all give the same bits.
type path int

const (
	pathGo path = iota
	pathAVX2
	pathAVX512
)

// best is the widest path the CPU (and the OS, for the AVX-512 registers)
// supports; use is the one the kernels take, lowered by the tests to
// compare every path on the same machine.
var best, use = widest(), widest()

var pathNames = [...]string{pathGo: "go", pathAVX2: "avx2", pathAVX512: "avx512"}

// Path names the kernels in use: "avx512", "avx2" or "go".
func Path() string { return pathNames[use] }

// Limit makes the kernels take at most the named path ("go", "avx2"), for
// benchmarks that compare paths on one machine, until restore is called.
// It is not safe while kernels run.
func Limit(name string) (restore func()) {
	prev := use
	for p, n := range pathNames {
		if n == name && path(p) < use {
			use = path(p)
		}
	}
	return func() { use = prev }
}

// RowMul sets out[k] = Σ_j val[j]·w[idx[j]·stride+k] for k < len(out).
// idx must be in [0, rows of w) with len(out) ≤ stride; it panics where
// the first or last index would read outside w (indices are ascending).
func RowMul(out []float32, idx []int32, val []float32, w []float32, stride int) {
	checkRows(idx, val, len(w), stride, len(out))
	clear(out)
	if len(idx) > 0 {
		mulAdd(out, idx, val, w, stride)
	}
}

// Combine sets out[k] = Σ_j coef[j]·src[off[j]+k] for k < len(out): a
// linear combination of rows of src that start at any element offsets, in
// any order (the models' item gradients: rows of P of an item's pairs).
// The terms are added in j order to a zero start, each product rounded
// before it is added, as a sequence of axpys into a cleared out would; the
// sums stay in registers. It panics where a row would leave src.
func Combine(out []float32, off []int32, coef []float32, src []float32) {
	if len(off) != len(coef) {
		panic("csrkern: offset and coefficient lengths differ")
	}
	for _, o := range off {
		if o < 0 || int(o)+len(out) > len(src) {
			panic("csrkern: row outside the matrix")
		}
	}
	clear(out)
	if len(off) > 0 && len(out) > 0 {
		mulAdd(out, off, coef, src, 1)
	}
}

// RowAcc adds val[j]·g[k] to acc[idx[j]·stride+k] for every j and k <
// len(g), in j order; the bounds are those of RowMul.
func RowAcc(acc []float32, idx []int32, val []float32, g []float32, stride int) {
	checkRows(idx, val, len(acc), stride, len(g))
	rowAcc(acc, idx, val, g, stride)
}

func checkRows(idx []int32, val []float32, n, stride, cols int) {
	if len(idx) != len(val) || cols > stride {
		panic("csrkern: index and value lengths differ, or row wider than its stride")
	}
	if len(idx) > 0 && (idx[0] < 0 || int(idx[len(idx)-1])*stride+cols > n) {
		panic("csrkern: column index outside the matrix")
	}
}

// mulAddGo is the reference of every mul kernel: out[k] += val[j]·src row
// idx[j], j in order, each product rounded before it is added.
func mulAddGo(out []float32, idx []int32, val []float32, src []float32, stride int) {
	for j, col := range idx {
		v, row := val[j], src[int(col)*stride:][:len(out)]
		for k := range out {
			out[k] += float32(v * row[k])
		}
	}
}

func rowAccGo(acc []float32, idx []int32, val []float32, g []float32, stride int) {
	for j, col := range idx {
		v, row := val[j], acc[int(col)*stride:][:len(g)]
		for k, x := range g {
			row[k] += float32(v * x)
		}
	}
}

// Cols holds the rows of a sparse matrix column by column within blocks
// of consecutive rows, for Xᵀ·G (AddTo) and X·W (MulTo): within a block,
// each column that has non-zeros there, with its non-zeros (row in the
// block, value) in row order. A fit's features do not change, so it is
// built once and read by every evaluation.
//
// Why (image rows; bags of words go row by row, see ByColumns): row by
// row (RowAcc), every non-zero reads and writes a row of the accumulator,
// F×C floats that do not fit in L2 (1.6 MB at F = 4096, C = 100), so the
// backward pass waits on memory. By columns, a column's sums
// stay in registers while its non-zeros read rows of G, and the
// accumulator row is read and written once a block. AddTo goes through
// the columns in ranges whose accumulator rows stay in L2, and for each
// range through the blocks, whose rows of G (about a hundred for image
// rows) stay in L1 or L2. Each sum still adds the same terms in row
// order, so AddTo gives the bits of RowAcc over the rows in order. MulTo
// turns this around: a column's row of W in registers, added into the
// block's rows of P.
type Cols struct {
	rows, dim, c int
	block, span  int // rows a block, columns a range
	ranges       int
	rs           []int // per block, ranges+1 indices into feat: where each range starts
	feat, end    []int32
	row          []int32
	val          []float32
	gpad         []float32 // a block of G (AddTo) or P (MulTo), padded and aligned
}

// Stride is c rounded up to whole 16-float vectors (64 bytes, a cache
// line). Rows of that stride in a 64-byte aligned matrix (Floats) load
// without crossing cache lines: on Zen 4 that doubled the AVX-512 kernels'
// rate from L2 (25 to 50 GFLOP/CPU-s at C = 100) and added about a tenth
// from L3 (docs/notes/2026-11-25-sparse-products-fma-peak.md). Give RowMul
// such a W.
func Stride(c int) int { return (c + 15) &^ 15 }

// Floats returns n zeroed floats starting on a 64-byte boundary.
func Floats(n int) []float32 {
	buf := make([]float32, n+15)
	skip := int(-uintptr(unsafe.Pointer(&buf[0])) % 64 / 4)
	return buf[skip : skip+n : skip+n]
}

// Cache budgets of a Cols (Zen 4: L1D 32 KiB, L2 1 MiB a core). A block's
// rows of G take about 40 KB, a little more than L1, or more where that
// is needed for its columns to have perColumn non-zeros on average (bags
// of words), up to half of L2; a range's accumulator rows a quarter of
// L2. Measured with make bench-sparse
// (docs/notes/2026-11-25-sparse-products-fma-peak.md): at C = 100 on image
// rows, blocks of 36, 43, 86 and 173 rows (3, 6, 12 and 24 non-zeros a
// column) gave 46.5, 48.3, 55.5 and 47.7 GFLOP/CPU-s, at C = 50 blocks of
// 173 rows 47.5 against 41.0 at 64.
const (
	gBudget, l2Budget, accBudget = 40 << 10, 512 << 10, 256 << 10
	perColumn                    = 12
)

// NewCols lays out rows 0..rows-1 (row(i) gives row i's indices, ascending
// and in [0, dim), with its values) for AddTo and MulTo with rows of G and
// P c floats wide. It is done with row(i)'s slices before calling row again,
// so row may return them in the same storage each time.
func NewCols(rows, dim, c int, row func(i int) ([]int32, []float32)) *Cols {
	nnz := 0
	for i := range rows {
		idx, _ := row(i)
		nnz += len(idx)
	}
	return newCols(rows, dim, c, blockRows(rows, dim, c, nnz), rangeCols(c), nnz, row)
}

// blockRows is the rows of a block of NewCols's layout.
func blockRows(rows, dim, c, nnz int) int {
	cs := Stride(max(c, 1))
	block := l2Budget / (4 * cs)
	if nnz > 0 {
		block = max(gBudget/(4*cs), min(block, perColumn*dim*rows/nnz))
	}
	return block
}

// rangeCols is the columns of a range of NewCols's layout.
func rangeCols(c int) int { return max(16, accBudget/(4*max(c, 1))) }

// ColsBytes is about the bytes NewCols holds for rows of dim columns with
// nnz non-zeros in all, spread like independent draws: 8 a non-zero, 8 a
// column present in a block, the block's range starts, the scratch block.
func ColsBytes(rows, dim, c int, nnz int64) int64 {
	if rows == 0 || dim == 0 {
		return 0
	}
	block := blockRows(rows, dim, c, int(min(nnz, math.MaxInt32)))
	nb := int64((rows + block - 1) / block)
	density := float64(nnz) / (float64(rows) * float64(dim))
	present := float64(dim) * (1 - math.Pow(1-min(density, 1), float64(block)))
	ranges := int64((dim + rangeCols(c) - 1) / rangeCols(c))
	return 8*nnz + int64(8*float64(nb)*present) + 8*nb*(ranges+1) + int64(4*block*Stride(max(c, 1)))
}

// newCols is NewCols with the block's rows, the range's columns and the
// rows' non-zeros given.
func newCols(rows, dim, c, block, span, nnz int, row func(i int) ([]int32, []float32)) *Cols {
	if block <= 0 || span <= 0 || dim <= 0 {
		panic("csrkern: Cols of blocks of no rows or ranges of no columns")
	}
	nb := (rows + block - 1) / block
	ranges := (dim + span - 1) / span
	t := &Cols{rows: rows, dim: dim, c: c, block: block, span: span, ranges: ranges, rs: make([]int, 0, nb*(ranges+1))}
	// The non-zeros' storage allocated once, exactly: grown block by block
	// it held up to a quarter more and left the outgrown copies as garbage
	// (about 1 GB more heap at Women's size).
	t.row, t.val = make([]int32, 0, nnz), make([]float32, 0, nnz)
	count, pos := make([]int32, dim), make([]int32, dim)
	for b := range nb {
		lo, hi := b*block, min((b+1)*block, rows)
		for i := lo; i < hi; i++ {
			idx, val := row(i)
			if len(idx) != len(val) {
				panic("csrkern: index and value lengths differ")
			}
			for _, f := range idx {
				if f < 0 || int(f) >= dim {
					panic("csrkern: column index outside the matrix")
				}
				count[f]++
			}
		}
		first, off := len(t.feat), len(t.row)
		for f, n := range count {
			if f%span == 0 {
				t.rs = append(t.rs, len(t.feat))
			}
			if n > 0 {
				pos[f] = int32(off)
				off += int(n)
				if off > math.MaxInt32 {
					panic("csrkern: Cols of 2³¹ non-zeros or more")
				}
				t.feat, t.end = append(t.feat, int32(f)), append(t.end, int32(off))
			}
		}
		t.rs = append(t.rs, len(t.feat))
		if off > cap(t.row) {
			panic("csrkern: rows gave more non-zeros than when counted")
		}
		t.row, t.val = t.row[:off], t.val[:off]
		for i := lo; i < hi; i++ {
			idx, val := row(i)
			for j, f := range idx {
				t.row[pos[f]], t.val[pos[f]] = int32(i-lo), val[j]
				pos[f]++
			}
		}
		for _, f := range t.feat[first:] {
			count[f] = 0
		}
	}
	t.feat, t.end = slices.Clone(t.feat), slices.Clone(t.end) // exactly sized
	return t
}

// NNZ is the number of non-zeros held.
func (t *Cols) NNZ() int { return len(t.row) }

// AddTo adds Xᵀ·G to acc (dim rows, stride floats apart, the first c
// used; c as given to NewCols): g holds G's rows, c floats each,
// contiguous. The result has the bits of RowAcc(acc, row i, G row i,
// stride) for i in order. AddTo keeps a copy of a block of G in t: one
// Cols is not for concurrent use.
func (t *Cols) AddTo(acc []float32, g []float32, c, stride int) {
	if c != t.c || c > stride || len(g) < t.rows*c || len(acc) < (t.dim-1)*stride+c {
		panic("csrkern: Cols.AddTo: another C than NewCols's, accumulator or G too short, or rows wider than their stride")
	}
	if t.rows == 0 || c == 0 {
		return
	}
	cs := Stride(c)
	gb := t.scratch(t.block * cs)
	nb := (t.rows + t.block - 1) / t.block
	for r := range t.ranges {
		for b := range nb {
			rs := t.rs[b*(t.ranges+1):]
			i0, i1 := rs[r], rs[r+1]
			if i0 == i1 {
				continue
			}
			lo, hi := b*t.block, min((b+1)*t.block, t.rows)
			for i := lo; i < hi; i++ {
				copy(gb[(i-lo)*cs:][:c], g[i*c:][:c])
			}
			first := 0
			if i0 > 0 {
				first = int(t.end[i0-1])
			}
			colsAdd(acc, stride, c, t.feat[i0:i1], t.end[i0:i1], first, t.row, t.val, gb, cs)
		}
	}
}

// colsAddGo adds, for each column feat[i] in turn, the sum of val[j]·(row
// row[j] of g, gs floats apart) over j from the previous column's end
// (first for i = 0) to end[i], to acc's row feat[i].
func colsAddGo(acc []float32, stride, c int, feat, end []int32, first int, row []int32, val []float32, g []float32, gs int) {
	lo := first
	for i, f := range feat {
		hi := int(end[i])
		mulAdd(acc[int(f)*stride:][:c], row[lo:hi], val[lo:hi], g, gs)
		lo = hi
	}
}

// colsMulGo is colsMul in Go.
func colsMulGo(p []float32, ps, c int, feat, end []int32, first int, row []int32, val []float32, w []float32, ws int) {
	lo := first
	for i, f := range feat {
		hi := int(end[i])
		wr := w[int(f)*ws:][:c]
		for j := lo; j < hi; j++ {
			v, pr := val[j], p[int(row[j])*ps:][:c]
			for k, x := range wr {
				pr[k] += float32(v * x)
			}
		}
		lo = hi
	}
}

// PreferMulTo reports whether MulTo is likely faster than RowMul row by
// row: where a block's rows of P fit in about L1, which NewCols picks for
// rows dense enough (image rows: 38 against 30 GFLOP/CPU-s at C = 100 on
// Zen 4), not for bags of words (25 against 32;
// docs/notes/2026-11-25-sparse-products-fma-peak.md).
func (t *Cols) PreferMulTo() bool { return blockFitsL1(t.block, t.c) }

// ByColumns reports whether a Cols of rows rows (dim columns, nnz
// non-zeros, products c wide) is worth building: whether its blocks' rows
// fit in about L1 (PreferMulTo). Where they do not (bags of words, about
// 1.5 % dense), RowMul and RowAcc row by row are faster both ways: a
// word's rows of W and of the accumulator are read by many rows and stay
// in cache (words are Zipf-distributed), where Cols gathers G's rows,
// read each by a few columns only (Zen 5, 20,000-row groups: backward 52
// against 37 GFLOP/CPU-s at C = 100;
// docs/notes/2026-11-27-bow-rows-gather-ceiling.md).
func ByColumns(rows, dim, c, nnz int) bool {
	return blockFitsL1(blockRows(rows, dim, c, nnz), c)
}

// blockFitsL1 reports whether block rows of c floats (padded to Stride)
// fit in the budget of about L1.
func blockFitsL1(block, c int) bool { return block*Stride(max(c, 1))*4 <= gBudget }

// MulTo sets P = X·W for the rows of t: out holds P's rows, c floats each
// (c as given to NewCols), contiguous; w holds W's dim rows, stride floats
// apart. The result has the bits of RowMul row by row.
func (t *Cols) MulTo(out []float32, w []float32, c, stride int) {
	if c != t.c || c > stride || len(out) < t.rows*c || len(w) < (t.dim-1)*stride+c {
		panic("csrkern: Cols.MulTo: another C than NewCols's, P or W too short, or rows wider than their stride")
	}
	if t.rows == 0 || c == 0 {
		return
	}
	cs := Stride(c)
	pb := t.scratch(t.block * cs)
	nb := (t.rows + t.block - 1) / t.block
	for b := range nb {
		lo, hi := b*t.block, min((b+1)*t.block, t.rows)
		clear(pb[:(hi-lo)*cs])
		rs := t.rs[b*(t.ranges+1):]
		if i0, i1 := rs[0], rs[t.ranges]; i0 < i1 {
			first := 0
			if i0 > 0 {
				first = int(t.end[i0-1])
			}
			colsMul(pb, cs, c, t.feat[i0:i1], t.end[i0:i1], first, t.row, t.val, w, stride)
		}
		for i := lo; i < hi; i++ {
			copy(out[i*c:][:c], pb[(i-lo)*cs:][:c])
		}
	}
}

// scratch returns t's n floats starting on a 64-byte boundary.
func (t *Cols) scratch(n int) []float32 {
	if len(t.gpad) < n {
		t.gpad = Floats(n)
	}
	return t.gpad[:n]
}

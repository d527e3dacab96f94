// Package csrkern holds the float32 kernels that multiply sparse feature
// rows (column indices ascending, with their values) by a dense row-major
// matrix: a row of P = X·W, and Xᵀ·G, row by row or through a column
// layout built once (Cols). Image features (ReLU activations, mostly
// zeros) and bags of words take them; with a few hundred non-zeros in 4096
// columns they do a seventh of a dense gemm's arithmetic.
//
// The kernels are AVX-512 or AVX2 assembly where the CPU has it
// (kern_avx512_amd64.s, kern_amd64.s) and Go elsewhere, and all give the
// bits of the plain loops below: every product rounded to float32, then
// added (no fused multiply-add), each output element summed in index order
// from zero. Columns are independent, so the assembly's tiles (16-lane
// vectors with a masked last one; AVX2 tiles of 96, 32, 8, 4 and 1 columns)
// change no result, and a fit does not depend on which machine ran it
// (TestKernelsMatchGo). The package is apart from models because a cgo
// package cannot hold Go assembly.
package csrkern

import "unsafe"

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
// of consecutive rows, for Xᵀ·G: within a block, column f's non-zeros
// (row in the block, value) in row order. A fit's features do not change,
// so it is built once and read by every backward pass.
//
// Why: row by row (RowAcc), every non-zero reads and writes a row of the
// accumulator, F×C floats that do not fit in L2 (1.6 MB at F = 4096, C =
// 100), so the backward pass waits on memory. By columns, a column's sums
// stay in registers while its non-zeros read rows of G, and the block's G
// rows (BlockRows) stay in L2; the accumulator row is read and written once
// a block. Each sum still adds the same terms in row order, so AddTo gives
// the bits of RowAcc over the rows in order.
type Cols struct {
	rows, dim, block int
	start            []int // per block, dim+1 offsets into row and val
	row              []int32
	val              []float32
	gpad             []float32 // AddTo's copy of a block of G
}

// l2Budget is the bytes of G rows a block of Cols may span: half of Zen 4's
// 1 MiB L2, leaving room for the accumulator rows and the stream of
// non-zeros.
const l2Budget = 512 << 10

// Stride is c rounded up to whole 16-float vectors (64 bytes, a cache
// line). Rows of that stride in a 64-byte aligned matrix (Floats) load
// without crossing cache lines: on Zen 4 that doubled the AVX-512 kernels'
// rate from L2 (25 to 50 GFLOP/CPU-s at C = 100) and added about a tenth
// from L3 (BENCHMARKS.md). Give RowMul such a W.
func Stride(c int) int { return (c + 15) &^ 15 }

// Floats returns n zeroed floats starting on a 64-byte boundary.
func Floats(n int) []float32 {
	buf := make([]float32, n+15)
	skip := int(-uintptr(unsafe.Pointer(&buf[0])) % 64 / 4)
	return buf[skip : skip+n : skip+n]
}

// BlockRows is the rows of a Cols block for G rows c floats wide.
func BlockRows(c int) int { return max(64, l2Budget/(4*Stride(max(c, 1)))) }

// NewCols lays out rows 0..rows-1 (row(i) gives row i's indices, ascending
// and in [0, dim), with its values) in blocks of block rows.
func NewCols(rows, dim, block int, row func(i int) ([]int32, []float32)) *Cols {
	if block <= 0 {
		panic("csrkern: Cols block of no rows")
	}
	nb := (rows + block - 1) / block
	t := &Cols{rows: rows, dim: dim, block: block, start: make([]int, nb*(dim+1))}
	nnz := 0
	for i := range rows {
		idx, val := row(i)
		if len(idx) != len(val) {
			panic("csrkern: index and value lengths differ")
		}
		s := t.start[(i/block)*(dim+1):][:dim+1]
		for _, f := range idx {
			if f < 0 || int(f) >= dim {
				panic("csrkern: column index outside the matrix")
			}
			s[f+1]++
		}
		nnz += len(idx)
	}
	// Counts to offsets, over all blocks in order.
	off := 0
	for b := range nb {
		s := t.start[b*(dim+1):][:dim+1]
		s[0] = off
		for f := 1; f <= dim; f++ {
			off += s[f]
			s[f] = off
		}
	}
	t.row, t.val = make([]int32, nnz), make([]float32, nnz)
	fill := make([]int, dim)
	for i := range rows {
		b := i / block
		if i%block == 0 {
			copy(fill, t.start[b*(dim+1):][:dim])
		}
		idx, val := row(i)
		for j, f := range idx {
			t.row[fill[f]], t.val[fill[f]] = int32(i-b*block), val[j]
			fill[f]++
		}
	}
	return t
}

// NNZ is the number of non-zeros held.
func (t *Cols) NNZ() int { return len(t.row) }

// AddTo adds Xᵀ·G to acc (dim rows, stride floats apart, the first c
// used): g holds G's rows, c floats each, contiguous. The result has the
// bits of RowAcc(acc, row i, G row i, stride) for i in order. AddTo keeps
// a copy of a block of G in t: one Cols is not for concurrent use.
func (t *Cols) AddTo(acc []float32, g []float32, c, stride int) {
	if c > stride || len(g) < t.rows*c || len(acc) < (t.dim-1)*stride+c {
		panic("csrkern: Cols.AddTo: accumulator or G too short, or rows wider than their stride")
	}
	if t.rows == 0 || c == 0 {
		return
	}
	cs := Stride(c)
	gb := t.scratch(t.block * cs)
	for b := range (t.rows + t.block - 1) / t.block {
		lo, hi := b*t.block, min((b+1)*t.block, t.rows)
		for i := lo; i < hi; i++ {
			copy(gb[(i-lo)*cs:][:c], g[i*c:][:c])
		}
		s := t.start[b*(t.dim+1):][:t.dim+1]
		for f := range t.dim {
			if lo, hi := s[f], s[f+1]; lo < hi {
				mulAdd(acc[f*stride:][:c], t.row[lo:hi], t.val[lo:hi], gb, cs)
			}
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

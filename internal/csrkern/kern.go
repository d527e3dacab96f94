// Package csrkern holds the float32 kernels that multiply sparse feature
// rows (column indices ascending, with their values) by a dense row-major
// matrix: a row of P = X·W, and a row's share of Xᵀ·G. Image features
// (ReLU activations, mostly zeros) and bags of words take them; with a few
// hundred non-zeros in 4096 columns they do a seventh of a dense gemm's
// arithmetic.
//
// The kernels are AVX2 assembly where the CPU has it (kern_amd64.s) and Go
// elsewhere, and both give the bits of the plain loop below: every product
// rounded to float32, then added (no fused multiply-add), each output
// element summed in index order from zero. Columns are independent, so the
// assembly's tiles of 96, 32, 8, 4 and 1 columns change no result, and a fit
// does not depend on which machine ran it (TestKernelsMatchGo). The package
// is apart from models because a cgo package cannot hold Go assembly.
package csrkern

// RowMul sets out[k] = Σ_j val[j]·w[idx[j]·stride+k] for k < len(out).
// idx must be in [0, rows of w) with len(out) ≤ stride; it panics where
// the first or last index would read outside w (indices are ascending).
func RowMul(out []float32, idx []int32, val []float32, w []float32, stride int) {
	checkRows(idx, val, len(w), stride, len(out))
	rowMul(out, idx, val, w, stride)
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

func rowMulGo(out []float32, idx []int32, val []float32, w []float32, stride int) {
	clear(out)
	for j, col := range idx {
		v, row := val[j], w[int(col)*stride:][:len(out)]
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

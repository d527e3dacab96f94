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

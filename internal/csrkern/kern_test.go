package csrkern

import (
	"math"
	"math/rand/v2"
	"testing"
)

// draw fills v with zeros, subnormals, values whose products overflow, and
// ordinary values of varied magnitude.
func draw(rng *rand.Rand, v []float32) {
	for i := range v {
		switch rng.IntN(20) {
		case 0:
			v[i] = 0
		case 1:
			v[i] = float32(rng.NormFloat64() * 1e-39)
		case 2:
			v[i] = float32(rng.NormFloat64() * 1e25)
		default:
			v[i] = float32(rng.NormFloat64() * math.Exp(rng.NormFloat64()))
		}
	}
}

// sparseRow draws ascending column indices in [0, rows) with values.
func sparseRow(rng *rand.Rand, rows, nnz int) ([]int32, []float32) {
	var idx []int32
	for c := range rows {
		if rng.IntN(rows) < nnz {
			idx = append(idx, int32(c))
		}
	}
	val := make([]float32, len(idx))
	draw(rng, val)
	return idx, val
}

// TestKernelsMatchGo: whatever the CPU runs (the AVX2 tiles here), RowMul
// and RowAcc give the bits of the plain loops, at widths around every tile
// boundary, strides wider than the row, empty rows and full ones.
func TestKernelsMatchGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	widths := []int{1, 3, 4, 5, 7, 8, 9, 12, 31, 32, 33, 36, 40, 63, 64, 95, 96, 97, 100, 104, 128, 129, 200}
	for _, cols := range widths {
		for _, pad := range []int{0, 1, 5} {
			stride, rows := cols+pad, 1+rng.IntN(60)
			for _, nnz := range []int{0, 1, rows / 3, rows} {
				idx, val := sparseRow(rng, rows, nnz)
				w := make([]float32, rows*stride)
				draw(rng, w)
				got, want := make([]float32, cols), make([]float32, cols)
				draw(rng, got) // RowMul overwrites
				RowMul(got, idx, val, w, stride)
				rowMulGo(want, idx, val, w, stride)
				same(t, "RowMul", cols, stride, len(idx), got, want)

				g := make([]float32, cols)
				draw(rng, g)
				accGot := make([]float32, rows*stride)
				draw(rng, accGot)
				accWant := append([]float32(nil), accGot...)
				RowAcc(accGot, idx, val, g, stride)
				rowAccGo(accWant, idx, val, g, stride)
				same(t, "RowAcc", cols, stride, len(idx), accGot, accWant)
			}
		}
	}
}

func same(t *testing.T, what string, cols, stride, nnz int, got, want []float32) {
	t.Helper()
	for k := range want {
		if math.Float32bits(got[k]) != math.Float32bits(want[k]) && !(got[k] != got[k] && want[k] != want[k]) {
			t.Fatalf("%s cols=%d stride=%d nnz=%d: element %d is %v, the Go loop's %v", what, cols, stride, nnz, k, got[k], want[k])
		}
	}
}

// TestPlainArithmetic pins the Go loops themselves on a case worked by hand.
func TestPlainArithmetic(t *testing.T) {
	w := []float32{1, 2, 9, 3, 4, 9, 5, 6, 9} // 3 rows, stride 3, 2 columns used
	out := make([]float32, 2)
	RowMul(out, []int32{0, 2}, []float32{2, -1}, w, 3)
	if out[0] != 2*1-5 || out[1] != 2*2-6 {
		t.Fatalf("RowMul = %v, want [-3 -2]", out)
	}
	acc := make([]float32, 9)
	RowAcc(acc, []int32{1, 2}, []float32{2, 3}, []float32{1, -1}, 3)
	want := []float32{0, 0, 0, 2, -2, 0, 3, -3, 0}
	for i := range want {
		if acc[i] != want[i] {
			t.Fatalf("RowAcc = %v, want %v", acc, want)
		}
	}
}

// TestBoundsPanic: an index past the matrix panics instead of reading it.
func TestBoundsPanic(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for an index past the matrix")
		}
	}()
	RowMul(make([]float32, 2), []int32{0, 3}, []float32{1, 1}, make([]float32, 9), 3)
}

package wnnkern

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDistGrad: Dist and Grad (whichever kernels this CPU runs) agree with
// the plain float64 sums to float32 rounding, at lengths that exercise each
// loop of the kernels.
func TestDistGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 47, 100, 4096} {
		w2, a, b, acc := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
		var want float64
		for j := range n {
			w2[j], a[j], b[j], acc[j] = float32(rng.Float64()), float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())
			d := float64(a[j]) - float64(b[j])
			want += float64(w2[j]) * d * d
		}
		if got := float64(Dist(w2, a, b, b)); math.Abs(got-want) > 1e-6*want {
			t.Errorf("n=%d: Dist %v, want %v", n, got, want)
		}
		g := float32(rng.NormFloat64())
		before := append([]float32(nil), acc...)
		Grad(acc, g, a, b)
		for j := range n {
			d := float64(a[j]) - float64(b[j])
			if w := float64(before[j]) + float64(g)*d*d; math.Abs(float64(acc[j])-w) > 1e-6*max(1, math.Abs(w)) {
				t.Fatalf("n=%d: Grad element %d is %v, want %v", n, j, acc[j], w)
			}
		}
	}
}

// BenchmarkKernels times one 4096-d pair with its rows in cache: the
// distance, the gradient term, and the Go versions (what CPUs without AVX2
// run).
func BenchmarkKernels(b *testing.B) {
	const n = 4096
	rng := rand.New(rand.NewPCG(1, 1))
	w2, x, y, acc := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	for j := range n {
		w2[j], x[j], y[j] = float32(rng.Float64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	var sink float32
	b.Run("Dist", func(b *testing.B) {
		for b.Loop() {
			sink += Dist(w2, x, y, y)
		}
	})
	b.Run("Grad", func(b *testing.B) {
		for b.Loop() {
			Grad(acc, 1e-3, x, y)
		}
	})
	b.Run("distGo", func(b *testing.B) {
		for b.Loop() {
			sink += distGo(w2, x, y)
		}
	})
	b.Run("gradGo", func(b *testing.B) {
		for b.Loop() {
			gradGo(acc, 1e-3, x, y)
		}
	})
	_ = sink
}

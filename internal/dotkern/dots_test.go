package dotkern

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatchesGo: Dots (the assembly where the CPU has AVX2) gives the bits
// of dot for every pair, at lengths around the 4-block boundary, with
// query and candidate counts that leave every remainder path in use, rows
// off 32-byte alignment, and values from subnormal to near overflow.
func TestMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	draw := func(v []float64) {
		for i := range v {
			switch rng.IntN(20) {
			case 0:
				v[i] = 0
			case 1:
				v[i] = rng.NormFloat64() * 1e-310 // subnormal
			case 2:
				v[i] = rng.NormFloat64() * 1e154 // products overflow to ±Inf
			default:
				v[i] = rng.NormFloat64() * math.Exp(rng.NormFloat64())
			}
		}
	}
	for _, d := range []int{0, 1, 3, 4, 5, 7, 8, 9, 21, 84, 101, 257} {
		for _, nq := range []int{1, 2, 3, 5, 2*qBlock + 3} {
			for _, nv := range []int{1, 3, 4, 6, 9} {
				q := make([]float64, nq*d+1)[1:] // off alignment
				v := make([]float64, nv*d+3)[3:]
				draw(q)
				draw(v)
				ls := nv + 2
				s := make([]float64, nq*ls)
				Dots(s, ls, q, nq, v, nv, d)
				for i := range nq {
					for j := range nv {
						want := dot(q[i*d:(i+1)*d], v[j*d:(j+1)*d])
						if got := s[i*ls+j]; math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
							t.Fatalf("d=%d nq=%d nv=%d: s[%d][%d] = %v (%#x), dot gives %v (%#x)", d, nq, nv, i, j, got, math.Float64bits(got), want, math.Float64bits(want))
						}
					}
				}
			}
		}
	}
}

// TestDotValue: dot is the dot product, summed in its stated order (lanes
// then tail), on a hand-worked case where the order shows: 1e16 + 1 − 1e16
// loses the 1 in one lane, and the tail is added last.
func TestDotValue(t *testing.T) {
	a := []float64{1e16, 1, 0, 0, 1, -1e16, 0, 0, 0.5}
	b := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1}
	// Lanes: l0 = 1e16 + 1 = 1e16 (rounded), l1 = 1 + (−1e16) = −1e16 + 1,
	// rounded to −1e16; l2 = l3 = 0. (l0 + l2) + (l1 + l3) = 0; + 0.5.
	if got := dot(a, b); got != 0.5 {
		t.Fatalf("dot = %v, want 0.5", got)
	}
	if got := dot([]float64{1, 2, 3}, []float64{4, 5, 6}); got != 32 {
		t.Fatalf("dot = %v, want 32", got)
	}
}

func BenchmarkDots(b *testing.B) {
	const nq, nv, d = 64, 2048, 101
	rng := rand.New(rand.NewPCG(1, 1))
	q, v := make([]float64, nq*d), make([]float64, nv*d)
	for i := range q {
		q[i] = rng.NormFloat64()
	}
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	s := make([]float64, nq*nv)
	b.SetBytes(int64(8 * nq * nv * d))
	for b.Loop() {
		Dots(s, nv, q, nq, v, nv, d)
	}
	b.ReportMetric(float64(2*nq*nv*d)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

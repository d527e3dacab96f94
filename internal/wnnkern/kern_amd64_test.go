package wnnkern

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestKernelsMatchGo: the AVX2 kernels and their Go versions give the
// same bits, at lengths around every loop boundary (32-blocks, 8-blocks,
// scalar rest), on slices starting off 32-byte alignment, with values from
// subnormal to near overflow.
func TestKernelsMatchGo(t *testing.T) {
	if !hasAVX2 {
		t.Skip("SKIPPING the AVX2 kernels: this CPU lacks AVX2 (or GODEBUG turned it off): only the Go kernels run")
	}
	rng := rand.New(rand.NewPCG(11, 11))
	draw := func(v []float32) {
		for i := range v {
			switch rng.IntN(20) {
			case 0:
				v[i] = 0
			case 1:
				v[i] = float32(rng.NormFloat64() * 1e-39) // subnormal
			case 2:
				v[i] = float32(rng.NormFloat64() * 1e12) // squares overflow to +Inf
			default:
				v[i] = float32(rng.NormFloat64() * math.Exp(rng.NormFloat64()))
			}
		}
	}
	lengths := []int{0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 39, 40, 63, 64, 65, 100, 255, 4095, 4096, 4097}
	for n := range 200 {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		for off := range 4 {
			w2, a, b, acc := make([]float32, n+off), make([]float32, n+off), make([]float32, n+2*off), make([]float32, n+3*off)
			for _, v := range [][]float32{w2, a, b, acc} {
				draw(v)
			}
			for i := range w2 {
				w2[i] = float32(math.Abs(float64(w2[i])))
			}
			w2, a, b, acc = w2[off:], a[off:off+n], b[2*off:], acc[3*off:]
			got, want := distAVX2(w2, a, b[:n], unsafe.SliceData(b)), distGo(w2, a, b)
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("n=%d off=%d: distAVX2 %v (%#x), distGo %v (%#x)", n, off, got, math.Float32bits(got), want, math.Float32bits(want))
			}
			g := float32(rng.NormFloat64())
			accAsm := append([]float32(nil), acc...)
			gradAVX2(accAsm, g, a, b[:n])
			gradGo(acc, g, a, b)
			for j := range acc {
				if math.Float32bits(accAsm[j]) != math.Float32bits(acc[j]) {
					t.Fatalf("n=%d off=%d: gradient element %d: gradAVX2 %v, gradGo %v", n, off, j, accAsm[j], acc[j])
				}
			}
		}
	}
}

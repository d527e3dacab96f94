package wnnkern

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasAVX2 selects the assembly kernels; the Go ones give the same bits.
var hasAVX2 = cpu.X86.HasAVX2

// Dist is Σ_j w2_j (a_j − b_j)² over j < len(w2); a and b must be at
// least as long as w2. While it reads them it prefetches the first
// len(w2) values (or fewer) of next, the row the caller reads next (b again
// if none): a row from DRAM then arrives while this pair is computed
// instead of stalling the next one.
func Dist(w2, a, b, next []float32) float32 {
	a, b = a[:len(w2)], b[:len(w2)] // the assembly trusts these lengths
	if hasAVX2 {
		return distAVX2(w2, a, b, unsafe.SliceData(next))
	}
	return distGo(w2, a, b)
}

// Grad adds g·(a_j − b_j)² to acc_j for j < len(acc).
func Grad(acc []float32, g float32, a, b []float32) {
	a, b = a[:len(acc)], b[:len(acc)]
	if hasAVX2 {
		gradAVX2(acc, g, a, b)
		return
	}
	gradGo(acc, g, a, b)
}

//go:noescape
func distAVX2(w2, a, b []float32, next *float32) float32

//go:noescape
func gradAVX2(acc []float32, alpha float32, a, b []float32)

// Package wnnkern holds the float32 kernels of the WNN model's dense pairs:
// the weighted squared distance Σ_j w²_j (a_j − b_j)² and its gradient term.
// They are AVX2 assembly where the CPU has it (kern_amd64.s) and Go
// elsewhere, and the two give bit-identical results (TestKernelsMatchGo), so
// a fit does not depend on which machine ran it. That fixes the arithmetic:
// no fused multiply-add (the explicit float32 conversions in kern.go forbid Go
// from fusing), and the distance's sum runs in a fixed lane layout with a
// fixed reduction. The package is apart from models because a package that
// uses cgo (models' OpenBLAS binding) cannot hold Go assembly.
package wnnkern

// Package csrkern holds the float32 kernels that multiply sparse feature
// rows (column indices ascending, with their values) by a dense row-major
// matrix: a row of P = X·W, and a row's share of Xᵀ·G. Image features
// (ReLU activations, mostly zeros) and bags of words take them; with a few
// hundred non-zeros in 4096 columns they do a seventh of a dense gemm's
// arithmetic.
//
// The kernels are AVX2 assembly where the CPU has it (kern_amd64.s) and Go
// elsewhere, and both give the bits of the plain loops in kern.go: every
// product rounded to float32, then added (no fused multiply-add), each
// output element summed in index order from zero. Columns are independent, so the
// assembly's tiles of 96, 32, 8, 4 and 1 columns change no result, and a fit
// does not depend on which machine ran it (TestKernelsMatchGo). The package
// is apart from models because a cgo package cannot hold Go assembly.
package csrkern

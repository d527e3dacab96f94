// Package csrkern holds the float32 kernels that multiply sparse feature
// rows (column indices ascending, with their values) by a dense row-major
// matrix: P = X·W and Xᵀ·G, row by row (RowMul, RowAcc) or through a
// column layout built once (Cols), which reuses rows in L1. Image features (ReLU activations, mostly
// zeros) and bags of words take them; with a few hundred non-zeros in 4096
// columns they do a seventh of a dense gemm's arithmetic.
//
// The kernels are AVX-512 or AVX2 assembly where the CPU has it
// (kern_avx512_amd64.s, kern_avx2_amd64.s) and Go elsewhere, and all give the
// bits of the plain loops below: every product rounded to float32, then
// added (no fused multiply-add), each output element summed in index order
// from zero. Columns are independent, so the assembly's tiles (16-lane
// vectors with a masked last one; 8-lane vectors, the last masked or split
// into 4, 2 and 1 lanes)
// change no result, and a fit does not depend on which machine ran it
// (TestKernelsMatchGo). The package is apart from models because a cgo
// package cannot hold Go assembly.
package csrkern

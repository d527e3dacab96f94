//go:build openblas

package models

// void openblas_set_num_threads(int num_threads);
// int openblas_get_num_threads(void);
// char *openblas_get_corename(void);
// char *openblas_get_config(void);
import "C"

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/netlib/blas/netlib"
)

// openblasGemm is gonum's pure-Go BLAS with only the matrix products sent to
// OpenBLAS: the sparse kernels make millions of short Saxpy calls (length
// C ≈ 100), where a cgo call costs more than the work (the sparse objective
// was 40% slower with every routine in OpenBLAS).
type openblasGemm struct{ gonum.Implementation }

func (openblasGemm) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	netlib.Implementation{}.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (openblasGemm) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	netlib.Implementation{}.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func init() {
	// One OpenBLAS thread: its results depend on its thread count, and the
	// kernels already run gemms on fixed 512-row blocks from parallel item
	// groups, so parallelism comes from Go and sums stay in a fixed order.
	// OPENBLAS_NUM_THREADS would have to be in the environment before the
	// process starts (os.Setenv here is too late: the library has read it).
	C.openblas_set_num_threads(1)
	blas32.Use(openblasGemm{})
	blas64.Use(openblasGemm{})
}

// openblasThreads is OpenBLAS's current thread count, for the tests.
func openblasThreads() int { return int(C.openblas_get_num_threads()) }

// openblasCore names the CPU kernel OpenBLAS picked.
func openblasCore() string { return C.GoString(C.openblas_get_corename()) }

func blasInfo() BLASInfo {
	cfg := C.GoString(C.openblas_get_config())
	return BLASInfo{Impl: "openblas", Version: openblasVersion(cfg), Kernel: openblasCore(), Config: cfg}
}

// Package cpuflags decides which of OpenBLAS's x86-64 CPU kernels a CPU can
// execute, from the CPU's feature flags as Linux's /proc/cpuinfo names them.
//
// OpenBLAS honours OPENBLAS_CORETYPE without asking the CPU: a kernel forced
// onto a CPU that lacks its instructions stops the process with SIGILL at
// its first matrix product. The binary (blas_kernel), the tests that force a
// kernel and `make test-kernels` ask this package first, so such a CPU gets
// a one-line reason instead.
package cpuflags

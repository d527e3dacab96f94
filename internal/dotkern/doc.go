// Package dotkern computes the retrieval scores of recommend: dot products
// of float64 query rows with float64 candidate rows, in one fixed
// arithmetic on every machine. The scores used to come from BLAS dgemm,
// whose summation order differs between OpenBLAS kernels (and gonum), so
// recommend's lists and distances differed in the last digits from build
// to build. Here every dot product sums element k into lane k mod 4 for
// the whole 4-blocks, reduces the lanes as (l0 + l2) + (l1 + l3), then adds
// the rest in order; products and sums are rounded separately (no fused
// multiply-add). The AVX2 assembly (dots_amd64.s) and the Go code give the
// same bits (TestMatchesGo). It is apart from models because a package that
// uses cgo cannot hold Go assembly.
package dotkern

package dotkern

import "golang.org/x/sys/cpu"

// The float32 kernels: AVX-512 where the CPU (and GODEBUG's cpu.avx512f)
// allows, else AVX2 with FMA, else Go. Which one runs changes scores only
// within Bound32. The AVX-512 code uses the foundation's instructions
// only (16-bit mask moves, not AVX512DQ's 8-bit ones).
var (
	useAVX512 = cpu.X86.HasAVX512F
	useFMA    = cpu.X86.HasAVX2 && cpu.X86.HasFMA
)

// scores16x16 sets s[i*ls+j] = Σ_k q[i*d+k]·p[k*16+j] for i, j < 16: query
// rows i of q against one panel p.
//
//go:noescape
func scores16x16(s *float32, ls int, q *float32, d int, p *float32)

// scores4x16 is scores16x16 for 4 query rows, in AVX2.
//
//go:noescape
func scores4x16(s *float32, ls int, q *float32, d int, p *float32)

// screen16 is Screen's AVX-512 loop over n, a multiple of 16.
//
//go:noescape
func screen16(s *float32, vn *float64, n int, eq, thr float64) int

// screen8 is Screen's AVX2 loop over n, a multiple of 8.
//
//go:noescape
func screen8(s *float32, vn *float64, n int, eq, thr float64) int

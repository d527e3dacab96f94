package dotkern

import "golang.org/x/sys/cpu"

// The float32 kernels: AVX-512 where the CPU (and GODEBUG's cpu.avx512f)
// allows, else AVX2 with FMA, else Go. Which one runs changes scores only
// within Bound32.
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

package main

import "golang.org/x/sys/cpu"

// fmaZ runs n iterations of 12 independent 16-lane FMAs; fmaY of 8-lane ones.
//
//go:noescape
func fmaZ(n int)

//go:noescape
func fmaY(n int)

// fmaLoop returns the widest FMA loop the CPU has, its name and the flops
// of one iteration (12 FMAs of 2 flops a lane); avx2 limits it to AVX2's
// 8 lanes, as on a CPU without AVX-512 (-path avx2).
func fmaLoop(avx2 bool) (func(n int), string, float64) {
	switch {
	case cpu.X86.HasAVX512F && !avx2:
		return fmaZ, "AVX-512 (16 lanes)", 12 * 16 * 2
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return fmaY, "AVX2 (8 lanes)", 12 * 8 * 2
	}
	return nil, "none", 0
}

package main

import (
	"fmt"
	"runtime"
	"sync"
	"time"
)

// The machine's own scaling, without monomer: the same fixed work split
// over P goroutines, for four kinds of work a stage does. A stage that
// scales below what its kind of work scales on the machine is held back by
// the machine (shared caches, memory bandwidth, two vCPUs on one core),
// not by its code; one that scales below compute's is held by something.

// machineKernel is one kind of work: run does part w of parts of it.
type machineKernel struct {
	name, what string
	setup      func() // allocates and touches its memory, unmeasured
	run        func(w, parts int) float64
}

var sink float64 // keeps the kernels' sums alive

func machineKernels() []machineKernel {
	const (
		computeIters = 1 << 27 // multiply-adds of 8 chains each: about 1 s on one core
		cacheBytes   = 256 << 10
		cachePasses  = 1 << 16 // passes over a 256 KB buffer per goroutine
		memBytes     = 1 << 30
		memPasses    = 16
		gatherRows   = 1 << 21 // random 4 KB rows of the 1 GB array
		rowWords     = 512     // 4 KB
	)
	var big []uint64 // memory's and gather's array, shared
	bigSetup := func() {
		if big == nil {
			big = make([]uint64, memBytes/8)
			for i := range big {
				big[i] = uint64(i)
			}
		}
	}
	return []machineKernel{
		{"compute", "registers only (8 chains of float64 multiply-add)", func() {}, func(w, parts int) float64 {
			var a [8]float64
			for i := range a {
				a[i] = float64(i + w)
			}
			for range computeIters / parts {
				for i := range a {
					a[i] = a[i]*0.999999 + 1e-9
				}
			}
			return a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7]
		}},
		{"cache", "sums over a 256 KB buffer per goroutine (in its core's L2)", func() {}, func(w, parts int) float64 {
			buf := make([]uint64, cacheBytes/8)
			for i := range buf {
				buf[i] = uint64(i)
			}
			return sum8(buf, cachePasses/parts)
		}},
		{"memory", "sums over its part of a 1 GB array, 16 passes (streaming reads)", bigSetup, func(w, parts int) float64 {
			lo, hi := len(big)*w/parts, len(big)*(w+1)/parts
			return sum8(big[lo:hi], memPasses)
		}},
		{"gather", "sums of 4 KB rows at random places in a 1 GB array (a sparse row's gathers)", bigSetup, func(w, parts int) float64 {
			x := uint64(w)*0x9e3779b97f4a7c15 + 1
			var s float64
			rows := uint64(len(big) / rowWords)
			for range gatherRows / parts {
				x = x*6364136223846793005 + 1442695040888963407
				r := (x >> 33) % rows
				s += sum8(big[r*rowWords:(r+1)*rowWords], 1)
			}
			return s
		}},
	}
}

// sum8 sums xs passes times over eight integer accumulators: one core
// can ask for more bytes a second than memory gives it, so the memory
// kernels measure memory, not the adds.
func sum8(xs []uint64, passes int) float64 {
	var a [8]uint64
	for range passes {
		i := 0
		for ; i+8 <= len(xs); i += 8 {
			a[0] += xs[i]
			a[1] += xs[i+1]
			a[2] += xs[i+2]
			a[3] += xs[i+3]
			a[4] += xs[i+4]
			a[5] += xs[i+5]
			a[6] += xs[i+6]
			a[7] += xs[i+7]
		}
		for ; i < len(xs); i++ {
			a[0] += xs[i]
		}
	}
	return float64(a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7])
}

// machineScaling prints, for each kernel, its wall at each P (best of
// reps) and its speedup over P = 1.
func machineScaling(procs []int, reps int) {
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	fmt.Printf("machine: the same work split over P goroutines, best of %d\n", reps)
	fmt.Printf("%-26s %3s %8s %7s  %s\n", "machine", "P", "wall_s", "speedup", "work")
	for _, k := range machineKernels() {
		k.setup()
		var base time.Duration
		for i, p := range procs {
			runtime.GOMAXPROCS(p)
			best := time.Duration(1 << 62)
			for range reps {
				start := time.Now()
				var wg sync.WaitGroup
				sums := make([]float64, p)
				for w := range p {
					wg.Add(1)
					go func() {
						defer wg.Done()
						sums[w] = k.run(w, p)
					}()
				}
				wg.Wait()
				best = min(best, time.Since(start))
				for _, s := range sums {
					sink += s
				}
			}
			if i == 0 {
				base = best
			}
			fmt.Printf("%-26s %3d %8.2f %7.2f  %s\n", "machine."+k.name, p, best.Seconds(), base.Seconds()/best.Seconds(), k.what)
		}
	}
}

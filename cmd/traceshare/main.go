// Command traceshare prints the concurrency profile of a Go execution trace
// (monomer run --trace FILE, with --cpuprofile for the per-function split):
// the share of wall time with fewer running goroutines than P and the
// functions the CPU samples of that time fell in.
//
//	go run ./cmd/traceshare -p 2 [-top 25] trace.out
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"

	"monomer/internal/traceutil"
)

func main() {
	procs := flag.Int("p", 0, "GOMAXPROCS of the traced run (required)")
	top := flag.Int("top", 25, "functions to list")
	cpus := flag.Int("cpus", 0, "cores of the traced machine: with P above it, also project the speedup on P cores")
	flag.Parse()
	if flag.NArg() != 1 || *procs < 1 {
		fmt.Fprintln(os.Stderr, "usage: traceshare -p P [-top N] TRACE")
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "traceutil:", err)
		os.Exit(1)
	}
	defer f.Close()
	s, err := traceutil.Read(f, *procs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("wall %.2f s  P %d  mean running %.2f  share with fewer than P running %.3f\n",
		s.Wall.Seconds(), s.Procs, s.Busy(), s.Short())
	for n, d := range s.Running() {
		fmt.Printf("  running %d: %6.2f s (%.3f)\n", n, d.Seconds(), d.Seconds()/s.Wall.Seconds())
	}
	if *cpus > 0 {
		fmt.Printf("mean running or runnable %.2f; projected speedup on %d cores over %d: %.2f\n",
			s.MeanReady(), s.Procs, *cpus, s.Projected(*cpus, s.Procs))
		list(s.Samples, "were running or runnable", s.Narrow, s.TopNarrow(*top))
	}
	serial := s.Serial()
	fmt.Printf("serial share of CPU samples %.3f (Amdahl speedup bound at P=2 %.2f, P=16 %.2f)\n",
		serial, 1/(serial+(1-serial)/2), 1/(serial+(1-serial)/16))
	outer := make([]traceutil.FuncSamples, 0, len(s.Outer))
	for f, c := range s.Outer {
		outer = append(outer, traceutil.FuncSamples{Func: f, Samples: c})
	}
	slices.SortFunc(outer, func(a, b traceutil.FuncSamples) int { return b.Samples - a.Samples })
	for _, fs := range outer[:min(8, len(outer))] {
		fmt.Printf("  goroutine %-60s %6d samples\n", fs.Func, fs.Samples)
	}
	list(s.Samples, "ran", s.Under, s.Top(*top))
}

// list prints the samples taken while fewer than P goroutines were in the
// state named (of all samples), and the functions with the most.
func list(samples int, state string, by map[string]int, top []traceutil.FuncSamples) {
	n := 0
	for _, c := range by {
		n += c
	}
	fmt.Printf("CPU samples %d, %d while fewer than P %s:\n", samples, n, state)
	for _, fs := range top {
		fmt.Printf("  %6d %5.1f%%  %s\n", fs.Samples, 100*float64(fs.Samples)/float64(max(n, 1)), fs.Func)
	}
}

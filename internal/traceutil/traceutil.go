// Package traceutil reads a Go execution trace (runtime/trace, as `monomer
// run --trace` writes it) and measures how much of the wall time ran fewer
// goroutines than there were Ps, and in which code: the serial share that
// bounds the speedup more cores can give (Amdahl).
package traceutil

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

// Summary is one trace's concurrency profile.
type Summary struct {
	// Procs is the P count the shares are taken against (GOMAXPROCS of the
	// traced run).
	Procs int
	// Wall is the time from the trace's first event to its last.
	Wall time.Duration
	// Ready[r][q] is the wall time during which r goroutines were running
	// and q were running or runnable (each capped at Procs, so index Procs
	// holds Procs and more): with more Ps than cores, a runnable goroutine
	// waits for the kernel to run its thread, and q is what as many cores
	// as Ps would run.
	Ready [][]time.Duration
	// Under maps a function to the CPU-profile samples taken while fewer
	// than Procs goroutines ran (keys: see frameOf): where the serial time
	// goes. The samples are
	// in the trace only when a CPU profile ran with it (--cpuprofile).
	Under map[string]int
	// Narrow is Under for the samples taken while fewer than Procs
	// goroutines were running or runnable: in a trace at more Ps than
	// cores, the code that would leave cores idle on a machine with as
	// many cores as Ps.
	Narrow map[string]int
	// Samples counts all CPU-profile samples of the trace.
	Samples int
	// Outer counts all CPU-profile samples by their goroutine's outermost
	// frame outside package runtime (see frameOf): the share of the
	// samples outside the worker goroutines of parallel sections is the
	// serial fraction of the CPU time, a measure contention from other
	// processes does not move (Short does: a worker descheduled by the
	// kernel leaves the others waiting).
	Outer map[string]int
}

// Running returns for each n the wall time during which exactly n
// goroutines were running (index Procs: Procs and more), whatever were
// runnable.
func (s *Summary) Running() []time.Duration {
	out := make([]time.Duration, len(s.Ready))
	for r, row := range s.Ready {
		for _, d := range row {
			out[r] += d
		}
	}
	return out
}

// Short is the share of the wall time during which fewer than Procs
// goroutines ran.
func (s *Summary) Short() float64 {
	if s.Wall <= 0 {
		return 0
	}
	var t time.Duration
	for _, d := range s.Running()[:s.Procs] {
		t += d
	}
	return float64(t) / float64(s.Wall)
}

// Busy is the mean number of running goroutines over the wall time,
// counting at most Procs at a time: CPU / wall as the scheduler saw it.
func (s *Summary) Busy() float64 {
	if s.Wall <= 0 {
		return 0
	}
	var t float64
	for n, d := range s.Running() {
		t += float64(n) * float64(d)
	}
	return t / float64(s.Wall)
}

// Projected is the speedup over the traced machine's cpus cores that k
// cores would give, read off a trace taken at Procs ≥ k Ps (more Ps than
// cores: the kernel shares the cores among the goroutines, and the trace
// shows how many the code keeps running or ready to run). A stretch with
// r running and q ready did min(r, cpus) cores' work, which k cores do in
// min(r, cpus)/min(q, k) of its time; a stretch with none running (reading
// a file, waiting on the disk) keeps its time. It leaves out what more
// cores do not bring: memory bandwidth, caches, the kernel's own work.
func (s *Summary) Projected(cpus, k int) float64 {
	if s.Wall <= 0 || cpus < 1 || k < 1 {
		return 0
	}
	var then float64
	for r, row := range s.Ready {
		for q, d := range row {
			if r == 0 || q == 0 {
				then += float64(d)
				continue
			}
			then += float64(d) * float64(min(r, cpus)) / float64(min(q, k))
		}
	}
	return float64(s.Wall) / then
}

// MeanReady is the mean number of goroutines running or runnable over
// the wall time, counting at most Procs at a time.
func (s *Summary) MeanReady() float64 {
	if s.Wall <= 0 {
		return 0
	}
	var t float64
	for _, row := range s.Ready {
		for q, d := range row {
			t += float64(q) * float64(d)
		}
	}
	return t / float64(s.Wall)
}

// Read parses a trace and summarises it against procs Ps.
func Read(r io.Reader, procs int) (*Summary, error) {
	if procs < 1 {
		return nil, fmt.Errorf("traceutil: procs %d < 1", procs)
	}
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("traceutil: %w", err)
	}
	s := &Summary{Procs: procs, Ready: make([][]time.Duration, procs+1),
		Under: map[string]int{}, Narrow: map[string]int{}, Outer: map[string]int{}}
	for r := range s.Ready {
		s.Ready[r] = make([]time.Duration, procs+1)
	}
	running, ready := map[trace.GoID]bool{}, map[trace.GoID]bool{}
	var first, last trace.Time
	started := false
	// Time from last to t at the current count of running goroutines.
	advance := func(t trace.Time) {
		if !started {
			first, last, started = t, t, true
			return
		}
		if t > last {
			s.Ready[min(len(running), procs)][min(len(ready), procs)] += t.Sub(last)
			last = t
		}
	}
	for {
		ev, err := tr.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("traceutil: %w", err)
		}
		advance(ev.Time())
		switch ev.Kind() {
		case trace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			_, to := st.Goroutine()
			id := st.Resource.Goroutine()
			if to == trace.GoRunning {
				running[id] = true
			} else {
				delete(running, id)
			}
			if to == trace.GoRunning || to == trace.GoRunnable {
				ready[id] = true
			} else {
				delete(ready, id)
			}
		case trace.EventStackSample:
			s.Samples++
			key := frameOf(ev.Stack())
			s.Outer[key[strings.Index(key, " < ")+3:]]++
			if len(running) < procs {
				s.Under[key]++
			}
			if len(ready) < procs {
				s.Narrow[key]++
			}
		}
	}
	s.Wall = last.Sub(first)
	return s, nil
}

// frameOf names a sample by its innermost frame in module monomer (else
// its leaf) and, after " < ", its goroutine's outermost frame outside
// package runtime: a worker's function tells a parallel section's tail
// (the other workers done) from serial code on the main goroutine. A
// sample inside internal/par's loop is named by that loop instead: there
// the caller works a section as one of its workers, which is not serial.
func frameOf(st trace.Stack) string {
	var funcs []string
	for f := range st.Frames() {
		funcs = append(funcs, f.Func)
	}
	return frameOfFuncs(funcs)
}

// frameOfFuncs is frameOf of a stack's functions, innermost first.
func frameOfFuncs(funcs []string) string {
	leaf, inner, outer := "", "", ""
	for _, f := range funcs {
		leaf = cmp.Or(leaf, f)
		if inner == "" && strings.HasPrefix(f, "monomer/") {
			inner = f
		}
		if !strings.HasPrefix(f, "runtime.") {
			outer = f
		}
		if strings.HasPrefix(f, "monomer/internal/par.") {
			break
		}
	}
	if leaf == "" {
		return "(no stack)"
	}
	return cmp.Or(inner, leaf) + " < " + outer
}

// Serial is the share of the CPU-profile samples taken on serial
// goroutines (SerialGoroutine): the CPU time no added core shortens.
func (s *Summary) Serial() float64 {
	if s.Samples == 0 {
		return 0
	}
	n := 0
	for f, c := range s.Outer {
		if SerialGoroutine(f) {
			n += c
		}
	}
	return float64(n) / float64(s.Samples)
}

// SerialGoroutine reports whether a goroutine, by its outermost frame
// outside package runtime, runs serial code: the command's main goroutine
// (which runs the stages and hands parallel sections to workers) and
// gonum's optimiser goroutine, which alternates with it (optimize.Minimize
// runs the method in a goroutine of its own and waits for it).
func SerialGoroutine(outer string) bool {
	return outer == "main.main" || strings.HasPrefix(outer, "gonum.org/v1/gonum/optimize.")
}

// Top returns the n functions with the most samples in Under, most first
// (ties by name).
func (s *Summary) Top(n int) []FuncSamples { return top(s.Under, n) }

// TopNarrow is Top over Narrow.
func (s *Summary) TopNarrow(n int) []FuncSamples { return top(s.Narrow, n) }

func top(m map[string]int, n int) []FuncSamples {
	out := make([]FuncSamples, 0, len(m))
	for f, c := range m {
		out = append(out, FuncSamples{f, c})
	}
	slices.SortFunc(out, func(a, b FuncSamples) int {
		return cmp.Or(cmp.Compare(b.Samples, a.Samples), cmp.Compare(a.Func, b.Func))
	})
	return out[:min(n, len(out))]
}

// FuncSamples is a function and its sample count.
type FuncSamples struct {
	Func    string
	Samples int
}

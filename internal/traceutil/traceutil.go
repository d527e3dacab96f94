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
	// Running[n] is the wall time during which exactly n goroutines were
	// running (n < Procs; Running[Procs] holds Procs and more).
	Running []time.Duration
	// Under maps a function to the CPU-profile samples taken while fewer
	// than Procs goroutines ran (keys: see frameOf): where the serial time
	// goes. The samples are
	// in the trace only when a CPU profile ran with it (--cpuprofile).
	Under map[string]int
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

// Short is the share of the wall time during which fewer than Procs
// goroutines ran.
func (s *Summary) Short() float64 {
	if s.Wall <= 0 {
		return 0
	}
	var t time.Duration
	for n := range s.Procs {
		t += s.Running[n]
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
	for n, d := range s.Running {
		t += float64(n) * float64(d)
	}
	return t / float64(s.Wall)
}

// Projected is the speedup over the traced machine's cpus cores that k
// cores would give, read off a trace taken at Procs ≥ k Ps (more Ps than
// cores: the kernel shares the cores among the running goroutines, and the
// trace shows how many the code keeps running). A stretch with n running
// did min(n, cpus) cores' work, which k cores do in min(n, cpus)/min(n, k)
// of its time; a stretch with none (reading a file, waiting on the disk)
// keeps its time. It leaves out what more cores do not bring: memory
// bandwidth, caches, and the kernel's own work.
func (s *Summary) Projected(cpus, k int) float64 {
	if s.Wall <= 0 || cpus < 1 || k < 1 {
		return 0
	}
	var then float64
	for n, d := range s.Running {
		if n == 0 {
			then += float64(d)
			continue
		}
		then += float64(d) * float64(min(n, cpus)) / float64(min(n, k))
	}
	return float64(s.Wall) / then
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
	s := &Summary{Procs: procs, Running: make([]time.Duration, procs+1), Under: map[string]int{}, Outer: map[string]int{}}
	running := map[trace.GoID]bool{}
	var first, last trace.Time
	started := false
	// Time from last to t at the current count of running goroutines.
	advance := func(t trace.Time) {
		if !started {
			first, last, started = t, t, true
			return
		}
		if t > last {
			s.Running[min(len(running), procs)] += t.Sub(last)
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
			if to == trace.GoRunning {
				running[st.Resource.Goroutine()] = true
			} else {
				delete(running, st.Resource.Goroutine())
			}
		case trace.EventStackSample:
			s.Samples++
			key := frameOf(ev.Stack())
			s.Outer[key[strings.Index(key, " < ")+3:]]++
			if len(running) < procs {
				s.Under[key]++
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
func (s *Summary) Top(n int) []FuncSamples {
	out := make([]FuncSamples, 0, len(s.Under))
	for f, c := range s.Under {
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

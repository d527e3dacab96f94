package traceutil

import (
	"bytes"
	"math"
	"runtime"
	"runtime/trace"
	"sync"
	"testing"
	"time"
)

// TestRead parses a trace of this process in which two goroutines spin
// together: the time split by running count adds up to the wall, and some
// of it had both running (GOMAXPROCS 2 lets them).
func TestRead(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skip("tracing unavailable:", err)
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			x := 0
			for i := range 50_000_000 {
				x += i ^ x
			}
			sink = x
		})
	}
	wg.Wait()
	trace.Stop()
	s, err := Read(&buf, 2)
	if err != nil {
		t.Fatal(err)
	}
	var sum time.Duration
	for _, d := range s.Running {
		sum += d
	}
	if s.Wall <= 0 || sum != s.Wall {
		t.Fatalf("wall %v, running counts add to %v", s.Wall, sum)
	}
	if b := s.Busy(); !(b > 0 && b <= 2) || s.Running[2] == 0 {
		t.Fatalf("mean running %v, with both %v of %v", b, s.Running[2], s.Wall)
	}
	if sh := s.Short(); !(sh >= 0 && sh < 1) {
		t.Fatalf("short share %v", sh)
	}
	if _, err := Read(bytes.NewReader([]byte("not a trace")), 2); err == nil {
		t.Fatal("no error on a non-trace")
	}
}

var sink int

// TestProjected: a profile traced at 16 Ps on 2 cores with 1 s waiting,
// 2 s one goroutine and 4 s sixteen takes 1 + 2 + 4·2/16 = 3.5 s on 16
// cores (2×), 1 + 2 + 4·2/4 = 5 s on 4, and its own 7 s on the 2 it
// ran on.
func TestProjected(t *testing.T) {
	s := &Summary{Procs: 16, Wall: 7 * time.Second, Running: make([]time.Duration, 17)}
	s.Running[0], s.Running[1], s.Running[16] = time.Second, 2*time.Second, 4*time.Second
	for _, c := range []struct {
		cpus, k int
		want    float64
	}{{2, 16, 2}, {2, 2, 1}, {2, 4, 7 / 5.0}, {1, 16, 7 / (1 + 2 + 4/16.0)}} {
		if got := s.Projected(c.cpus, c.k); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Projected(%d, %d) = %v, want %v", c.cpus, c.k, got, c.want)
		}
	}
}

func TestSerialGoroutine(t *testing.T) {
	for f, want := range map[string]bool{
		"main.main": true, "gonum.org/v1/gonum/optimize.minimize.func1": true,
		"monomer/models.runChunks.func1": false, "monomer/report.(*tsne).rows.func1": false,
	} {
		if SerialGoroutine(f) != want {
			t.Errorf("SerialGoroutine(%q) = %v", f, !want)
		}
	}
}

// A sample the main goroutine takes while it works a section of
// internal/par's loop is named by the loop, not by main.main, so Serial
// does not count it; one outside any section still is.
func TestFrameOfParCaller(t *testing.T) {
	inSection := []string{"monomer/models.dist", "monomer/models.runChunks.func1", "monomer/internal/par.Until.func1",
		"monomer/internal/par.Until", "monomer/internal/par.For", "monomer/models.runChunks", "monomer/stages.Train.Run", "main.main", "runtime.main"}
	got := frameOfFuncs(inSection)
	if got != "monomer/models.dist < monomer/internal/par.Until.func1" {
		t.Fatalf("in a section: %q", got)
	}
	if SerialGoroutine(got[len("monomer/models.dist < "):]) {
		t.Fatal("a section's sample on the caller counted as serial")
	}
	serial := frameOfFuncs([]string{"monomer/models.median", "monomer/stages.Train.Run", "main.main", "runtime.main"})
	if serial != "monomer/models.median < main.main" {
		t.Fatalf("outside a section: %q", serial)
	}
}

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
	var ready time.Duration
	for r, row := range s.Ready {
		for q, d := range row {
			if q < r && d > 0 {
				t.Fatalf("%v with %d running but %d ready", d, r, q)
			}
			ready += d
		}
	}
	if s.Wall <= 0 || ready != s.Wall {
		t.Fatalf("wall %v, running-and-ready counts add to %v", s.Wall, ready)
	}
	if b := s.Busy(); !(b > 0 && b <= 2) || s.Running()[2] == 0 {
		t.Fatalf("mean running %v, with both %v of %v", b, s.Running()[2], s.Wall)
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
// 2 s one goroutine, 1 s two running and four more ready, and 4 s sixteen
// running takes 1 + 2 + 1·2/6 + 4·2/16 = 3.83 s on 16 cores, 1 + 2 +
// 1·2/4 + 4·2/4 = 5.5 s on 4, and its own 8 s on the 2 it ran on.
func TestProjected(t *testing.T) {
	s := &Summary{Procs: 16, Wall: 8 * time.Second, Ready: make([][]time.Duration, 17)}
	for r := range s.Ready {
		s.Ready[r] = make([]time.Duration, 17)
	}
	s.Ready[0][0], s.Ready[1][1], s.Ready[2][6], s.Ready[16][16] = time.Second, 2*time.Second, time.Second, 4*time.Second
	for _, c := range []struct {
		cpus, k int
		want    float64
	}{{2, 16, 8 / (3 + 2/6.0 + 0.5)}, {2, 2, 1}, {2, 4, 8 / 5.5}, {1, 16, 8 / (1 + 2 + 1/6.0 + 4/16.0)}} {
		if got := s.Projected(c.cpus, c.k); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Projected(%d, %d) = %v, want %v", c.cpus, c.k, got, c.want)
		}
	}
}

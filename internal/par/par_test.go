package par

import (
	"sync/atomic"
	"testing"
)

// Every task runs exactly once, on a goroutine number below the worker
// count, whatever the counts (odd ones included).
func TestForEveryTaskOnce(t *testing.T) {
	for _, workers := range []int{0, 1, 2, 3, 7, 16} {
		for _, n := range []int{0, 1, 2, 5, 100} {
			hits := make([]atomic.Int32, n)
			limit := workers
			if limit <= 0 {
				limit = 1 << 30
			}
			var bad atomic.Bool
			For(n, workers, func(w, i int) {
				if w < 0 || w >= limit || w >= max(n, 1) {
					bad.Store(true)
				}
				hits[i].Add(1)
			})
			if bad.Load() {
				t.Errorf("workers %d, n %d: a goroutine number out of range", workers, n)
			}
			for i := range hits {
				if h := hits[i].Load(); h != 1 {
					t.Errorf("workers %d, n %d: task %d ran %d times", workers, n, i, h)
				}
			}
		}
	}
}

// A goroutine whose fn returns false takes no further task: with one
// worker the tasks after the first false never run.
func TestUntilStops(t *testing.T) {
	var ran []int
	Until(10, 1, func(_, i int) bool {
		ran = append(ran, i)
		return i < 3
	})
	if len(ran) != 4 || ran[3] != 3 {
		t.Fatalf("ran %v, want 0..3", ran)
	}
	var count atomic.Int32
	Until(1000, 4, func(_, i int) bool {
		count.Add(1)
		return false
	})
	if c := count.Load(); c > 4 {
		t.Fatalf("%d tasks ran after every goroutine returned false on its first; want at most 4", c)
	}
}

// Spans covers [0, n) exactly once in spans of span, the last shorter.
func TestSpansCover(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 11, 1000} {
		hits := make([]atomic.Int32, n)
		var bad atomic.Bool
		Spans(n, 10, 3, func(lo, hi int) {
			if lo%10 != 0 || hi-lo > 10 || hi > n || lo >= hi {
				bad.Store(true)
			}
			for i := lo; i < hi; i++ {
				hits[i].Add(1)
			}
		})
		if bad.Load() {
			t.Fatalf("n %d: a span out of shape", n)
		}
		for i := range hits {
			if h := hits[i].Load(); h != 1 {
				t.Fatalf("n %d: item %d covered %d times", n, i, h)
			}
		}
	}
}

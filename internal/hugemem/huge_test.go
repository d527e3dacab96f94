package hugemem

import (
	"runtime"
	"testing"
)

// TestSliceZeroAndKept: a Slice reads as zero even where the heap hands
// out memory it wrote before (the pages given back must fault in as
// zero), small and odd sizes included, and what is written to it stays.
func TestSliceZeroAndKept(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 1 << 20, 3<<20 + 7, 5 << 20} {
		for range 3 {
			dirty := make([]float32, n)
			for i := range dirty {
				dirty[i] = 1
			}
			runtime.GC()
			s := Slice[float32](n)
			if len(s) != n {
				t.Fatalf("n %d: length %d", n, len(s))
			}
			for i, v := range s {
				if v != 0 {
					t.Fatalf("n %d: element %d is %v, want 0", n, i, v)
				}
			}
			for i := range s {
				s[i] = float32(i)
			}
			for i, v := range s {
				if v != float32(i) {
					t.Fatalf("n %d: element %d reads %v after writing %d", n, i, v, i)
				}
			}
		}
	}
}

package csrkern

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func thr() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_THREAD, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestExplore(t *testing.T) {
	runtime.LockOSThread()
	rng := rand.New(rand.NewPCG(1, 1))
	for _, dim := range []int{16, 64, 256} {
		c, st := 100, 112
		rows := 2000
		var idx [][]int32
		var val [][]float32
		nnz := 0
		for range rows {
			var ix []int32
			var vx []float32
			for len(ix) < 560 {
				for f := range dim {
					if rng.Float64() < 0.14 {
						ix = append(ix, int32(f))
						vx = append(vx, rng.Float32())
					}
				}
			}
			idx, val = append(idx, ix), append(val, vx)
			nnz += len(ix)
		}
		buf := make([]float32, dim*st+16)
		skip := int(-uintptr(unsafe.Pointer(&buf[0])) % 64 / 4)
		w := buf[skip:]
		out := make([]float32, c)
		passes := int(1e9 / float64(2*nnz*c))
		best := 0.0
		for range 10 {
			t0 := thr()
			for range passes {
				for i := range rows {
					_ = out
					rowAcc(w, idx[i], val[i], out, st)
				}
			}
			s := (thr() - t0).Seconds()
			best = max(best, float64(passes)*2*float64(nnz*c)/s/1e9)
		}
		fmt.Printf("dim %d: %.1f GFLOP/CPU-s\n", dim, best)
	}
}

package models

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/optimize/functions"
)

// lbfgsProblem is the extended Rosenbrock function in dim variables, from
// gonum's standard start (−1.2, 1, −1.2, 1, ...).
func lbfgsProblem(dim int) (optimize.Problem, []float64) {
	x0 := make([]float64, dim)
	for i := range x0 {
		x0[i] = 1
		if i%2 == 0 {
			x0[i] = -1.2
		}
	}
	f := functions.ExtendedRosenbrock{}
	return optimize.Problem{Func: f.Func, Grad: f.Grad}, x0
}

func minimizeWith(t *testing.T, m optimize.Method, dim, iters int) *optimize.Result {
	t.Helper()
	p, x0 := lbfgsProblem(dim)
	res, err := optimize.Minimize(p, x0, &optimize.Settings{MajorIterations: iters}, m)
	if err != nil && res == nil {
		t.Fatal(err)
	}
	return res
}

// TestLBFGSAsGonum: the parallel L-BFGS takes gonum's steps: its dot
// products are sums of gonum's over chunks, the first step's length is
// 1/‖∇f‖ by a plain square root (gonum's norm is scaled), so the iterates
// agree to rounding, at the same evaluation counts. Rosenbrock amplifies
// rounding over many iterations: 12 keep them within 1e-9 of each other.
func TestLBFGSAsGonum(t *testing.T) {
	for _, dim := range []int{2, 100, 3*vecChunk + 17} {
		t.Run(fmt.Sprint(dim), func(t *testing.T) {
			want := minimizeWith(t, &optimize.LBFGS{}, dim, 12)
			got := minimizeWith(t, &lbfgs{}, dim, 12)
			if got.Stats.FuncEvaluations != want.Stats.FuncEvaluations || got.Stats.GradEvaluations != want.Stats.GradEvaluations {
				t.Errorf("stats %+v, gonum %+v", got.Stats, want.Stats)
			}
			if math.Abs(got.F-want.F) > 1e-9*(1+math.Abs(want.F)) {
				t.Errorf("f %v, gonum %v", got.F, want.F)
			}
			for i := range got.X {
				if math.Abs(got.X[i]-want.X[i]) > 1e-9 {
					t.Fatalf("x[%d] = %v, gonum %v", i, got.X[i], want.X[i])
				}
			}
		})
	}
}

// TestLBFGSSameAtProcs: bit-identical iterates at every GOMAXPROCS, odd
// ones included (a split that assumed an even count would show here), on
// a dimension of several tasks of chunks and a ragged last chunk.
func TestLBFGSSameAtProcs(t *testing.T) {
	const dim = 2*vecTask*vecChunk + 3*vecChunk + 5
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var ref *optimize.Result
	for _, procs := range []int{1, 2, 3, 7, 16} {
		runtime.GOMAXPROCS(procs)
		got := minimizeWith(t, &lbfgs{}, dim, 30)
		if ref == nil {
			ref = got
			continue
		}
		got.Stats.Runtime, ref.Stats.Runtime = 0, 0
		if got.F != ref.F || !slices.Equal(got.X, ref.X) || got.Stats != ref.Stats {
			t.Fatalf("GOMAXPROCS %d: f %v after %+v; GOMAXPROCS 1: f %v after %+v", procs, got.F, got.Stats, ref.F, ref.Stats)
		}
	}
}

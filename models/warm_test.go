package models

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWarmFromOwnFit is issue 56's test of warm_from: started from the
// run's own cold fit, training starts where that fit ended (iteration 0
// has its validation error), ends in fewer evaluations at the λ it chose,
// reaches the same objective within 1e-6 (the fit is at an optimum the
// start cannot improve on much), keeps a validation error no worse, and
// flags no kept_start: a warm fit that keeps its start has failed nothing.
// Reruns give the same bits.
func TestWarmFromOwnFit(t *testing.T) {
	cfg := plantedConfig{items: 1500, shared: 1, styled: 4, dim: 32, outDegree: 2, noise: 0.05}
	w := newPlanted(cfg, rand.New(rand.NewPCG(7, 1)))
	for _, spec := range []Spec{
		{Model: ModelWNN},
		{Model: ModelLMT, K: 8},
		{Model: ModelMonomer, K: 4, N: 2},
	} {
		spec.Lambdas, spec.MaxIter, spec.ValidEvery, spec.Patience = []float64{0, 1e-4}, 200, 10, 6
		cold, err := Train(t.Context(), w.feat, w.train, w.valid, spec, rand.New(rand.NewPCG(1, 1)), nil)
		if err != nil {
			t.Fatal(err)
		}
		warmSpec := spec
		warmSpec.Start = &Start{C: cold.C, Params: cold.Params, Lambda: cold.Lambda}
		warm, err := Train(t.Context(), w.feat, w.train, w.valid, warmSpec, rand.New(rand.NewPCG(1, 1)), nil)
		if err != nil {
			t.Fatal(err)
		}
		first := StartIndex(spec.Lambdas, cold.Lambda)
		cg, wg := cold.Grid[first], warm.Grid[first]
		t.Logf("%s λ=%g: cold %d evaluations (%d iterations, best %d, objective %.8f), warm %d (%d, best %d, %.8f, %s)",
			spec.Model, cold.Lambda, cg.Evaluations, cg.Iterations, cg.BestIteration, cg.TrainObjective,
			wg.Evaluations, wg.Iterations, wg.BestIteration, wg.TrainObjective, wg.Status)
		if wg.Evaluations >= cg.Evaluations {
			t.Errorf("%s: warm fit took %d evaluations, cold %d: want fewer", spec.Model, wg.Evaluations, cg.Evaluations)
		}
		if math.Abs(wg.TrainObjective-cg.TrainObjective) > 1e-6 && wg.TrainObjective < cg.TrainObjective {
			t.Errorf("%s: warm objective %.9f, cold %.9f: want within 1e-6 or better", spec.Model, wg.TrainObjective, cg.TrainObjective)
		}
		if wg.ValidError > cg.ValidError {
			t.Errorf("%s: warm validation error %v, cold %v", spec.Model, wg.ValidError, cg.ValidError)
		}
		if wg.Start != StartWarm || cg.Start != StartRandom {
			t.Errorf("%s: starts %q and %q", spec.Model, cg.Start, wg.Start)
		}
		if warm.Trace[0].GridIndex != first || warm.Trace[0].Iteration != 0 ||
			math.Abs(warm.Trace[0].ValidError-cold.ValidError) > 1e-12 {
			t.Errorf("%s: warm trace starts at λ index %d iteration %d validation %v, want %d, 0, the cold fit's %v",
				spec.Model, warm.Trace[0].GridIndex, warm.Trace[0].Iteration, warm.Trace[0].ValidError, first, cold.ValidError)
		}
		for _, g := range warm.Grid {
			if slices.Contains(g.Flags(), FlagKeptStart) {
				t.Errorf("%s λ=%g: a warm fit flagged %s", spec.Model, g.Lambda, FlagKeptStart)
			}
		}
		again, err := Train(t.Context(), w.feat, w.train, w.valid, warmSpec, rand.New(rand.NewPCG(1, 1)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if again.C != warm.C || !slices.EqualFunc(again.Params, warm.Params, func(a, b Param) bool { return slices.Equal(a.Data, b.Data) }) {
			t.Errorf("%s: a rerun of the warm fit differs", spec.Model)
		}
	}
}

// TestWarmStartShapes: a Start whose blocks do not fit the model is an
// error naming the block, not a silent cold start (the stage decides
// about cold starts before training).
func TestWarmStartShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	feat := randDense(rng, 50, 6)
	pairs := randPairs(rng, 50, 300)
	spec := Spec{Model: ModelLMT, K: 2, Lambdas: []float64{0}, MaxIter: 3,
		Start: &Start{Params: []Param{{Name: "E", Rows: 5, Cols: 2, Data: make([]float64, 10)}}}}
	if _, err := Train(t.Context(), feat, pairs, nil, spec, rng, nil); err == nil {
		t.Fatal("a 5×2 E for 6 features trained")
	}
}

// TestWarmOrder: the previous fit's λ (or the grid's closest) comes first,
// then the path upwards (warm_start) or the grid's order.
func TestWarmOrder(t *testing.T) {
	grid := []float64{1e-2, 0, 1e-5, 1e-4}
	for _, tc := range []struct {
		lambda float64
		path   bool
		want   []int
	}{
		{1e-5, true, []int{2, 1, 3, 0}},
		{1e-5, false, []int{2, 0, 1, 3}},
		{3e-5, true, []int{2, 1, 3, 0}}, // closer to 1e-5 than to 1e-4
		{8e-5, true, []int{3, 1, 2, 0}},
		{1, true, []int{0, 1, 2, 3}},
		{0, true, []int{1, 2, 3, 0}},
	} {
		if got := warmOrder(grid, tc.path, StartIndex(grid, tc.lambda)); !slices.Equal(got, tc.want) {
			t.Errorf("λ %g path %v: order %v, want %v", tc.lambda, tc.path, got, tc.want)
		}
	}
}

// TestRowMap maps a hand-made pair of vocabularies: yesterday's terms
// carried to today's rows, a new term at zero, a gone term dropped.
func TestRowMap(t *testing.T) {
	yesterday := []string{"leather", "soft leather", "strap", "buckl"}
	today := []string{"strap", "zipper", "leather", "soft leather"}
	from := RowMap(yesterday, today)
	if want := []int{2, -1, 0, 1}; !slices.Equal(from, want) {
		t.Fatalf("RowMap %v, want %v", from, want)
	}
	// E is 4×2 yesterday: row r holds (r+1, 10(r+1)).
	e := Param{Name: "E", Rows: 4, Cols: 2, Data: []float64{1, 10, 2, 20, 3, 30, 4, 40}}
	got, err := MapRows([]Param{e}, from)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{3, 30, 0, 0, 1, 10, 2, 20} // strap, zipper (new), leather, soft leather; buckl gone
	if got[0].Rows != 4 || got[0].Cols != 2 || !slices.Equal(got[0].Data, want) {
		t.Errorf("mapped E %d×%d %v, want 4×2 %v", got[0].Rows, got[0].Cols, got[0].Data, want)
	}
	if _, err := MapRows([]Param{e}, []int{4}); err == nil {
		t.Error("a row beyond the block mapped")
	}
}

// TestWarmFromOnPath: with warm_start the previous fit's λ comes first from
// it, and every later λ of the path from the λ before (StartPath); none of
// them is flagged kept_start, while the cold path's first fit, from the
// random start, still can be.
func TestWarmFromOnPath(t *testing.T) {
	cfg := plantedConfig{items: 800, shared: 1, styled: 4, dim: 16, outDegree: 2, noise: 0.05}
	w := newPlanted(cfg, rand.New(rand.NewPCG(3, 1)))
	spec := Spec{Model: ModelLMT, K: 4, Lambdas: []float64{0, 1e-4, 1e-2}, MaxIter: 80, ValidEvery: 10, Patience: 3, WarmStart: true}
	cold, err := Train(t.Context(), w.feat, w.train, w.valid, spec, rand.New(rand.NewPCG(1, 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	spec.Start = &Start{C: cold.C, Params: cold.Params, Lambda: 1e-4}
	warm, err := Train(t.Context(), w.feat, w.train, w.valid, spec, rand.New(rand.NewPCG(1, 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{StartPath, StartWarm, StartPath}
	for i, g := range warm.Grid {
		if g.Start != want[i] || slices.Contains(g.Flags(), FlagKeptStart) {
			t.Errorf("λ=%g: start %q flags %v, want %q and no %s", g.Lambda, g.Start, g.Flags(), want[i], FlagKeptStart)
		}
	}
	if warm.Trace[0].Lambda != 1e-4 {
		t.Errorf("the path starts at λ %g, want the predecessor's 1e-4", warm.Trace[0].Lambda)
	}
	if cold.Grid[0].Start != StartRandom || cold.Grid[1].Start != StartPath {
		t.Errorf("cold path starts %q, %q", cold.Grid[0].Start, cold.Grid[1].Start)
	}
}

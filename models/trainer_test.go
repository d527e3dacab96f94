package models

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"monomer/graph"
)

// planted is a small world with a known heterogeneous relation.
type planted struct {
	feat               *denseFeat
	train, valid, test []graph.Pair
}

// plantedConfig shapes newPlanted's world.
type plantedConfig struct {
	items     int // number of items
	shared    int // latent dims a related pair shares
	styled    int // latent dims the relation transforms
	dim       int // feature dimension F
	outDegree int // related pairs per item
	noise     float64
	notions   int // transforms T_t; if 0, 4
}

// newPlanted builds items with latent factors z = [s, v], features
// ReLU(R z + b) + noise, and an "also_bought" relation where x's latent picks
// one of 4 transforms T_t (a signed permutation of v, s unchanged) and y is
// one of the items nearest to T_t z_x. Negatives pair the same x's with a
// shuffle of the same y's (every item keeps its in- and out-degree) avoiding
// related pairs. Pairs are split 80/10/10.
func newPlanted(cfg plantedConfig, rng *rand.Rand) planted {
	l := cfg.shared + cfg.styled
	z := make([][]float64, cfg.items)
	for i := range z {
		z[i] = make([]float64, l)
		for j := range z[i] {
			z[i][j] = rng.NormFloat64()
		}
	}
	// Gate: the transform is the argmax of random directions of z, one per
	// notion.
	notions := cfg.notions
	if notions == 0 {
		notions = 4
	}
	gate := make([][]float64, notions)
	perm := make([][]int, notions)
	sign := make([][]float64, notions)
	for t := range notions {
		gate[t] = make([]float64, l)
		for j := range gate[t] {
			gate[t][j] = rng.NormFloat64()
		}
		perm[t] = rng.Perm(cfg.styled)
		sign[t] = make([]float64, cfg.styled)
		for j := range sign[t] {
			sign[t][j] = float64(2*rng.IntN(2) - 1)
		}
	}
	related := map[[2]int32]bool{}
	var pos []graph.Pair
	target := make([]float64, l)
	type cand struct {
		d float64
		i int
	}
	cands := make([]cand, 0, cfg.items)
	for x := range cfg.items {
		best, bt := math.Inf(-1), 0
		for t := range notions {
			var s float64
			for j, g := range gate[t] {
				s += g * z[x][j]
			}
			if s > best {
				best, bt = s, t
			}
		}
		copy(target, z[x][:cfg.shared])
		for j := range cfg.styled {
			target[cfg.shared+j] = sign[bt][j] * z[x][cfg.shared+perm[bt][j]]
		}
		cands = cands[:0]
		for y := range cfg.items {
			if y == x {
				continue
			}
			var d float64
			for j, v := range target {
				d += (v - z[y][j]) * (v - z[y][j])
			}
			cands = append(cands, cand{d, y})
		}
		slices.SortFunc(cands, func(a, b cand) int {
			if a.d != b.d {
				if a.d < b.d {
					return -1
				}
				return 1
			}
			return a.i - b.i
		})
		for _, c := range cands[:cfg.outDegree] {
			p := graph.Pair{X: int32(x), Y: int32(c.i), Label: true}
			related[[2]int32{p.X, p.Y}] = true
			pos = append(pos, p)
		}
	}
	ys := make([]int32, len(pos))
	for i, p := range pos {
		ys[i] = p.Y
	}
	rng.Shuffle(len(ys), func(i, j int) { ys[i], ys[j] = ys[j], ys[i] })
	ok := func(i int) bool { return pos[i].X != ys[i] && !related[[2]int32{pos[i].X, ys[i]}] }
	for range 20 {
		for i := range ys {
			if !ok(i) {
				j := rng.IntN(len(ys))
				ys[i], ys[j] = ys[j], ys[i]
			}
		}
	}
	pairs := slices.Clone(pos)
	for i, p := range pos {
		if ok(i) {
			pairs = append(pairs, graph.Pair{X: p.X, Y: ys[i]})
		}
	}
	rng.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })

	feat := &denseFeat{rows: cfg.items, dim: cfg.dim, data: make([]float32, cfg.items*cfg.dim)}
	r := make([]float64, cfg.dim*l)
	for i := range r {
		r[i] = rng.NormFloat64() / math.Sqrt(float64(l))
	}
	b := make([]float64, cfg.dim)
	for i := range b {
		b[i] = 0.5 * rng.NormFloat64()
	}
	for i := range cfg.items {
		for f := range cfg.dim {
			v := b[f]
			for j := range l {
				v += r[f*l+j] * z[i][j]
			}
			feat.data[i*cfg.dim+f] = float32(max(v, 0) + cfg.noise*rng.NormFloat64())
		}
	}
	n := len(pairs)
	return planted{feat: feat, train: pairs[:n*8/10], valid: pairs[n*8/10 : n*9/10], test: pairs[n*9/10:]}
}

func testError(t *testing.T, f *Fit, feat Features, pairs []graph.Pair) float64 {
	t.Helper()
	_, prob, err := f.Score(feat, pairs)
	if err != nil {
		t.Fatal(err)
	}
	wrong := 0
	for i, p := range prob {
		if (p > 0.5) != pairs[i].Label {
			wrong++
		}
	}
	return float64(wrong) / float64(len(pairs))
}

var plantedSeeds = flag.Int("planted-seeds", 0, "TestPlanted: log the test errors of seeds 1..N instead of checking seed 1 (the measurement behind its bounds)")

// TestPlanted trains every model on the planted heterogeneous relation:
// all learn it far better than chance, and Monomer beats LMT at the same
// embedding budget (LMT K = (N+1)·K_Monomer), as in the paper's Table 2.
//
// Each bound is the worst test error of seeds 1-8 (world and training;
// docs/notes/2026-11-25-test-efficacy.md, "Quality thresholds") plus about
// one standard deviation
// of the eight: WNN 0.345 + 0.035, LMT 0.145 + 0.02, Monomer 0.073 +
// 0.007. Seed 1 (0.334, 0.108, 0.052) is checked, so a change that costs
// WNN 0.05, LMT 0.06 or Monomer 0.03 there fails. Monomer/LMT was at most
// 0.62 over the seeds; 0.8 is asked. Re-measure with
// `go test ./models -run 'TestPlanted$' -planted-seeds 8 -v` (40 CPU-s).
func TestPlanted(t *testing.T) {
	if *plantedSeeds > 0 {
		for seed := range uint64(*plantedSeeds) {
			errs := plantedErrors(t, seed+1, nil)
			t.Logf("seed %d: wnn %.4f lmt %.4f monomer %.4f", seed+1, errs[ModelWNN], errs[ModelLMT], errs[ModelMonomer])
		}
		return
	}
	errs := plantedErrors(t, 1, map[string]float64{ModelWNN: 0.38, ModelLMT: 0.165, ModelMonomer: 0.08})
	if errs[ModelMonomer] > 0.8*errs[ModelLMT] {
		t.Errorf("Monomer test error %.3f not clearly below LMT's %.3f", errs[ModelMonomer], errs[ModelLMT])
	}
}

// plantedErrors trains TestPlanted's models on the planted world of seed
// and returns their test errors, failing a model above maxError[model]
// (none checked when maxError is nil).
func plantedErrors(t *testing.T, seed uint64, maxError map[string]float64) map[string]float64 {
	t.Helper()
	cfg := plantedConfig{items: 2500, shared: 1, styled: 4, dim: 64, outDegree: 2, noise: 0.05}
	w := newPlanted(cfg, rand.New(rand.NewPCG(seed, 1)))
	const km, n = 4, 4
	specs := []Spec{
		{Model: ModelWNN},
		{Model: ModelLMT, K: (n + 1) * km},
		{Model: ModelMonomer, K: km, N: n},
	}
	errs := map[string]float64{}
	for _, spec := range specs {
		spec.Lambdas = []float64{0, 1e-4, 1e-2}
		f, err := Train(t.Context(), w.feat, w.train, w.valid, spec, rand.New(rand.NewPCG(seed, 1)), nil)
		if err != nil {
			t.Fatal(err)
		}
		e := testError(t, f, w.feat, w.test)
		errs[spec.Model] = e
		t.Logf("%s: test error %.3f (λ %g, validation error %.3f, %d iterations, kept %d, %d parameters)",
			spec.Model, e, f.Lambda, f.ValidError, f.Iterations, f.BestIteration, f.NumParams())
		if m, ok := maxError[spec.Model]; ok && e > m {
			t.Errorf("%s: test error %.3f, want <= %.2f", spec.Model, e, m)
		}
		if len(f.Grid) != len(spec.Lambdas) {
			t.Errorf("%s: %d grid points", spec.Model, len(f.Grid))
		}
		// A Fit rebuilt from its saved parameters scores identically.
		g, err := NewFit(f.Model, f.C, f.Params)
		if err != nil {
			t.Fatal(err)
		}
		g.Float64 = f.Float64
		d1, _, _ := f.Score(w.feat, w.test)
		d2, _, _ := g.Score(w.feat, w.test)
		if !slices.Equal(d1, d2) {
			t.Errorf("%s: rebuilt fit scores differently", spec.Model)
		}
	}
	return errs
}

// Train fits Monomer on the planted relation and chooses λ on validation.
func ExampleTrain() {
	w := newPlanted(plantedConfig{items: 600, shared: 1, styled: 4, dim: 32, outDegree: 2, noise: 0.05}, rand.New(rand.NewPCG(1, 1)))
	spec := Spec{Model: ModelMonomer, K: 4, N: 4, Lambdas: []float64{0, 1e-3}, MaxIter: 60}
	fit, err := Train(context.Background(), w.feat, w.train, w.valid, spec, rand.New(rand.NewPCG(1, 1)), nil)
	if err != nil {
		panic(err)
	}
	_, prob, err := fit.Score(w.feat, w.test)
	if err != nil {
		panic(err)
	}
	wrong := 0
	for i, p := range prob {
		if (p > 0.5) != w.test[i].Label {
			wrong++
		}
	}
	fmt.Println(fit.Model, "blocks:", len(fit.Params), "grid points:", len(fit.Grid))
	fmt.Println("test error below 25%:", float64(wrong)/float64(len(prob)) < 0.25)
	// Output:
	// monomer blocks: 6 grid points: 2
	// test error below 25%: true
}

func TestTrainErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	feat := randDense(rng, 20, 5)
	pairs := randPairs(rng, 20, 40)
	tests := []struct {
		name         string
		train, valid []graph.Pair
		spec         Spec
		rng          *rand.Rand
		want         error
	}{
		{name: "no train pairs", valid: pairs, spec: Spec{Model: ModelLMT, K: 2}, rng: rng, want: ErrInput},
		{name: "grid without validation", train: pairs, spec: Spec{Model: ModelLMT, K: 2}, rng: rng, want: ErrInput},
		{name: "nil rng", train: pairs, valid: pairs, spec: Spec{Model: ModelLMT, K: 2}, want: ErrSpec},
		{name: "bad model", train: pairs, valid: pairs, spec: Spec{Model: "ct"}, rng: rng, want: ErrSpec},
		{name: "item out of range", train: []graph.Pair{{X: 0, Y: 20}}, spec: Spec{Model: ModelWNN, Lambdas: []float64{0}}, rng: rng, want: ErrInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Train(t.Context(), feat, tc.train, tc.valid, tc.spec, tc.rng, nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestTrainProgressAndCancel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	feat := randDense(rng, 50, 6)
	pairs := randPairs(rng, 50, 300)
	spec := Spec{Model: ModelMonomer, K: 2, N: 2, Lambdas: []float64{0, 1e-3}, MaxIter: 12, ValidEvery: 5}
	var got []Progress
	f, err := Train(t.Context(), feat, pairs[:250], pairs[250:], spec, rng, func(p Progress) { got = append(got, p) })
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for i, p := range got {
		if i > 0 && p.GridIndex == got[i-1].GridIndex && p.Iter != got[i-1].Iter+1 {
			t.Fatalf("progress %d: iteration %d after %d", i, p.Iter, got[i-1].Iter)
		}
		if !math.IsNaN(p.ValidError) {
			checked++
		}
	}
	if len(got) == 0 || got[0].Iter != 0 || got[len(got)-1].GridIndex != 1 || checked < 4 {
		t.Fatalf("progress reports %+v", got)
	}
	if f.BestIteration%spec.ValidEvery != 0 && f.BestIteration != f.Iterations {
		t.Errorf("kept iteration %d was never validated", f.BestIteration)
	}

	ctx, cancel := context.WithCancel(t.Context())
	_, err = Train(ctx, feat, pairs[:250], pairs[250:], spec, rng, func(p Progress) {
		if p.Iter == 3 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestDegenerateFlags forces a constant predictor with a huge λ (Θ shrinks
// to zero, so every pair gets σ(c)) and checks that a working fit carries
// no flag. Without validation pairs the last parameters are kept (with
// them, the start might be kept instead, as better than the shrunk end).
func TestDegenerateFlags(t *testing.T) {
	w := newPlanted(plantedConfig{items: 600, shared: 1, styled: 4, dim: 32, outDegree: 2, noise: 0.05}, rand.New(rand.NewPCG(1, 1)))
	var grid []GridPoint
	for _, lambda := range []float64{0, 1e4} {
		spec := Spec{Model: ModelLMT, K: 4, Lambdas: []float64{lambda}, MaxIter: 40}
		fit, err := Train(t.Context(), w.feat, w.train, nil, spec, rand.New(rand.NewPCG(1, 1)), nil)
		if err != nil {
			t.Fatal(err)
		}
		grid = append(grid, fit.Grid[0])
	}
	good, flat := grid[0], grid[1]
	// With validation pairs, the shrinking never beats the start: kept.
	spec := Spec{Model: ModelLMT, K: 4, Lambdas: []float64{1e4}, MaxIter: 40}
	fit, err := Train(t.Context(), w.feat, w.train, w.valid, spec, rand.New(rand.NewPCG(1, 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := fit.Grid[0].Flags(); !slices.Contains(f, FlagKeptStart) {
		t.Errorf("λ=1e4 with validation: flags %v, want %q", f, FlagKeptStart)
	}
	if f := good.Flags(); len(f) != 0 || good.ValidSpread < 0.1 {
		t.Errorf("λ=0: flags %v, spread %g; want none and a wide spread", f, good.ValidSpread)
	}
	if f := flat.Flags(); !slices.Contains(f, FlagConstant) || flat.ValidSpread >= ConstantSpread {
		t.Errorf("λ=1e4: flags %v, spread %g; want %q", f, flat.ValidSpread, FlagConstant)
	}
	for _, c := range []struct {
		p    GridPoint
		want []string
	}{
		{GridPoint{ValidSpread: 0.5, LineSearchFailed: true, Iterations: EarlyStopIters - 1, BestIteration: 1}, []string{FlagEarlyLineSearchEnd}},
		{GridPoint{ValidSpread: 0.5, LineSearchFailed: true, Iterations: EarlyStopIters, BestIteration: 1}, nil},
		{GridPoint{ValidSpread: 0.5, Iterations: 1, BestIteration: 1}, nil},
		{GridPoint{ValidSpread: 0, LineSearchFailed: true, Iterations: 0}, []string{FlagConstant, FlagEarlyLineSearchEnd}},
		{GridPoint{ValidSpread: 0.5, Iterations: 30, BestIteration: 0}, []string{FlagKeptStart}},
		{GridPoint{ValidSpread: 0.5, Iterations: 30, BestIteration: 10}, nil},
	} {
		if got := c.p.Flags(); !slices.Equal(got, c.want) {
			t.Errorf("%+v: flags %v, want %v", c.p, got, c.want)
		}
	}
}

// TestValueThenGradient: gonum's Func then Grad at one point cost one
// forward and one backward pass and give the gradient bit-identical to a
// whole evaluation; Grad at another point evaluates it whole.
func TestValueThenGradient(t *testing.T) {
	for _, model := range []string{ModelWNN, ModelLMT, ModelMonomer} {
		for _, features := range []string{"dense", "sparse"} {
			t.Run(model+"/"+features, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(1, 1))
				_, obj, theta := gradProblem(t, model, features, rng)
				want := make([]float64, len(theta))
				fWant := obj.eval(theta, want)
				obj.evals, obj.grads = 0, 0

				other := slices.Clone(theta)
				other[1] += 0.1
				f := obj.value(theta)
				obj.value(other) // a line-search trial elsewhere
				got := make([]float64, len(theta))
				obj.gradient(got, theta) // a whole evaluation
				if f != fWant || !slices.Equal(got, want) {
					t.Fatalf("gradient after a value elsewhere differs from eval")
				}
				f = obj.value(theta)
				clear(got)
				obj.gradient(got, theta) // backward pass only
				if f != fWant || !slices.Equal(got, want) {
					t.Fatalf("value+gradient differ from eval: f %v vs %v", f, fWant)
				}
				_, split := obj.ev.(splitEvaluator)
				wantEvals, wantGrads := 4, 2 // forward: value×3 + whole; backward: whole + split
				if !split {
					wantGrads = 4 // WNN forms the gradient with every value
				}
				if obj.evals != wantEvals || obj.grads != wantGrads {
					t.Errorf("%d evaluations, %d gradient evaluations; want %d, %d", obj.evals, obj.grads, wantEvals, wantGrads)
				}
			})
		}
	}
}

// TestFitCountsEvaluations: every grid point records its evaluations: at
// least one per iteration plus the start, a gradient with each accepted
// point, and no more gradients than evaluations.
func TestFitCountsEvaluations(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	feat := randDense(rng, 300, 16)
	pairs := randPairs(rng, 300, 1200)
	spec := Spec{Model: ModelLMT, K: 4, Lambdas: []float64{0, 1e-2}, MaxIter: 15, ValidEvery: 5}
	fit, err := Train(t.Context(), feat, pairs[:1000], pairs[1000:], spec, rand.New(rand.NewPCG(2, 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range fit.Grid {
		if g.Evaluations < g.Iterations+1 || g.GradEvaluations < g.Iterations+1 || g.GradEvaluations > g.Evaluations {
			t.Errorf("λ=%g: %d iterations, %d evaluations, %d gradient evaluations", g.Lambda, g.Iterations, g.Evaluations, g.GradEvaluations)
		}
		t.Logf("λ=%g: %d iterations, %d evaluations, %d gradient evaluations", g.Lambda, g.Iterations, g.Evaluations, g.GradEvaluations)
	}
}

func TestPatienceRule(t *testing.T) {
	tests := []struct {
		limit    int
		improved []bool
		stopAt   int // index of the check that stops, -1 none
	}{
		{0, []bool{false, false, false, false}, -1},
		{1, []bool{true, true, false}, 2},
		{2, []bool{true, false, true, false, false, false}, 4},
		{3, []bool{false, false, true, false, false, true}, -1},
	}
	for _, tc := range tests {
		p := &patience{limit: tc.limit}
		got := -1
		for i, imp := range tc.improved {
			if p.check(imp) {
				got = i
				break
			}
		}
		if got != tc.stopAt {
			t.Errorf("limit %d, checks %v: stopped at %d, want %d", tc.limit, tc.improved, got, tc.stopAt)
		}
	}
}

func TestGridOrder(t *testing.T) {
	l := []float64{0, 1e-6, 1e-4, 1e-2, 1e-4}
	if got := GridOrder(l, false); !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
		t.Errorf("cold order %v", got)
	}
	if got := GridOrder(l, true); !slices.Equal(got, []int{0, 1, 2, 4, 3}) {
		t.Errorf("warm order %v, want smallest λ first, ties in grid order", got)
	}
}

// checkTrace asserts the trace invariants of every grid point: iterations
// 0, 1, 2, … in order, evaluations non-decreasing and within the grid
// point's count, and the kept iteration present with the kept error.
func checkTrace(t *testing.T, fit *Fit, spec Spec) {
	t.Helper()
	byGrid := map[int][]TracePoint{}
	var order []int
	for _, p := range fit.Trace {
		if _, ok := byGrid[p.GridIndex]; !ok {
			order = append(order, p.GridIndex)
		}
		byGrid[p.GridIndex] = append(byGrid[p.GridIndex], p)
	}
	if !slices.Equal(order, GridOrder(spec.Lambdas, spec.WarmStart)) {
		t.Errorf("trace grid order %v", order)
	}
	for gi, g := range fit.Grid {
		tr := byGrid[gi]
		if len(tr) != g.Iterations+1 {
			t.Fatalf("λ=%g: %d trace points for %d iterations", g.Lambda, len(tr), g.Iterations)
		}
		found := false
		for i, p := range tr {
			if p.Iteration != i || p.Lambda != g.Lambda {
				t.Fatalf("λ=%g: trace point %d is iteration %d λ=%g", g.Lambda, i, p.Iteration, p.Lambda)
			}
			if i > 0 && (p.Evaluations < tr[i-1].Evaluations || p.GradEvaluations < tr[i-1].GradEvaluations) {
				t.Errorf("λ=%g: evaluations decrease at iteration %d", g.Lambda, i)
			}
			if p.Iteration == g.BestIteration {
				found = p.ValidError == g.ValidError
			}
		}
		if !found {
			t.Errorf("λ=%g: best iteration %d not in the trace with error %v", g.Lambda, g.BestIteration, g.ValidError)
		}
		// A line-search trial after the last iteration may add evaluations.
		if last := tr[len(tr)-1]; last.Evaluations > g.Evaluations || last.GradEvaluations > g.GradEvaluations {
			t.Errorf("λ=%g: trace ends at %d/%d evaluations, beyond the grid point's %d/%d", g.Lambda, last.Evaluations, last.GradEvaluations, g.Evaluations, g.GradEvaluations)
		}
	}
}

// TestEarlyStopAndWarmStart: with patience a grid point stops exactly
// Patience checks after the last one that kept parameters; with warm starts
// each point after the first starts where the previous one's kept
// parameters are (same validation error at iteration 0); the trace
// invariants hold either way.
func TestEarlyStopAndWarmStart(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	feat := randDense(rng, 400, 12)
	pairs := randPairs(rng, 400, 2400)
	for i, p := range pairs {
		pairs[i].Label = (feat.Row(int(p.X))[0] > 0) == (feat.Row(int(p.Y))[1] > 0)
	}
	train, valid := pairs[:1800], pairs[1800:]
	for _, warm := range []bool{false, true} {
		spec := Spec{Model: ModelLMT, K: 4, Lambdas: []float64{0, 1e-3, 1e-1}, MaxIter: 150, ValidEvery: 2, Patience: 2, WarmStart: warm}
		fit, err := Train(t.Context(), feat, train, valid, spec, rand.New(rand.NewPCG(3, 3)), nil)
		if err != nil {
			t.Fatal(err)
		}
		checkTrace(t, fit, spec)
		stops := 0
		for _, g := range fit.Grid {
			t.Logf("warm %v λ=%g: %s after %d iterations, best %d, %d evaluations", warm, g.Lambda, g.Status, g.Iterations, g.BestIteration, g.Evaluations)
			if g.Status == "Patience" {
				stops++
				if g.Iterations != g.BestIteration+spec.Patience*spec.ValidEvery {
					t.Errorf("λ=%g stopped at %d, best %d: want best + %d", g.Lambda, g.Iterations, g.BestIteration, spec.Patience*spec.ValidEvery)
				}
			}
		}
		if stops == 0 {
			t.Errorf("warm %v: no grid point stopped early in %d iterations", warm, spec.MaxIter)
		}
		if warm {
			order := GridOrder(spec.Lambdas, true)
			for k := 1; k < len(order); k++ {
				prev, cur := fit.Grid[order[k-1]], order[k]
				for _, p := range fit.Trace {
					if p.GridIndex == cur && p.Iteration == 0 && p.ValidError != prev.ValidError {
						t.Errorf("λ=%g starts at validation error %v, previous kept %v", spec.Lambdas[cur], p.ValidError, prev.ValidError)
					}
				}
			}
		}
	}
}

// Issue 37: an exact tie (validation error and log-likelihood) goes to the
// smaller λ in every order of the grid, not to the one listed first;
// otherwise error, then log-likelihood decide.
func TestChooseTieOrder(t *testing.T) {
	point := func(lambda, verr, ll float64) *fitResult {
		return &fitResult{point: GridPoint{Lambda: lambda, ValidError: verr, ValidLogLik: ll}}
	}
	for _, tc := range []struct {
		name   string
		points []*fitResult
		want   float64
	}{
		{"exact tie", []*fitResult{point(1e-3, 0.2, -0.5), point(0, 0.2, -0.5), point(1e-2, 0.2, -0.5)}, 0},
		{"error decides", []*fitResult{point(0, 0.3, -0.1), point(1e-2, 0.2, -0.9), point(1e-3, 0.25, -0.2)}, 1e-2},
		{"log-likelihood decides", []*fitResult{point(0, 0.2, -0.6), point(1e-2, 0.2, -0.5), point(1e-3, 0.2, -0.7)}, 1e-2},
	} {
		for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {2, 0, 1}} {
			var rs []*fitResult
			for _, i := range order {
				rs = append(rs, tc.points[i])
			}
			if got := choose(rs).point.Lambda; got != tc.want {
				t.Errorf("%s, order %v: chose λ %g, want %g", tc.name, order, got, tc.want)
			}
		}
	}
}

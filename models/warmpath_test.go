package models_test

import (
	"math/rand/v2"
	"testing"

	"monomer/models"
	"monomer/synth"
)

// TestWarmPathPlanted holds warm_start's promise on planted text
// (docs/notes/2026-11-27-warm-lambda-path.md): over a λ grid, the path from the
// smallest λ up costs fewer evaluations than training every λ from the
// initialisation, and picks a model as good on the test pairs. The world is
// TestTextQualityOrdering's (2,500 Men items' reviews through the
// pipeline's bag of words, also_bought, rewired negatives); Monomer K = 8,
// N = 4 and LMT K = 40, four λ, 150 iterations, checks every 10, patience
// 6. Measured (evaluations, test error), cold then warm: Monomer 434,
// 0.2358 and 382, 0.2290; LMT 428, 0.2747 and 382, 0.2690: the bound is
// 0.95 of cold's evaluations. A warm start that does not carry the kept
// parameters over costs what cold does and fails it; the direction of the
// path is TestGridOrder's. (Run downwards, from the largest λ, this world
// passes too, at 351 evaluations each: it is on the full-size grids that
// the upward path saves, where the expensive small-λ fits come first.)
func TestWarmPathPlanted(t *testing.T) {
	if testing.Short() {
		t.Skip("a quality test of about 20 CPU-s: make test runs it")
	}
	s := textWorld(t, 1, 2500)
	train, valid, test := s.pairs(t, synth.AlsoBought, rand.New(rand.NewPCG(1, 1)))
	for _, spec := range []models.Spec{
		{Model: models.ModelMonomer, K: 8, N: 4},
		{Model: models.ModelLMT, K: 40},
	} {
		spec.Lambdas, spec.MaxIter, spec.ValidEvery, spec.Patience = []float64{0, 1e-5, 1e-4, 1e-2}, 150, 10, 6
		evals := map[bool]int{}
		testErr := map[bool]float64{}
		for _, warm := range []bool{false, true} {
			spec.WarmStart = warm
			o := trainOutcome(t, s.bow, train, valid, test, spec, 1)
			for _, g := range o.fit.Grid {
				evals[warm] += g.Evaluations
			}
			testErr[warm] = o.testErr
			t.Logf("%s warm %v: %d evaluations, λ %g, validation %.4f, test %.4f", spec.Model, warm, evals[warm], o.fit.Lambda, o.fit.ValidError, o.testErr)
		}
		if float64(evals[true]) > 0.95*float64(evals[false]) {
			t.Errorf("%s: the warm path took %d evaluations, cold %d: want at most 0.95 of cold", spec.Model, evals[true], evals[false])
		}
		if testErr[true] > testErr[false]+0.01 {
			t.Errorf("%s: warm path test error %.4f, cold %.4f: want within 0.01", spec.Model, testErr[true], testErr[false])
		}
	}
}

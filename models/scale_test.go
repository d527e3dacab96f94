package models

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFeatureScaleInvariance: λ means the same whatever the feature scale.
// The same model trained on the features and on the features ×100 chooses
// the same λ and predicts the same: training sees s·f either way. The grid
// reaches λ = 1, far too large, to show the errors degrade alike.
func TestFeatureScaleInvariance(t *testing.T) {
	w := newPlanted(plantedConfig{items: 600, shared: 1, styled: 4, dim: 32, outDegree: 2, noise: 0.05}, rand.New(rand.NewPCG(1, 1)))
	big := &denseFeat{rows: w.feat.rows, dim: w.feat.dim, data: make([]float32, len(w.feat.data))}
	for i, v := range w.feat.data {
		big.data[i] = 100 * v
	}
	for _, spec := range []Spec{
		{Model: ModelWNN},
		{Model: ModelLMT, K: 8},
		{Model: ModelMonomer, K: 4, N: 4},
	} {
		t.Run(spec.Model, func(t *testing.T) {
			spec.Lambdas = []float64{0, 1e-3, 1e-2, 1}
			spec.MaxIter = 60
			spec.Float64 = true
			a, err := Train(t.Context(), w.feat, w.train, w.valid, spec, rand.New(rand.NewPCG(2, 2)), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Train(t.Context(), big, w.train, w.valid, spec, rand.New(rand.NewPCG(2, 2)), nil)
			if err != nil {
				t.Fatal(err)
			}
			if r := a.FeatureScale / b.FeatureScale; math.Abs(r-100) > 1e-4 {
				t.Errorf("feature scales %g and %g: ratio %g, want 100", a.FeatureScale, b.FeatureScale, r)
			}
			if a.Lambda != b.Lambda {
				t.Errorf("chose λ %g on the features, %g on them ×100", a.Lambda, b.Lambda)
			}
			for i := range a.Grid {
				ga, gb := a.Grid[i], b.Grid[i]
				// L-BFGS only descends: the last iterate's objective is at
				// least the kept one's.
				if !(ga.FinalObjective >= ga.TrainObjective) || ga.FinalObjective > 0 {
					t.Errorf("λ %g: final objective %g, kept %g", ga.Lambda, ga.FinalObjective, ga.TrainObjective)
				}
				if math.Abs(ga.ValidError-gb.ValidError) > 0.005 {
					t.Errorf("λ %g: validation error %.4f against %.4f ×100", ga.Lambda, ga.ValidError, gb.ValidError)
				}
			}
			_, pa, err := a.Score(w.feat, w.test)
			if err != nil {
				t.Fatal(err)
			}
			_, pb, err := b.Score(big, w.test)
			if err != nil {
				t.Fatal(err)
			}
			var maxDiff float64
			flips := 0
			for i := range pa {
				maxDiff = max(maxDiff, math.Abs(pa[i]-pb[i]))
				if (pa[i] > 0.5) != (pb[i] > 0.5) {
					flips++
				}
			}
			t.Logf("λ %g (grid errors %v); max |Δp| %.2g, %d of %d predictions differ", a.Lambda, gridErrors(a), maxDiff, flips, len(pa))
			// ×100 is not exact in float32, and L-BFGS carries the rounding
			// through 60 iterations: Monomer's probabilities move by up to
			// 0.035, WNN's and LMT's by 1e-4 at most; no prediction flips.
			if flips > 0 || maxDiff > 0.05 {
				t.Errorf("predictions differ: max |Δp| %.3g, %d flipped", maxDiff, flips)
			}
		})
	}
}

func gridErrors(f *Fit) []float64 {
	out := make([]float64, len(f.Grid))
	for i, g := range f.Grid {
		out[i] = math.Round(g.ValidError*1000) / 1000
	}
	return out
}

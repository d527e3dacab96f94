package models_test

import (
	"flag"
	"math/rand/v2"
	"testing"

	"monomer/graph"
	"monomer/imagefeat"
	"monomer/models"
	"monomer/synth"
)

// plantedWorld is the small scale's Men top at F = 256 with the given
// number of items and also_bought notions, keeping the items with an image
// and a review (renumbered; kept maps them back to World.Items), so image
// and bag-of-words features describe the same items.
func plantedWorld(t testing.TB, seed uint64, items, notions int) (s *synthTop, kept []int) {
	t.Helper()
	cfg, err := synth.Scale("small")
	if err != nil {
		t.Fatal(err)
	}
	cfg.FeatureDim = 256
	cfg.Tops = cfg.Tops[:1]
	if items > 0 {
		cfg.Tops[0].Items = items
	}
	cfg.Notions = notions
	w, err := synth.NewWorld(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	s = &synthTop{w: w, feat: &synthFeat{dim: cfg.FeatureDim}, index: make([]int32, len(w.Items))}
	for _, c := range w.Subcats {
		s.subNames = append(s.subNames, c.Name)
	}
	vec := make([]float32, cfg.FeatureDim)
	for i, it := range w.Items {
		s.index[i] = -1
		if it.Kind != synth.Regular || !it.HasImage || it.Reviews == 0 {
			continue
		}
		s.index[i] = int32(len(kept))
		kept = append(kept, i)
		s.sub = append(s.sub, int32(it.Subcat))
		w.Feature(i, vec)
		for _, v := range vec {
			s.feat.data = append(s.feat.data, v/imagefeat.DefaultScale)
		}
	}
	return s, kept
}

// fitOutcome is one trained model's test error and its selected grid point.
type fitOutcome struct {
	testErr float64
	fit     *models.Fit
	point   models.GridPoint
}

func trainOutcome(t testing.TB, feat models.Features, train, valid, test []graph.Pair, spec models.Spec, seed uint64) fitOutcome {
	t.Helper()
	f, err := models.Train(t.Context(), feat, train, valid, spec, rand.New(rand.NewPCG(seed, 2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, prob, err := f.Score(feat, test)
	if err != nil {
		t.Fatal(err)
	}
	o := fitOutcome{testErr: models.ErrorRate(pairLabels(test), prob), fit: f}
	for _, g := range f.Grid {
		if g.Lambda == f.Lambda {
			o.point = g
		}
	}
	return o
}

var (
	gateMeasure = flag.Bool("gate", false, "TestGateMeasure: log Monomer's gate use on planted worlds")
	gatePen     = flag.Float64("gate.penalty", 0, "TestGateMeasure: Spec.GatePenalty")
	gateInit    = flag.Float64("gate.init", 0, "TestGateMeasure: Spec.GateInit")
)

func TestGateMeasure(t *testing.T) {
	if !*gateMeasure {
		t.Skip("a measurement: -gate")
	}
	for _, notions := range []int{1, 4} {
		for seed := uint64(1); seed <= 3; seed++ {
			s, kept := plantedWorld(t, seed, 0, notions)
			train, valid, test := s.pairs(t, synth.AlsoBought, rand.New(rand.NewPCG(seed, 1)))
			for _, fs := range []struct {
				name string
				feat models.Features
			}{{"image", s.feat}, {"bow", newBowRows(countReviews(s.w, kept))}} {
				spec := models.Spec{Model: models.ModelMonomer, K: 8, N: 4, Lambdas: []float64{1e-4}, MaxIter: 200, Patience: 6,
					GatePenalty: *gatePen, GateInit: *gateInit}
				o := trainOutcome(t, fs.feat, train, valid, test, spec, seed)
				t.Logf("notions %d seed %d %s: %d items %d train pairs: test error %.3f, gate spaces %.2f routes %.2f (iters %d kept %d)",
					notions, seed, fs.name, len(kept), len(train), o.testErr, o.point.Gate.Spaces, o.point.Gate.Routes, o.point.Iterations, o.point.BestIteration)
			}
		}
	}
}

package models_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"monomer/graph"
	"monomer/imagefeat"
	"monomer/models"
	"monomer/synth"
)

// plantedWorld is the small scale's Men top at F = 256 with the given
// number of items and also_bought notions, keeping the items with an image
// and a review (renumbered; kept maps them back to World.Items), so image
// and bag-of-words features describe the same items. items 0 keeps the
// scale's count, notions 0 synth's default (4).
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

// TestGateMeasure logs Monomer's test error and gate use (GridPoint.Gate)
// on plantedWorld's worlds with one and four notions, seeds 1-3, image and
// bag of words, at the pipeline's budget (λ 1e-4, 200 iterations, patience
// 6): the measurement behind docs/notes/2026-11-25-gate-spaces.md. Run
// with -gate; -gate.penalty and -gate.init set Spec.GatePenalty
// and Spec.GateInit.
var (
	gateMeasure = flag.Bool("gate", false, "TestGateMeasure: log Monomer's gate use on planted worlds")
	gatePen     = flag.Float64("gate.penalty", 0, "TestGateMeasure: Spec.GatePenalty")
	gateInit    = flag.Float64("gate.init", 0, "TestGateMeasure: Spec.GateInit")
	gateFeat    = flag.String("gate.features", "image,bow", "TestGateMeasure: image, bow or image,bow")
	gateNotions = flag.String("gate.notions", "1,4", "TestGateMeasure: the worlds' numbers of notions")
)

func TestGateMeasure(t *testing.T) {
	if !*gateMeasure {
		t.Skip("a measurement: -gate")
	}
	for _, nf := range strings.Split(*gateNotions, ",") {
		notions, err := strconv.Atoi(nf)
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(1); seed <= 3; seed++ {
			s, kept := plantedWorld(t, seed, 0, notions)
			train, valid, test := s.pairs(t, synth.AlsoBought, rand.New(rand.NewPCG(seed, 1)))
			for _, fs := range []struct {
				name string
				feat models.Features
			}{{"image", s.feat}, {"bow", newBowRows(countReviews(s.w, kept))}} {
				if !slices.Contains(strings.Split(*gateFeat, ","), fs.name) {
					continue
				}
				spec := models.Spec{Model: models.ModelMonomer, K: 8, N: 4, Lambdas: []float64{1e-4}, MaxIter: 200, Patience: 6,
					GatePenalty: *gatePen, GateInit: *gateInit}
				o := trainOutcome(t, fs.feat, train, valid, test, spec, seed)
				t.Logf("notions %d seed %d %s: %d items %d train pairs: test error %.3f, gate spaces %.2f routes %.2f (iters %d kept %d)",
					notions, seed, fs.name, len(kept), len(train), o.testErr, o.point.Gate.Spaces, o.point.Gate.Routes, o.point.Iterations, o.point.BestIteration)
			}
		}
	}
}

var (
	curve      = flag.Bool("curve", false, "TestLearningCurve: measure LMT's and Monomer's test error against the number of training pairs")
	curveFeat  = flag.String("curve.features", "image", "TestLearningCurve: image, bow or image,bow")
	curveSizes = flag.String("curve.sizes", "500,1000,2000,4000,8000,0", "TestLearningCurve: training pairs (0: all)")
	curveSeeds = flag.Int("curve.seeds", 3, "TestLearningCurve: seeds 1..n")
	curveLmb   = flag.String("curve.lambdas", "1e-5,1e-4,1e-3", "TestLearningCurve: the λ grid of both models")
)

// TestLearningCurve is issue 28's learning curve, a measurement rather
// than a check (run with -curve; docs/notes/2026-11-25-learning-curve.md): on the
// planted world of plantedWorld (6,000 items, four notions, also_bought,
// rewired negatives, the 80/10/10 split) it trains LMT (K 40) and Monomer
// (K 8, N 4) on the first n training pairs of a seeded shuffle (nested
// subsets), validates and tests on the whole validation and test splits,
// with the pipeline's budget (λ from {1e-5, 1e-4, 1e-3} on validation, 200
// iterations, patience 6), and logs one table row per size: the mean test
// errors over the seeds, then each seed's. -curve.lambdas, -gate.penalty
// and -gate.init change the grid and Monomer's gate settings. A test rather than a
// subcommand: it needs the generator's world in memory, not files, and
// stays beside the planted tests it shares its worlds with.
func TestLearningCurve(t *testing.T) {
	if !*curve {
		t.Skip("a measurement: -curve")
	}
	var sizes []int
	for _, f := range strings.Split(*curveSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, n)
	}
	var lambdas []float64
	for _, f := range strings.Split(*curveLmb, ",") {
		l, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			t.Fatal(err)
		}
		lambdas = append(lambdas, l)
	}
	specs := []models.Spec{{Model: models.ModelLMT, K: 40}, {Model: models.ModelMonomer, K: 8, N: 4, GatePenalty: *gatePen, GateInit: *gateInit}}
	for _, fname := range strings.Split(*curveFeat, ",") {
		type cell struct{ lmt, mono []float64 }
		rows := make([]cell, len(sizes))
		used := make([]int, len(sizes))
		for seed := uint64(1); seed <= uint64(*curveSeeds); seed++ {
			s, kept := plantedWorld(t, seed, 0, 4)
			train, valid, test := s.pairs(t, synth.AlsoBought, rand.New(rand.NewPCG(seed, 1)))
			var feat models.Features = s.feat
			if fname == "bow" {
				feat = newBowRows(countReviews(s.w, kept))
			}
			rand.New(rand.NewPCG(seed, 3)).Shuffle(len(train), func(i, j int) { train[i], train[j] = train[j], train[i] })
			for si, n := range sizes {
				if n == 0 || n > len(train) {
					n = len(train)
				}
				used[si] = n
				for _, spec := range specs {
					spec.Lambdas, spec.MaxIter, spec.Patience = lambdas, 200, 6
					o := trainOutcome(t, feat, train[:n], valid, test, spec, seed)
					t.Logf("%s seed %d, %d train pairs: %s test error %.3f (λ %g, validation %.3f, %d iterations)",
						fname, seed, n, spec.Model, o.testErr, o.fit.Lambda, o.fit.ValidError, o.fit.Iterations)
					if spec.Model == models.ModelLMT {
						rows[si].lmt = append(rows[si].lmt, o.testErr)
					} else {
						rows[si].mono = append(rows[si].mono, o.testErr)
					}
				}
			}
		}
		mean := func(v []float64) float64 {
			var s float64
			for _, x := range v {
				s += x
			}
			return s / float64(len(v))
		}
		list := func(v []float64) string {
			var out []string
			for _, x := range v {
				out = append(out, fmt.Sprintf("%.3f", x))
			}
			return strings.Join(out, ", ")
		}
		t.Logf("%s: | train pairs | LMT | Monomer | Monomer − LMT | LMT by seed | Monomer by seed |", fname)
		for si, r := range rows {
			t.Logf("%s: | %d | %.3f | %.3f | %+.3f | %s | %s |", fname, used[si], mean(r.lmt), mean(r.mono), mean(r.mono)-mean(r.lmt), list(r.lmt), list(r.mono))
		}
	}
}

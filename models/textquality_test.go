package models_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"monomer/bow"
	"monomer/graph"
	"monomer/models"
	"monomer/synth"
)

// textTop is one top of a synth world as a bag-of-words experiment sees
// it: its Regular items with reviews, renumbered, with the pipeline's own
// bag-of-words vectors (bow.Build over the reviews' text).
type textTop struct {
	w     *synth.World
	bow   *bow.Matrix
	sub   []int32
	names []string
	index []int32 // World.Items index -> row, -1 outside
}

func newTextTop(t testing.TB, w *synth.World, top int) *textTop {
	t.Helper()
	s := &textTop{w: w, index: make([]int32, len(w.Items))}
	for _, c := range w.Subcats {
		s.names = append(s.names, c.Name)
	}
	var docs []bow.Doc
	for i, it := range w.Items {
		s.index[i] = -1
		if it.Kind != synth.Regular || it.Top != top || it.Reviews == 0 {
			continue
		}
		row := int32(len(s.sub))
		s.index[i] = row
		s.sub = append(s.sub, int32(it.Subcat))
		for _, text := range w.ReviewTexts(i) {
			docs = append(docs, bow.Doc{Item: row, Text: text})
		}
	}
	res, err := bow.Build(context.Background(), bow.SliceDocs(docs), len(s.sub), bow.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.bow = res.Matrix
	return s
}

// pairs: planted edges of g between rows, rewired negatives, 80/10/10.
func (s *textTop) pairs(t testing.TB, g string, rng *rand.Rand) (train, valid, test []graph.Pair) {
	t.Helper()
	return plantedPairs(t, s.w, g, s.index, s.sub, rng)
}

// textWorld is the planted text world of TestTextQualityOrdering: the
// small scale's Men top cut to the given number of image items (F is
// irrelevant: only the reviews are used).
func textWorld(t testing.TB, seed uint64, items int) *textTop {
	t.Helper()
	cfg, err := synth.Scale("small")
	if err != nil {
		t.Fatal(err)
	}
	cfg.FeatureDim = 16
	cfg.Tops = cfg.Tops[:1]
	cfg.Tops[0].Items = items
	w, err := synth.NewWorld(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return newTextTop(t, w, 0)
}

// textErrors trains WNN, LDA+WNN (20 topics), LMT (K = 40) and Monomer
// (K = 8, N = 4) on s's bag-of-words rows for graph g at one λ and returns
// their test errors.
func textErrors(t testing.TB, s *textTop, g string, seed uint64, lambda float64, maxIter int) map[string]float64 {
	train, valid, test := s.pairs(t, g, rand.New(rand.NewPCG(seed, 1)))
	t.Logf("%d items, %d terms, %d/%d/%d pairs", len(s.sub), s.bow.Dim(), len(train), len(valid), len(test))
	lda, _, err := models.FitLDA(context.Background(), s.bow, models.LDAOptions{Topics: 20, MinUpdates: models.LDAMinUpdates}, rand.New(rand.NewPCG(1, 3)))
	if err != nil {
		t.Fatal(err)
	}
	topics := lda.Transform(s.bow)
	errs := map[string]float64{}
	for _, tc := range []struct {
		name string
		feat models.Features
		spec models.Spec
	}{
		{"wnn", s.bow, models.Spec{Model: models.ModelWNN}},
		{"lda", topics, models.Spec{Model: models.ModelWNN}},
		{"lmt", s.bow, models.Spec{Model: models.ModelLMT, K: 40}},
		{"monomer", s.bow, models.Spec{Model: models.ModelMonomer, K: 8, N: 4}},
	} {
		tc.spec.Lambdas, tc.spec.MaxIter = []float64{lambda}, maxIter
		o := trainOutcome(t, tc.feat, train, valid, test, tc.spec, 1)
		errs[tc.name] = o.testErr
		t.Logf("%s %s: test error %.3f (validation %.3f, %d iterations)", g, tc.name, errs[tc.name], o.fit.ValidError, o.fit.Iterations)
	}
	return errs
}

// TestTextQualityOrdering is issue 28's quality test for text, in -short
// (about 10 CPU-seconds): on the reviews of a planted world (synth eq. 5:
// every topical word a reading of the item's latent), through the
// pipeline's own bag of words (bow.Build, 5000 terms), also_bought with
// rewired negatives, λ = 1e-4 (what validation picks for LMT and Monomer
// on this data), 150 iterations, the paper's ordering of test errors holds:
//
//	WNN > LDA+WNN,  WNN > LMT > Monomer.
//
// Measured at world seeds 1, 2, 3 (WNN, LDA+WNN, LMT, Monomer): 0.444
// 0.419 0.275 0.236; 0.426 0.418 0.258 0.234; 0.414 0.388 0.244 0.226.
// With the generator before issue 28 (topics per sentence, 3,000 items)
// the same models gave 0.481 0.400 0.338 0.365: Monomer above LMT, LMT far
// above the paper's errors.
func TestTextQualityOrdering(t *testing.T) {
	errs := textErrors(t, textWorld(t, 1, 2500), synth.AlsoBought, 1, 1e-4, 150)
	for _, c := range []struct {
		lo, hi string
		by     float64
	}{{"lda", "wnn", 0.01}, {"lmt", "wnn", 0.1}, {"monomer", "lmt", 0.02}} {
		if !(errs[c.lo] < errs[c.hi]-c.by) {
			t.Errorf("%s test error %.3f not below %s's %.3f by %.2f", c.lo, errs[c.lo], c.hi, errs[c.hi], c.by)
		}
	}
}

package models_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"monomer/models"
	"monomer/synth"
)

// reviewCounts is a CountRows of word counts from synth reviews.
type reviewCounts struct {
	dim int
	idx [][]int32
	cnt [][]int32
}

func (r *reviewCounts) Rows() int                       { return len(r.idx) }
func (r *reviewCounts) Dim() int                        { return r.dim }
func (r *reviewCounts) Counts(i int) ([]int32, []int32) { return r.idx[i], r.cnt[i] }

// countReviews tokenises the reviews of the items (World.Items indices) on
// letters, lower case, words of three letters or more.
func countReviews(w *synth.World, items []int) *reviewCounts {
	vocab := map[string]int32{}
	var docs []map[string]int32
	for _, i := range items {
		c := map[string]int32{}
		for _, text := range w.ReviewTexts(i) {
			for _, tok := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
				if len(tok) >= 3 {
					c[tok]++
				}
			}
		}
		docs = append(docs, c)
	}
	var words []string
	for _, c := range docs {
		for tok := range c {
			if _, ok := vocab[tok]; !ok {
				vocab[tok] = 0
				words = append(words, tok)
			}
		}
	}
	slices.Sort(words)
	for i, tok := range words {
		vocab[tok] = int32(i)
	}
	out := &reviewCounts{dim: len(words)}
	for _, c := range docs {
		var idx, cnt []int32
		for tok := range c {
			idx = append(idx, vocab[tok])
		}
		slices.Sort(idx)
		for _, j := range idx {
			cnt = append(cnt, c[words[j]])
		}
		out.idx, out.cnt = append(out.idx, idx), append(out.cnt, cnt)
	}
	return out
}

// qualityWorld is the planted world of TestQualityOrdering: the small
// scale's Men top cut to 2,500 items at F = 256, keeping the items with an
// image and a review (renumbered; kept maps them back to World.Items).
func qualityWorld(t *testing.T, seed uint64) (s *synthTop, kept []int) {
	t.Helper()
	return plantedWorld(t, seed, 2500, 0)
}

// TestQualityOrdering is the quality regression test of issue 11, fast
// enough for -short (about 8 CPU-seconds): on qualityWorld's planted world,
// also_bought with rewired negatives, the paper's ordering of test errors
// holds at seed 1,
//
//	CT ≈ 50 % > WNN > LMT > Monomer,
//
// and LDA+WNN on the same items' review words is clearly below 50 %.
//
// Seeds 1-6 (world, split and training;
// docs/notes/2026-11-25-test-efficacy.md, "Quality thresholds"; re-measured on issue 28's generator, whose reviews change
// which items have one) give CT 0.452-0.502, LDA+WNN 0.374-0.420 and the
// steps
//
//	CT − WNN        0.063 0.070 0.063 0.053 0.096 0.059
//	WNN − LMT       0.102 0.079 0.096 0.119 0.093 0.105
//	LMT − Monomer   0.048 0.052 0.056 0.040 0.062 0.068
//
// Each step asked of seed 1 is its value there less two standard
// deviations of the six, rounded down: 0.03, 0.07 and 0.02; CT stays in
// 0.42-0.58 and LDA+WNN below 0.45 (worst 0.420 plus about one standard
// deviation, 0.018). Re-measure with
// `go test ./models -run 'TestQualityOrdering$' -quality-seeds 6 -v`.
func TestQualityOrdering(t *testing.T) {
	if *qualitySeeds > 0 {
		for seed := range uint64(*qualitySeeds) {
			errs := qualityErrors(t, seed+1)
			t.Logf("seed %d: ct %.4f wnn %.4f lmt %.4f monomer %.4f lda %.4f", seed+1, errs["ct"], errs["wnn"], errs["lmt"], errs["monomer"], errs["lda"])
		}
		return
	}
	errs := qualityErrors(t, 1)
	if e := errs["ct"]; e < 0.42 || e > 0.58 {
		t.Errorf("CT test error %.3f, want 0.42-0.58 (rewired negatives keep degrees)", e)
	}
	for _, step := range []struct {
		a, b string
		by   float64
	}{{"ct", "wnn", 0.03}, {"wnn", "lmt", 0.07}, {"lmt", "monomer", 0.02}} {
		if !(errs[step.b] < errs[step.a]-step.by) {
			t.Errorf("%s test error %.3f not below %s's %.3f by %.2f", step.b, errs[step.b], step.a, errs[step.a], step.by)
		}
	}
	if e := errs["lda"]; e > 0.45 {
		t.Errorf("LDA+WNN test error %.3f, want below 0.45", e)
	}
}

var qualitySeeds = flag.Int("quality-seeds", 0, "TestQualityOrdering: log the test errors of world seeds 1..N instead of checking seed 1 (the measurement behind its margins)")

// qualityErrors trains TestQualityOrdering's models on the world of seed
// and returns their test errors by name.
func qualityErrors(t *testing.T, seed uint64) map[string]float64 {
	t.Helper()
	s, kept := qualityWorld(t, seed)
	w := s.w
	train, valid, test := s.pairs(t, synth.AlsoBought, rand.New(rand.NewPCG(seed, 1)))
	labels := pairLabels(test)
	t.Logf("%d items, %d/%d/%d pairs", len(kept), len(train), len(valid), len(test))

	errs := map[string]float64{}
	ct, err := models.FitCT(s.sub, s.subNames, train, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, prob := ct.Score(test)
	errs["ct"] = models.ErrorRate(labels, prob)

	lda, st, err := models.FitLDA(context.Background(), countReviews(w, kept), models.LDAOptions{Topics: 10, MinUpdates: models.LDAMinUpdates}, rand.New(rand.NewPCG(seed, 3)))
	if err != nil {
		t.Fatal(err)
	}
	topics := lda.Transform(countReviews(w, kept))
	lambdas := []float64{1e-5, 1e-4, 1e-3}
	for _, tc := range []struct {
		name string
		feat models.Features
		spec models.Spec
	}{
		{"wnn", s.feat, models.Spec{Model: models.ModelWNN}},
		{"lmt", s.feat, models.Spec{Model: models.ModelLMT, K: 40}},
		{"monomer", s.feat, models.Spec{Model: models.ModelMonomer, K: 8, N: 4}},
		{"lda", topics, models.Spec{Model: models.ModelWNN}},
	} {
		tc.spec.Lambdas, tc.spec.MaxIter = lambdas, 100
		o := trainOutcome(t, tc.feat, train, valid, test, tc.spec, seed)
		errs[tc.name] = o.testErr
		t.Logf("%s: test error %.3f (λ %g, validation %.3f, %d iterations)", tc.name, errs[tc.name], o.fit.Lambda, o.fit.ValidError, o.fit.Iterations)
	}
	t.Logf("LDA: %d passes, %d updates; test errors %v", st.Passes, st.Updates, errs)
	return errs
}

// bowRows is a Sparse of sum-to-one word weights, as the features stage
// writes bag-of-words vectors.
type bowRows struct {
	dim int
	idx [][]int32
	val [][]float32
}

func (b *bowRows) Rows() int                            { return len(b.idx) }
func (b *bowRows) Dim() int                             { return b.dim }
func (b *bowRows) SparseRow(i int) ([]int32, []float32) { return b.idx[i], b.val[i] }
func newBowRows(c *reviewCounts) *bowRows {
	b := &bowRows{dim: c.dim, idx: c.idx}
	for _, cnt := range c.cnt {
		var sum float32
		for _, v := range cnt {
			sum += float32(v)
		}
		val := make([]float32, len(cnt))
		for j, v := range cnt {
			val[j] = float32(v) / sum
		}
		b.val = append(b.val, val)
	}
	return b
}

// TestLambdaGrid trains every model at every λ of the default grid on
// image features and on sum-to-one bag-of-words vectors of the same planted
// items (qualityWorld, also_bought). With the features scaled to mean
// ‖f‖² = 1 (see Train) one grid serves both: the best validation error is
// reached inside the grid (within 0.005 where the curve is flat), and a
// grid point predicts a single class only at the largest λ, where the
// starting penalty (≈ λF/2 per embedding) is tens of times the
// log-likelihood. Before the scaling, every λ ≥ 1e-4 gave a constant
// predictor on bag of words.
//
// Validation errors at seed 1, λ = 0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, with
// issue 28's reviews (before it, bow WNN 0.479-0.486, LMT 0.379 at best,
// Monomer 0.365):
//
//	image WNN      0.383 0.383 0.383 0.382 0.400 0.455
//	image LMT      0.316 0.315 0.316 0.306 0.298 0.352
//	image Monomer  0.261 0.259 0.259 0.241 0.289 0.498
//	bow WNN        0.437 0.438 0.444 0.444 0.444 0.444
//	bow LMT        0.257 0.261 0.261 0.252 0.283 0.449
//	bow Monomer    0.252 0.248 0.247 0.241 0.334 0.500 (all related)
func TestLambdaGrid(t *testing.T) {
	if testing.Short() {
		t.Skip("36 fits, about a CPU-minute")
	}
	s, kept := qualityWorld(t, 1)
	train, valid, _ := s.pairs(t, synth.AlsoBought, rand.New(rand.NewPCG(1, 1)))
	labels := pairLabels(valid)
	grid := models.DefaultLambdas()
	for _, fs := range []struct {
		name string
		feat models.Features
	}{{"image", s.feat}, {"bow", newBowRows(countReviews(s.w, kept))}} {
		for _, spec := range []models.Spec{
			{Model: models.ModelWNN},
			{Model: models.ModelLMT, K: 40},
			{Model: models.ModelMonomer, K: 8, N: 4},
		} {
			spec.MaxIter = 100
			bestErr, inner := 2.0, 2.0
			var line []string
			for gi, l := range grid {
				spec.Lambdas = []float64{l}
				f, err := models.Train(t.Context(), fs.feat, train, valid, spec, rand.New(rand.NewPCG(1, 2)), nil)
				if err != nil {
					t.Fatal(err)
				}
				_, prob, err := f.Score(fs.feat, valid)
				if err != nil {
					t.Fatal(err)
				}
				e := models.ErrorRate(labels, prob)
				pos := 0
				for _, p := range prob {
					if p > 0.5 {
						pos++
					}
				}
				share := float64(pos) / float64(len(prob))
				line = append(line, fmt.Sprintf("λ=%g: %.3f (%.0f%% related)", l, e, 100*share))
				bestErr = min(bestErr, e)
				if gi > 0 && gi < len(grid)-1 {
					inner = min(inner, e)
				}
				if (share < 0.02 || share > 0.98) && gi < len(grid)-1 {
					t.Errorf("%s %s: λ %g predicts %.1f %% of validation pairs related: a constant predictor", fs.name, spec.Model, l, 100*share)
				}
			}
			t.Logf("%s %s: %s", fs.name, spec.Model, strings.Join(line, ", "))
			if inner > bestErr+0.005 {
				t.Errorf("%s %s: best validation error %.3f at an end of the grid, %.3f inside", fs.name, spec.Model, bestErr, inner)
			}
		}
	}
}

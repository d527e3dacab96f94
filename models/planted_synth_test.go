package models_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"monomer/graph"
	"monomer/imagefeat"
	"monomer/models"
	"monomer/synth"
)

// The quality test of issue 6 on synth's planted world (see synth/doc.go):
// one top's image items, positives from a planted graph, negatives by
// degree-preserving rewiring, the 80/10/10 split, then every model.

// synthFeat holds one top's image features, row-major.
type synthFeat struct {
	dim  int
	data []float32
}

func (f *synthFeat) Rows() int           { return len(f.data) / f.dim }
func (f *synthFeat) Dim() int            { return f.dim }
func (f *synthFeat) Row(i int) []float32 { return f.data[i*f.dim : (i+1)*f.dim] }

// synthTop is one top of a synth world as an image experiment sees it: its
// Regular items with an image, renumbered 0..n-1.
type synthTop struct {
	w        *synth.World
	feat     *synthFeat
	sub      []int32  // per item: index into subNames
	subNames []string // World.Subcats' names
	index    []int32  // World.Items index -> item, -1 outside the top
}

func newSynthTop(w *synth.World, top int) *synthTop {
	f := w.Config.FeatureDim
	s := &synthTop{w: w, feat: &synthFeat{dim: f}, index: make([]int32, len(w.Items))}
	for _, c := range w.Subcats {
		s.subNames = append(s.subNames, c.Name)
	}
	vec := make([]float32, f)
	for i, it := range w.Items {
		s.index[i] = -1
		if it.Kind != synth.Regular || it.Top != top || !it.HasImage {
			continue
		}
		s.index[i] = int32(len(s.sub))
		s.sub = append(s.sub, int32(it.Subcat))
		w.Feature(i, vec)
		for _, v := range vec {
			// Scaled as the features stage does.
			s.feat.data = append(s.feat.data, v/imagefeat.DefaultScale)
		}
	}
	return s
}

// pairs takes the planted edges of graph g between the top's items as
// positives, draws as many negatives by graph.Rewire and splits them with
// graph.SplitPairs, as the negatives stage does.
func (s *synthTop) pairs(t testing.TB, g string, rng *rand.Rand) (train, valid, test []graph.Pair) {
	t.Helper()
	return plantedPairs(t, s.w, g, s.index, s.sub, rng)
}

// plantedPairs is pairs for any renumbering of w's items: index maps
// World.Items to rows (-1 outside), sub gives each row's subcategory.
func plantedPairs(t testing.TB, w *synth.World, g string, index, sub []int32, rng *rand.Rand) (train, valid, test []graph.Pair) {
	t.Helper()
	var pos []graph.Edge
	for _, e := range w.Edges(g) {
		if x, y := index[e.Src], index[e.Dst]; x >= 0 && y >= 0 {
			pos = append(pos, graph.Edge{Src: x, Dst: y})
		}
	}
	neg, _, err := graph.Rewire(context.Background(), pos, sub, rng, graph.RewireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return splitParts(pos, neg, rng)
}

func pairLabels(ps []graph.Pair) []bool {
	l := make([]bool, len(ps))
	for i, p := range ps {
		l[i] = p.Label
	}
	return l
}

// The planted test's sizes: the Men top of the small scale (6,000 image
// items, about 21,000 also_bought and 12,000 also_viewed edges) at F = 256.
// Monomer has K = 8, the latent dimension, so E_0ᵀf_x can reach T_k z_x
// (synth eq. 6), and N = 4, the planted notions; LMT gets the same embedding
// budget, K = (N+1)·8 = 40. One λ: on this data validation prefers 1e-4
// to 1e-3 and 1e-2 for every model, and the kept best-validation iterate
// regularises as well. Monomer's best validation iteration on also_bought
// falls anywhere in 50-270 (seeds 1-5), hence its cap; also_viewed needs
// less.
const (
	synthSeed      = 1
	synthDim       = 256
	synthKMono     = 8
	synthN         = 4
	synthLambda    = 1e-4
	synthItersAB   = 300
	synthItersView = 150
)

// newPlantedSynth generates the Men top of the small scale at F = synthDim.
func newPlantedSynth(t *testing.T, seed uint64) *synthTop {
	t.Helper()
	cfg, err := synth.Scale("small")
	if err != nil {
		t.Fatal(err)
	}
	cfg.FeatureDim = synthDim
	cfg.Tops = cfg.Tops[:1] // Men
	w, err := synth.NewWorld(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return newSynthTop(w, 0)
}

// plantedSynthErrors fits CT, WNN, LMT and Monomer to graph g of s and
// returns each model's test error, logging it with its AUC.
func plantedSynthErrors(t *testing.T, s *synthTop, g string, seed uint64, maxIter int) map[string]float64 {
	train, valid, test := s.pairs(t, g, rand.New(rand.NewPCG(seed, 1)))
	labels := pairLabels(test)
	errs := map[string]float64{}
	ct, err := models.FitCT(s.sub, s.subNames, train, 0)
	if err != nil {
		t.Fatal(err)
	}
	dist, prob := ct.Score(test)
	for i := range dist {
		dist[i] = -dist[i]
	}
	errs["ct"] = models.ErrorRate(labels, prob)
	t.Logf("%s: %d/%d/%d pairs; ct: test error %.3f, AUC %.3f", g, len(train), len(valid), len(test), errs["ct"], models.AUC(labels, dist))
	for _, spec := range []models.Spec{
		{Model: models.ModelWNN},
		{Model: models.ModelLMT, K: (synthN + 1) * synthKMono},
		{Model: models.ModelMonomer, K: synthKMono, N: synthN},
	} {
		spec.Lambdas = []float64{synthLambda}
		spec.MaxIter = maxIter
		f, err := models.Train(t.Context(), s.feat, train, valid, spec, rand.New(rand.NewPCG(seed, 2)), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, prob, err := f.Score(s.feat, test)
		if err != nil {
			t.Fatal(err)
		}
		errs[spec.Model] = models.ErrorRate(labels, prob)
		t.Logf("%s: %s: test error %.3f, AUC %.3f (validation error %.3f, %d iterations, kept %d, %d parameters)",
			g, spec.Model, errs[spec.Model], models.AUC(labels, prob), f.ValidError, f.Iterations, f.BestIteration, f.NumParams())
	}
	return errs
}

// TestPlantedSynth is issue 6's quality test on synth's planted world: every
// learned model far better than chance, Monomer clearly better than LMT on
// the heterogeneous also_bought graph and not on the metric also_viewed one,
// CT near chance because rewired negatives keep every item's degrees.
//
// Test errors measured with seeds 1-5 (WNN, LMT, Monomer; CT):
//
//	also_bought  WNN 0.399-0.417  LMT 0.279-0.309  Monomer 0.226-0.244  CT 0.450-0.493
//	also_viewed  WNN 0.226-0.247  LMT 0.175-0.191  Monomer 0.168-0.184  CT 0.434-0.480
//
// Monomer's lead over LMT is 0.053-0.070 on also_bought, -0.000-0.010 on
// also_viewed. WNN's bound on also_bought is looser: a weighted metric on
// raw features sees only the StyleDims coordinates that every notion keeps
// (the paper's WNN: 35 % on Men also_bought, 19 % on also_viewed).
// About 30 s on one core; TestPlanted is the fast counterpart.
func TestPlantedSynth(t *testing.T) {
	if testing.Short() {
		t.Skip("trains six models on 6,000 items for about 30 s")
	}
	s := newPlantedSynth(t, synthSeed)
	tests := []struct {
		graph   string
		maxIter int
		maxErr  map[string]float64
	}{
		{synth.AlsoBought, synthItersAB, map[string]float64{models.ModelWNN: 0.45, models.ModelLMT: 0.35, models.ModelMonomer: 0.30}},
		{synth.AlsoViewed, synthItersView, map[string]float64{models.ModelWNN: 0.30, models.ModelLMT: 0.25, models.ModelMonomer: 0.25}},
	}
	gain := map[string]float64{}
	for _, tc := range tests {
		errs := plantedSynthErrors(t, s, tc.graph, synthSeed, tc.maxIter)
		for _, m := range []string{models.ModelWNN, models.ModelLMT, models.ModelMonomer} {
			if errs[m] > tc.maxErr[m] {
				t.Errorf("%s: %s test error %.3f, want <= %.2f", tc.graph, m, errs[m], tc.maxErr[m])
			}
		}
		if e := errs["ct"]; e < 0.40 || e > 0.60 {
			t.Errorf("%s: CT test error %.3f, want within 0.40-0.60", tc.graph, e)
		}
		gain[tc.graph] = errs[models.ModelLMT] - errs[models.ModelMonomer]
	}
	if g := gain[synth.AlsoBought]; g < 0.03 {
		t.Errorf("also_bought: Monomer's test error only %.3f below LMT's, want >= 0.03", g)
	}
	if ab, av := gain[synth.AlsoBought], gain[synth.AlsoViewed]; ab < av+0.02 {
		t.Errorf("Monomer's lead over LMT is %.3f on also_bought, %.3f on also_viewed: the mixture should matter on also_bought", ab, av)
	}
}

package models_test

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"monomer/graph"
	"monomer/models"
)

// spreadWorld is a planted relation whose own top-10 lists cover more of the
// catalogue than nearest neighbours do, for the coverage claim of the
// paper's section V: synth's Men top (newPlantedSynth) with its features
// and subcategories, but edges planted by the test, from x to the items
// whose latents are nearest target(x) = 1.3·R z_x (one random rotation R,
// the same for every item). The rotation keeps the targets spread like the
// items and the factor 1.3 widens them a little, towards the items on the
// rim that nearest neighbours leave out.
type spreadWorld struct {
	s         *synthTop
	z, target [][]float64 // per item: latent, target
	train     []graph.Pair
	valid     []graph.Pair
	test      []graph.Pair
}

const spreadScale = 1.3

func newSpreadWorld(t *testing.T) *spreadWorld {
	t.Helper()
	s := newPlantedSynth(t, synthSeed)
	n := s.feat.Rows()
	w := &spreadWorld{s: s, z: make([][]float64, n), target: make([][]float64, n)}
	for i, wi := range localToWorld(s) {
		for _, v := range s.w.Latent(wi) {
			w.z[i] = append(w.z[i], float64(v))
		}
	}
	d := len(w.z[0])
	rot := randomRotation(rand.New(rand.NewPCG(5, 5)), d)
	for x, z := range w.z {
		w.target[x] = make([]float64, d)
		for a := range d {
			for b, v := range z {
				w.target[x][a] += spreadScale * rot[a*d+b] * v
			}
		}
	}
	pos := w.plant(4, 128, rand.New(rand.NewPCG(3, 3)))
	neg, _, err := graph.Rewire(context.Background(), pos, s.sub, rand.New(rand.NewPCG(3, 4)), graph.RewireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.train, w.valid, w.test = splitParts(pos, neg, rand.New(rand.NewPCG(3, 5)))
	return w
}

// splitParts splits positives and their negatives as the pipeline does
// (graph.SplitPairs) and returns the three parts.
func splitParts(pos, neg []graph.Edge, rng *rand.Rand) (train, valid, test []graph.Pair) {
	all, _ := graph.SplitPairs(pos, neg, rng, 0)
	for _, p := range all {
		switch p.Split {
		case graph.Train:
			train = append(train, p)
		case graph.Valid:
			valid = append(valid, p)
		default:
			test = append(test, p)
		}
	}
	return train, valid, test
}

// plant gives every item deg edges, each to the item nearest its target
// among cand random items of other subcategories (plantNearest).
func (w *spreadWorld) plant(deg, cand int, rng *rand.Rand) []graph.Edge {
	n := len(w.z)
	draw := func(x int) (int32, bool) {
		y := int32(rng.IntN(n))
		return y, int(y) != x && w.s.sub[y] != w.s.sub[x]
	}
	return plantNearest(n, deg, cand, draw, func(x int, y int32) float64 { return sqDist(w.target[x], w.z[y]) })
}

// plantNearest gives every item x of n deg edges, each to the candidate
// nearest x's target (dist) among cand draws of draw(x), which also says
// whether the candidate may be linked to x; no candidate twice. This is how
// synth plants its graphs, without the edge noise.
func plantNearest(n, deg, cand int, draw func(x int) (int32, bool), dist func(x int, y int32) float64) []graph.Edge {
	var out []graph.Edge
	for x := range n {
		var taken []int32
		for range deg {
			best, bestD := int32(-1), math.Inf(1)
			for range cand {
				y, ok := draw(x)
				if !ok || slices.Contains(taken, y) {
					continue
				}
				if d := dist(x, y); d < bestD {
					best, bestD = y, d
				}
			}
			if best >= 0 {
				taken = append(taken, best)
				out = append(out, graph.Edge{Src: int32(x), Dst: best})
			}
		}
	}
	return out
}

// coverage is the share of items in the top-k of some query, each query's
// items (itself excluded) ranked by dist.
func (w *spreadWorld) coverage(queries []int32, k int, dist func(x, y int) float64) float64 {
	type scored struct {
		item int32
		d    float64
	}
	n := len(w.z)
	seen := make([]bool, n)
	all := make([]scored, 0, n)
	for _, q := range queries {
		all = all[:0]
		for y := range n {
			if int32(y) != q {
				all = append(all, scored{int32(y), dist(int(q), y)})
			}
		}
		slices.SortFunc(all, func(a, b scored) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.item, b.item)) })
		for _, h := range all[:k] {
			seen[h.item] = true
		}
	}
	covered := 0
	for _, c := range seen {
		if c {
			covered++
		}
	}
	return float64(covered) / float64(n)
}

func sqDist(a, b []float64) float64 {
	var s float64
	for i := range a {
		e := a[i] - b[i]
		s += e * e
	}
	return s
}

// randomRotation is a random d×d orthogonal matrix, row-major
// (Gram-Schmidt on a Gaussian matrix).
func randomRotation(rng *rand.Rand, d int) []float64 {
	q := make([]float64, d*d)
	for i := range d {
		row := q[i*d : (i+1)*d]
		for j := range row {
			row[j] = rng.NormFloat64()
		}
		for p := range i {
			prev := q[p*d : (p+1)*d]
			var dot float64
			for j := range row {
				dot += row[j] * prev[j]
			}
			for j := range row {
				row[j] -= dot * prev[j]
			}
		}
		norm := math.Sqrt(sqDist(row, make([]float64, d)))
		for j := range row {
			row[j] /= norm
		}
	}
	return q
}

// TestPlantedCoverageSpread tests the paper's "Monomer covers more of the
// catalogue than LMT" where its premise holds: in spreadWorld the planted
// relation's own top-10 lists, every item a query, cover more items than
// nearest latents do (asserted: 0.995 against 0.983 at this seed; with a
// sample of 500 queries it is the other way round, 0.511 against 0.531,
// as with synth's own also_bought, so whole-catalogue lists are the ones
// scored). Monomer models the relation far better than LMT (asserted:
// test error 0.158 against 0.328; a rotation is not a metric).
//
// The claim itself does not hold here and is logged, not asserted: Monomer's
// lists cover 0.952 of the items, LMT's 0.990, the truth's 0.995 (the gated
// setting, GatePenalty 0.1 and GateInit 1: 0.957). A better fit of a more
// spread relation does not give Monomer the wider coverage; see
// docs/notes/2026-11-23-recommendations-report.md.
func TestPlantedCoverageSpread(t *testing.T) {
	if testing.Short() {
		t.Skip("plants a relation on 6,000 items and trains LMT and Monomer")
	}
	w := newSpreadWorld(t)
	n := len(w.z)
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	truth := w.coverage(all, 10, func(x, y int) float64 { return sqDist(w.target[x], w.z[y]) })
	metric := w.coverage(all, 10, func(x, y int) float64 { return sqDist(w.z[x], w.z[y]) })
	t.Logf("%d items, %d/%d/%d pairs; top-10 coverage, every item a query: planted relation %.3f, nearest latents %.3f", n, len(w.train), len(w.valid), len(w.test), truth, metric)
	if !(truth > metric) {
		t.Fatalf("premise: the planted relation's lists cover %.3f, nearest latents' %.3f: want the planted relation's wider", truth, metric)
	}
	labels := pairLabels(w.test)
	errs, cov := map[string]float64{}, map[string]float64{}
	for _, spec := range []models.Spec{
		{Model: models.ModelLMT, K: (synthN + 1) * synthKMono},
		{Model: models.ModelMonomer, K: synthKMono, N: synthN},
	} {
		spec.Lambdas, spec.MaxIter, spec.Patience = []float64{synthLambda}, models.DefaultMaxIter, 6
		f, err := models.Train(t.Context(), w.s.feat, w.train, w.valid, spec, rand.New(rand.NewPCG(synthSeed, 2)), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, prob, err := f.Score(w.s.feat, w.test)
		if err != nil {
			t.Fatal(err)
		}
		errs[spec.Model] = models.ErrorRate(labels, prob)
		st, _ := recommendStats(t, w.s, f, all, 10)
		cov[spec.Model] = st.coverage
		t.Logf("%s: test error %.3f, top-10 coverage %.3f, cross-subcategory %.3f", spec.Model, errs[spec.Model], st.coverage, st.cross)
	}
	if lm, mo := errs[models.ModelLMT], errs[models.ModelMonomer]; !(mo < lm-0.1) {
		t.Errorf("test error: Monomer %.3f, LMT %.3f: want Monomer at least 0.1 below (the relation is a rotation, not a metric)", mo, lm)
	}
	t.Logf("coverage: Monomer %.3f, LMT %.3f, planted relation %.3f (the paper: Monomer wider than LMT)", cov[models.ModelMonomer], cov[models.ModelLMT], truth)
}

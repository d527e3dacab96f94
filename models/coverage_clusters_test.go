package models_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"monomer/graph"
	"monomer/models"
)

// clusterWorld is a planted world with the premise of the paper's "limited
// coverage" (section V, Figure 6): image features dominated by what kind of
// item it is (CNN features of shoes look like shoes), so each subcategory is
// a cluster in feature space, while also_bought links items across
// subcategories through an item-level compatibility that is not nearness in
// feature space.
//
// 6,000 items, F = synthDim. Item x of subcategory s (12 subcategories,
// Zipf-like sizes as synth's) has
// a style z_x ~ N(0, I_8) and a nuisance n_x ~ N(0, I_8) (what the image
// shows that no purchase depends on). Its features are
//
//	f_x = A [β m_s; z_x; n_x] + ε,  m_s ~ N(0, I_8), ε ~ N(0, I_F)
//
// with A's F×24 entries N(0, 1), so β sets how far apart the subcategory
// clusters are against the items' spread inside one (β = 0: no clusters).
// The features are linear in the latents, not ReLU ones as synth's: the
// premise is the clusters, and both models are linear maps of f.
//
// also_bought: each subcategory has up to 3 complementary ones (a
// symmetric random graph: shirts with pants and shoes), and 4 notions, fixed
// random rotations T_k of the style with k(x) = argmax_k (G z_x)_k, as
// synth's eq. 3 (G's entries N(0, 1)), without offsets. Each item gets clusterDeg edges, each to
// the item nearest T_k(x) z_x among clusterCand items drawn uniformly from
// its complements (synth's eq. 6). Negatives by graph.Rewire, split by
// graph.SplitPairs, as the pipeline does. Every draw comes from
// PCG(seed, 100+purpose).
type clusterWorld struct {
	s      *synthTop   // feat and sub only
	z      [][]float64 // per item: style
	target [][]float64 // per item: T_k(x) z_x
	u      [][]float64 // per item: [β m_s; z_x; n_x], the noise-free features
	pool   [][]int32   // per subcategory: the items of its complements
	comp   [][]int32   // per subcategory: its complements
	train  []graph.Pair
	valid  []graph.Pair
	test   []graph.Pair
}

const (
	clusterItems   = 6000
	clusterSubcats = 12
	clusterComp    = 3
	clusterLatent  = 8 // each of m_s, z_x, n_x
	clusterNotions = 4
	clusterDeg     = 4
	clusterCand    = 128
)

func newClusterWorld(t *testing.T, seed uint64, beta float64) *clusterWorld {
	t.Helper()
	rng := func(purpose uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 100+purpose)) }
	const d = clusterLatent
	n := clusterItems

	// Subcategory sizes: weight (rank+2)^-0.9 over a random ranking.
	r := rng(1)
	w := make([]float64, clusterSubcats)
	var wsum float64
	for i, rank := range r.Perm(clusterSubcats) {
		w[i] = math.Pow(float64(rank+2), -0.9)
		wsum += w[i]
	}
	sub := make([]int32, 0, n)
	for s := range clusterSubcats {
		size := int(math.Round(float64(n) * w[s] / wsum))
		if s == clusterSubcats-1 {
			size = n - len(sub)
		}
		for range size {
			sub = append(sub, int32(s))
		}
	}

	// Complements: a symmetric random graph of degree at most clusterComp.
	comp := make([][]int32, clusterSubcats)
	var pairs [][2]int32
	for a := range clusterSubcats {
		for b := a + 1; b < clusterSubcats; b++ {
			pairs = append(pairs, [2]int32{int32(a), int32(b)})
		}
	}
	r = rng(2)
	r.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
	for _, p := range pairs {
		if len(comp[p[0]]) < clusterComp && len(comp[p[1]]) < clusterComp {
			comp[p[0]] = append(comp[p[0]], p[1])
			comp[p[1]] = append(comp[p[1]], p[0])
		}
	}
	for s := range comp {
		if len(comp[s]) == 0 {
			t.Fatalf("subcategory %d has no complement", s)
		}
	}
	pool := make([][]int32, clusterSubcats)
	for x, s := range sub {
		for c := range comp {
			if slices.Contains(comp[c], s) {
				pool[c] = append(pool[c], int32(x))
			}
		}
	}

	// Latents and features.
	r = rng(3)
	gauss := func(k int) []float64 {
		v := make([]float64, k)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		return v
	}
	centre := make([][]float64, clusterSubcats)
	for s := range centre {
		centre[s] = gauss(d)
	}
	cw := &clusterWorld{pool: pool, comp: comp, z: make([][]float64, n), target: make([][]float64, n), u: make([][]float64, n)}
	for x := range n {
		cw.z[x] = gauss(d)
		u := make([]float64, 0, 3*d)
		for _, v := range centre[sub[x]] {
			u = append(u, beta*v)
		}
		u = append(u, cw.z[x]...)
		cw.u[x] = append(u, gauss(d)...)
	}
	a := gauss(synthDim * 3 * d)
	feat := &synthFeat{dim: synthDim, data: make([]float32, n*synthDim)}
	r = rng(4)
	for x, u := range cw.u {
		row := feat.data[x*synthDim : (x+1)*synthDim]
		for j := range row {
			v := r.NormFloat64()
			for i, ui := range u {
				v += a[j*3*d+i] * ui
			}
			row[j] = float32(v)
		}
	}
	cw.s = &synthTop{feat: feat, sub: sub}

	// Notions: rotations T_k, gate G.
	r = rng(5)
	rot := make([][]float64, clusterNotions)
	for k := range rot {
		rot[k] = randomRotation(r, d)
	}
	gate := make([][]float64, clusterNotions)
	for k := range gate {
		gate[k] = gauss(d)
	}
	for x, z := range cw.z {
		best, bestV := 0, math.Inf(-1)
		for k, g := range gate {
			var v float64
			for i := range z {
				v += g[i] * z[i]
			}
			if v > bestV {
				best, bestV = k, v
			}
		}
		cw.target[x] = make([]float64, d)
		for i := range d {
			for j, v := range z {
				cw.target[x][i] += rot[best][i*d+j] * v
			}
		}
	}

	// Edges, negatives, split.
	r = rng(6)
	draw := func(x int) (int32, bool) {
		p := pool[sub[x]]
		return p[r.IntN(len(p))], true
	}
	pos := plantNearest(n, clusterDeg, clusterCand, draw, func(x int, y int32) float64 { return sqDist(cw.target[x], cw.z[y]) })
	neg, _, err := graph.Rewire(context.Background(), pos, sub, rng(7), graph.RewireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cw.train, cw.valid, cw.test = splitParts(pos, neg, rng(8))
	return cw
}

// TestPlantedCoverageClusters is the paper's "limited coverage" claim
// (section V, Figure 6) where its premise holds: in clusterWorld the
// subcategories are clusters in feature space and also_bought crosses them
// by an item-level compatibility. Every item is a query; top-10 lists;
// "filtered" leaves out the query's own subcategory, the taxonomy filter
// LMT needs at test time (Retriever.TopKExcept). LMT and Monomer at the
// planted tests' λ and budget (synthLambda, synthItersAB iterations,
// patience 6), the world and train seeds both s:
//
//	β    s  nn same  truth  LMT err  LMT same  LMT filt cov/Gini  Mono err  Mono cross  Mono cov/Gini  Mono filt cov/Gini
//	0    1  0.111    0.956  0.379    0.112     0.992 / 0.298      0.186     0.889       0.822 / 0.670  0.822 / 0.668
//	0    2  0.110    0.911  0.385    0.111     0.985 / 0.369      0.186     0.889       0.776 / 0.689  0.775 / 0.689
//	0    3  0.113    0.878  0.394    0.111     0.984 / 0.353      0.204     0.887       0.736 / 0.712  0.742 / 0.710
//	0.75 1  0.757    0.956  0.206    0.970     0.682 / 0.755      0.121     0.865       0.818 / 0.639  0.847 / 0.623
//	0.75 2  0.671    0.911  0.274    0.996     0.587 / 0.801      0.146     0.979       0.790 / 0.687  0.771 / 0.697
//	0.75 3  0.783    0.878  0.291    0.998     0.569 / 0.830      0.152     0.640       0.720 / 0.697  0.786 / 0.689
//	0.75 4  0.745    0.965  0.240    0.998     0.512 / 0.846      0.133     0.846       0.871 / 0.620  0.878 / 0.607
//	0.75 5  0.734    0.927  0.273    0.942     0.571 / 0.781      0.139     0.991       0.728 / 0.733  0.728 / 0.731
//	1.5  1  0.996    0.956  0.202    0.999     0.604 / 0.785      0.111     0.967       0.811 / 0.656  0.815 / 0.652
//	1.5  2  0.981    0.911  0.242    1.000     0.465 / 0.858      0.128     0.941       0.758 / 0.690  0.769 / 0.681
//	1.5  3  0.997    0.878  0.273    1.000     0.519 / 0.843      0.142     0.701       0.613 / 0.756  0.691 / 0.737
//	1.5  4  0.997    0.965  0.215    1.000     0.413 / 0.880      0.121     0.595       0.786 / 0.645  0.900 / 0.583
//	1.5  5  0.989    0.927  0.257    0.987     0.514 / 0.811      0.135     1.000       0.708 / 0.741  0.708 / 0.741
//	3    1  1.000    0.956  0.196    1.000     0.558 / 0.784      0.116     0.948       0.742 / 0.705  0.744 / 0.700
//	3    2  1.000    0.911  0.225    1.000     0.406 / 0.869      0.131     0.940       0.705 / 0.704  0.727 / 0.689
//	3    3  1.000    0.878  0.270    1.000     0.519 / 0.829      0.143     0.549       0.459 / 0.836  0.482 / 0.831
//	3    4  1.000    0.965  0.211    1.000     0.424 / 0.867      0.125     0.780       0.707 / 0.715  0.734 / 0.704
//	3    5  1.000    0.927  0.251    0.996     0.497 / 0.805      0.134     1.000       0.535 / 0.814  0.535 / 0.814
//	6    1  1.000    0.956  0.197    1.000     0.529 / 0.798      0.133     0.958       0.198 / 0.945  0.202 / 0.945
//	6    2  1.000    0.911  0.217    1.000     0.350 / 0.877      0.154     0.940       0.295 / 0.904  0.295 / 0.905
//	6    3  1.000    0.878  0.266    1.000     0.491 / 0.831      0.159     0.588       0.040 / 0.984  0.049 / 0.981
//	6    4  1.000    0.965  0.207    1.000     0.343 / 0.883      0.159     0.570       0.057 / 0.979  0.063 / 0.975
//	6    5  1.000    0.927  0.251    1.000     0.314 / 0.901      0.145     1.000       0.058 / 0.975  0.058 / 0.975
//
// nn same: share of the 10 nearest noise-free features [β m_s; z; n] in the
// item's subcategory (the premise); truth: coverage of the planted
// relation's own lists (latents nearest T_k(x) z_x among the complements);
// LMT same: share of LMT's unfiltered lists in the query's subcategory
// (Figure 6's clusters); Mono cross: share of Monomer's unfiltered lists
// outside it.
//
// What the figures say. The premise does to LMT what the paper says: from
// β = 0.75, where a quarter to a third of the nearest features lie in other
// subcategories, LMT's own lists are 94-100 % same-subcategory, and once
// filtered they cover 0.31-0.68 of the items against the truth's
// 0.878-0.965. Monomer's lists, unfiltered or filtered, cover more than
// LMT's filtered ones at every seed for β = 0.75 and 1.5, and at 4 of 5
// for β = 3 (not seed 3), with a lower Gini except at β = 3, seed 5. But
// not always: with no clusters (β = 0) LMT's lists cover 0.98-0.99, and
// with very tight ones (β = 6) Monomer's lists collapse onto a few hub
// items (coverage 0.04-0.30, Gini 0.90-0.98) although its test error stays
// well below LMT's. Up to 800 iterations, with the default gate or the
// gated setting (GatePenalty 0.1, GateInit 1), leave that so at seeds 1
// and 3 (filtered coverage 0.209 and 0.218; 0.049 and 0.065). Asserted
// below at β = 0.75, seed 1; the other rows were measured once with this
// test at those settings (docs/notes/2026-11-23-recommendations-report.md
// has them too). Figures with OpenBLAS;
// pure-Go gemm gives seed 1's within 0.006 at β = 0.75 and 0.04 at β = 6.
func TestPlantedCoverageClusters(t *testing.T) {
	if testing.Short() {
		t.Skip("plants a world of 6,000 items and trains LMT and Monomer on it")
	}
	tests := []struct {
		beta  float64
		claim bool // assert the paper's claim
	}{
		{beta: 0.75, claim: true},
	}
	for _, tc := range tests {
		w := newClusterWorld(t, synthSeed, tc.beta)
		s := w.s
		n := s.feat.Rows()
		all := make([]int32, n)
		for i := range all {
			all[i] = int32(i)
		}
		sameSub := func(x, y int32) bool { return s.sub[x] == s.sub[y] }
		complement := func(x, y int32) bool { return slices.Contains(w.comp[s.sub[x]], s.sub[y]) }
		nn := statsOf(s.sub, all, rankedLists(n, all, 10, func(x, y int32) bool { return true }, func(x, y int32) float64 { return sqDist(w.u[x], w.u[y]) }))
		truth := statsOf(s.sub, all, rankedLists(n, all, 10, complement, func(x, y int32) float64 { return sqDist(w.target[x], w.z[y]) }))
		t.Logf("β %g: %d/%d/%d pairs; nearest features %.3f same-subcategory; the planted relation's lists cover %.3f (Gini %.3f)",
			tc.beta, len(w.train), len(w.valid), len(w.test), 1-nn.cross, truth.coverage, truth.gini)
		labels := pairLabels(w.test)
		errs := map[string]float64{}
		stats := map[string][2]listStats{} // unfiltered, filtered
		for _, spec := range []models.Spec{
			{Model: models.ModelLMT, K: (synthN + 1) * synthKMono},
			{Model: models.ModelMonomer, K: synthKMono, N: synthN},
		} {
			spec.Lambdas, spec.MaxIter, spec.Patience = []float64{synthLambda}, synthItersAB, 6
			f, err := models.Train(t.Context(), s.feat, w.train, w.valid, spec, rand.New(rand.NewPCG(synthSeed, 2)), nil)
			if err != nil {
				t.Fatal(err)
			}
			_, prob, err := f.Score(s.feat, w.test)
			if err != nil {
				t.Fatal(err)
			}
			errs[spec.Model] = models.ErrorRate(labels, prob)
			st := [2]listStats{
				statsOf(s.sub, all, topKLists(t, s, f, all, 10, nil)),
				statsOf(s.sub, all, topKLists(t, s, f, all, 10, sameSub)),
			}
			stats[spec.Model] = st
			t.Logf("β %g: %s: test error %.3f; top-10 cross-subcategory %.3f, coverage %.3f (Gini %.3f); own subcategory filtered: coverage %.3f (Gini %.3f)",
				tc.beta, spec.Model, errs[spec.Model], st[0].cross, st[0].coverage, st[0].gini, st[1].coverage, st[1].gini)
		}
		if !tc.claim {
			continue
		}
		lmt, mono := stats[models.ModelLMT], stats[models.ModelMonomer]
		if same := 1 - lmt[0].cross; same < 0.9 {
			t.Errorf("β %g: premise: LMT's lists are %.3f same-subcategory, want >= 0.9 (Figure 6's clusters)", tc.beta, same)
		}
		if lm, mo := errs[models.ModelLMT], errs[models.ModelMonomer]; !(mo < lm) {
			t.Errorf("β %g: test error: Monomer %.3f, LMT %.3f: want Monomer lower", tc.beta, mo, lm)
		}
		if !(mono[0].cross > lmt[0].cross) {
			t.Errorf("β %g: Monomer's lists cross subcategories %.3f of the time, LMT's %.3f: want Monomer higher", tc.beta, mono[0].cross, lmt[0].cross)
		}
		for i, name := range []string{"unfiltered", "filtered"} {
			if m, l := mono[i], lmt[1]; !(m.coverage > l.coverage && m.gini < l.gini) {
				t.Errorf("β %g: Monomer's %s lists cover %.3f (Gini %.3f), LMT's filtered %.3f (Gini %.3f): want Monomer's wider and more even",
					tc.beta, name, m.coverage, m.gini, l.coverage, l.gini)
			}
		}
	}
}

package models_test

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"monomer/models"
	"monomer/synth"
)

// recStats are the claims of the paper's section V on one model's lists.
type recStats struct {
	cross    float64 // share of recommended items outside the query's subcategory
	coverage float64 // share of items in anyone's list
}

func recommendStats(t *testing.T, s *synthTop, f *models.Fit, queries []int32, k int) (recStats, [][]models.Hit) {
	t.Helper()
	n := s.feat.Rows()
	cand := make([]int32, n)
	for i := range cand {
		cand[i] = int32(i)
	}
	r, err := models.NewRetriever(f, s.feat, cand)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := r.TopK(queries, k, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int32]bool{}
	var cross, total int
	for qi, q := range queries {
		for _, h := range lists[qi] {
			seen[h.Item] = true
			if s.sub[h.Item] != s.sub[q] {
				cross++
			}
			total++
		}
	}
	return recStats{cross: float64(cross) / float64(total), coverage: float64(len(seen)) / float64(n)}, lists
}

// plantedStats are the statistics of the top-k lists the planted relation
// of graph g itself gives: each query's items ranked by the latent distance
// ‖z_y − target(x)‖² (synth eqs. 6 and 7) over every other item of the top,
// without the candidate sampling and edge noise of the planted edges.
func plantedStats(s *synthTop, g string, queries []int32, k int) recStats {
	n := s.feat.Rows()
	local := make([]int, n) // local item -> World.Items index
	for wi, li := range s.index {
		if li >= 0 {
			local[li] = wi
		}
	}
	type scored struct {
		item int32
		d    float64
	}
	seen := map[int32]bool{}
	var cross, total int
	var target []float64
	all := make([]scored, 0, n)
	for _, q := range queries {
		target = s.w.Target(g, local[q], target)
		all = all[:0]
		for y := range n {
			if int32(y) == q {
				continue
			}
			var d float64
			for j, v := range s.w.Latent(local[y]) {
				e := float64(v) - target[j]
				d += e * e
			}
			all = append(all, scored{int32(y), d})
		}
		slices.SortFunc(all, func(a, b scored) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.item, b.item)) })
		for _, h := range all[:k] {
			seen[h.item] = true
			if s.sub[h.item] != s.sub[q] {
				cross++
			}
			total++
		}
	}
	return recStats{cross: float64(cross) / float64(total), coverage: float64(len(seen)) / float64(n)}
}

// TestPlantedRecommendations is the paper's qualitative claim (section V,
// Figure 6) on synth's planted world, where every also_bought edge crosses
// subcategories and each query's notion k(x) (synth eq. 3) picks the
// transform that links it. Asserted, seed 1: Monomer's top-10 cross
// subcategories more often than LMT's (0.839 against 0.781), and Monomer's
// catalogue coverage is nearer that of the planted relation's own lists
// than LMT's is.
//
// The paper's "Monomer covers more" does not hold here, and should not: the
// top-10 by the planted relation itself (latents nearest T_k z_x + c_k)
// cover 0.454 of the items, a metric one (latents nearest z_x) 0.531;
// Monomer covers 0.444, LMT 0.539. The notions' cones and offsets aim the
// planted edges at fewer items than nearest neighbours reach.
//
// Logged, not asserted: the space column does not follow the planted
// notion (0.611 of the recommendations agree when each notion is mapped
// to its most frequent space, shuffled notions 0.606), because the trained
// gate does not: for every notion its mean P(k|x) is 0.42-0.54 on the same
// two spaces, under 0.05 on the others. The notion is recoverable (a
// logistic regression on the features: 0.81 held out) and a notion gate is
// a better fit (test error 0.221 against 0.243), but λ‖U‖² at the
// embeddings' λ prices it above its gain and the symmetric near-uniform
// start does not reach it; BENCHMARKS.md, "Recommendations and the visual
// report", has the measurements. Retrieval itself is exact
// (TestTopKMatchesBruteForce).
func TestPlantedRecommendations(t *testing.T) {
	if testing.Short() {
		t.Skip("trains LMT and Monomer on 6,000 items")
	}
	s := newPlantedSynth(t, synthSeed)
	train, valid, _ := s.pairs(t, synth.AlsoBought, rand.New(rand.NewPCG(synthSeed, 1)))
	fits := map[string]*models.Fit{}
	for _, spec := range []models.Spec{
		{Model: models.ModelLMT, K: (synthN + 1) * synthKMono},
		{Model: models.ModelMonomer, K: synthKMono, N: synthN},
	} {
		spec.Lambdas, spec.MaxIter = []float64{synthLambda}, synthItersAB
		f, err := models.Train(t.Context(), s.feat, train, valid, spec, rand.New(rand.NewPCG(synthSeed, 2)), nil)
		if err != nil {
			t.Fatal(err)
		}
		fits[spec.Model] = f
	}
	n := s.feat.Rows()
	rng := rand.New(rand.NewPCG(9, 9))
	queries := make([]int32, 500)
	for i, p := range rng.Perm(n)[:len(queries)] {
		queries[i] = int32(p)
	}
	slices.Sort(queries)
	lmt, _ := recommendStats(t, s, fits[models.ModelLMT], queries, 10)
	mono, lists := recommendStats(t, s, fits[models.ModelMonomer], queries, 10)
	t.Logf("cross-subcategory share: LMT %.3f, Monomer %.3f; coverage: LMT %.3f, Monomer %.3f", lmt.cross, mono.cross, lmt.coverage, mono.coverage)
	if !(mono.cross > lmt.cross) {
		t.Errorf("Monomer's lists cross subcategories %.3f of the time, LMT's %.3f: want Monomer higher", mono.cross, lmt.cross)
	}
	// Coverage against the lists the planted relations themselves give.
	truth, metric := plantedStats(s, synth.AlsoBought, queries, 10), plantedStats(s, synth.AlsoViewed, queries, 10)
	t.Logf("planted also_bought relation: cross %.3f, coverage %.3f; nearest latents (also_viewed): cross %.3f, coverage %.3f", truth.cross, truth.coverage, metric.cross, metric.coverage)
	if dm, dl := math.Abs(mono.coverage-truth.coverage), math.Abs(lmt.coverage-truth.coverage); !(dm < dl) {
		t.Errorf("coverage: Monomer %.3f, LMT %.3f, the planted relation %.3f: want Monomer's nearer", mono.coverage, lmt.coverage, truth.coverage)
	}

	// Space against the query's planted notion. Spaces are learned up to
	// a permutation, so score the best one-to-one-free mapping (each
	// notion to its most frequent space) and compare with the same
	// score after shuffling the notions among the queries.
	local := make([]int, n) // local item -> World.Items index
	for wi, li := range s.index {
		if li >= 0 {
			local[li] = wi
		}
	}
	notion := make([]int, len(queries))
	for qi, q := range queries {
		notion[qi] = s.w.Items[local[q]].Notion
	}
	agree := func(notion []int) float64 {
		counts := map[[2]int]int{}
		for qi := range queries {
			for _, h := range lists[qi] {
				counts[[2]int{notion[qi], h.Space}]++
			}
		}
		best := map[int]int{}
		for key, c := range counts {
			best[key[0]] = max(best[key[0]], c)
		}
		var sum, total int
		for _, c := range best {
			sum += c
		}
		for _, c := range counts {
			total += c
		}
		return float64(sum) / float64(total)
	}
	real := agree(notion)
	var chance float64
	const shuffles = 20
	for range shuffles {
		sh := slices.Clone(notion)
		rng.Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
		chance = max(chance, agree(sh))
	}
	t.Logf("space follows the planted notion for %.3f of the recommendations; shuffled notions at most %.3f", real, chance)

	items := make([]int32, n)
	for i := range items {
		items[i] = int32(i)
	}
	proj, err := fits[models.ModelMonomer].Project(s.feat, items)
	if err != nil {
		t.Fatal(err)
	}
	meanP := make([][]float64, synthN)
	count := make([]int, synthN)
	for i := range meanP {
		meanP[i] = make([]float64, synthN)
	}
	for i := range n {
		k := s.w.Items[local[i]].Notion
		count[k]++
		for j, p := range proj.Gate(i) {
			meanP[k][j] += p
		}
	}
	for k, ps := range meanP {
		for j := range ps {
			ps[j] /= float64(max(count[k], 1))
		}
		t.Logf("notion %d (%d items): mean P(k|x) %.3f", k, count[k], ps)
	}
}

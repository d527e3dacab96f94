package models_test

import (
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

// TestPlantedRecommendations is the paper's qualitative claim (section V,
// Figure 6) on synth's planted world, where every also_bought edge crosses
// subcategories and each query's notion k(x) (synth eq. 3) picks the
// transform that links it: Monomer's top-10 cross subcategories more often
// than LMT's (asserted: 0.833 against 0.779 at seed 1).
//
// Two further claims do NOT hold on this data, and are logged, not
// asserted: Monomer's lists cover less of the catalogue than LMT's (0.439
// against 0.533), and the space column cannot follow the planted notion
// because the trained gate collapses onto one space (mean P(k|x) ≈ 0.87 on
// one space for every notion), so one space wins for 99.8 % of the
// recommendations, shuffled notions or not. Both are findings about the
// trained Monomer, not about retrieval, which TestTopKMatchesBruteForce
// checks exactly.
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
}

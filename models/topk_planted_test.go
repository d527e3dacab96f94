package models_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"monomer/models"
	"monomer/synth"
)

// recommendStats are the section V statistics of f's top-k lists over
// every item of s, with the lists.
func recommendStats(t *testing.T, s *synthTop, f *models.Fit, queries []int32, k int) (listStats, [][]models.Hit) {
	t.Helper()
	lists := topKLists(t, s, f, queries, k, nil)
	return statsOf(s.sub, queries, lists), lists
}

// topKLists are f's top-k lists over every item of s, without the items
// skip names (Retriever.TopKExcept).
func topKLists(t *testing.T, s *synthTop, f *models.Fit, queries []int32, k int, skip func(x, y int32) bool) [][]models.Hit {
	t.Helper()
	cand := make([]int32, s.feat.Rows())
	for i := range cand {
		cand[i] = int32(i)
	}
	r, err := models.NewRetriever(f, s.feat, cand)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := r.TopKExcept(queries, k, 0, skip)
	if err != nil {
		t.Fatal(err)
	}
	return lists
}

// listStats are the section V statistics of top-k lists.
type listStats struct {
	coverage float64 // share of items in anyone's list
	gini     float64 // models.Gini of how often each item is listed
	cross    float64 // share of listed items outside the query's subcategory
}

// statsOf are the statistics of lists, one per query, over the items of sub
// (each item's subcategory).
func statsOf(sub []int32, queries []int32, lists [][]models.Hit) listStats {
	count := make([]float64, len(sub))
	var cross, total int
	for qi, q := range queries {
		for _, h := range lists[qi] {
			count[h.Item]++
			if sub[h.Item] != sub[q] {
				cross++
			}
			total++
		}
	}
	covered := 0
	for _, c := range count {
		if c > 0 {
			covered++
		}
	}
	return listStats{coverage: float64(covered) / float64(len(sub)), gini: models.Gini(count), cross: float64(cross) / float64(total)}
}

// rankedLists are each query's k items with the smallest dist among those
// keep allows (the query itself left out), ties to the lower item.
func rankedLists(n int, queries []int32, k int, keep func(x, y int32) bool, dist func(x, y int32) float64) [][]models.Hit {
	out := make([][]models.Hit, len(queries))
	for qi, q := range queries {
		l := make([]models.Hit, 0, k+1)
		for y := range int32(n) {
			if y == q || !keep(q, y) {
				continue
			}
			d := dist(q, y)
			if len(l) == k && d >= l[k-1].Dist {
				continue
			}
			i := len(l) // after every item at least as near
			for i > 0 && l[i-1].Dist > d {
				i--
			}
			l = slices.Insert(l, i, models.Hit{Item: y, Dist: d})
			if len(l) > k {
				l = l[:k]
			}
		}
		out[qi] = l
	}
	return out
}

// plantedStats are the statistics of the top-k lists the planted relation
// of graph g itself gives: each query's items ranked by the latent distance
// ‖z_y − target(x)‖² (synth eqs. 6 and 7) over every other item of the top,
// without the candidate sampling and edge noise of the planted edges.
func plantedStats(s *synthTop, g string, queries []int32, k int) listStats {
	local := localToWorld(s)
	z := make([][]float64, len(local))
	for i, wi := range local {
		for _, v := range s.w.Latent(wi) {
			z[i] = append(z[i], float64(v))
		}
	}
	target := make(map[int32][]float64, len(queries))
	for _, q := range queries {
		target[q] = s.w.Target(g, local[q], nil)
	}
	all := func(x, y int32) bool { return true }
	dist := func(x, y int32) float64 { return sqDist(target[x], z[y]) }
	return statsOf(s.sub, queries, rankedLists(len(local), queries, k, all, dist))
}

// TestPlantedRecommendations is the paper's qualitative claim (section V,
// Figure 6) on synth's planted world, where every also_bought edge crosses
// subcategories and each query's notion k(x) (synth eq. 3) picks the
// transform that links it. Asserted, seed 1: Monomer's top-10 cross
// subcategories more often than LMT's (0.838 against 0.781), and Monomer's
// catalogue coverage is nearer that of the planted relation's own lists
// than LMT's is.
//
// The paper's "Monomer covers more" does not hold here, and should not: the
// top-10 by the planted relation itself (latents nearest T_k z_x + c_k)
// cover 0.454 of the items, a metric one (latents nearest z_x) 0.531;
// Monomer covers 0.439, LMT 0.539. The notions' cones and offsets aim the
// planted edges at fewer items than nearest neighbours reach.
// TestPlantedCoverageSpread tries the claim where the truth is spread,
// TestPlantedCoverageClusters where subcategories are feature clusters.
//
// The space column against the planted notion, scored as the share of
// recommendations whose space is their query's notion under the best
// one-to-one relabelling of spaces, beside the same score with the notions
// shuffled among the queries (the largest of 20 shuffles). With the default
// gate (Spec.GatePenalty 1, GateInit 0.01) the match is narrowly above
// chance at seed 1, clearly at seeds 2-3: 0.382, 0.422, 0.571 against shuffles at
// 0.349 ± 0.008, 0.328 ± 0.010, 0.350 ± 0.013 (z 4.3, 9.7, 17.4) at seeds
// 1-3, and at chance at seeds 4-5 (z 1.3, 0.6), where the gate collapsed
// onto one space: λ‖U‖² at the embeddings' λ prices a sharp gate out and
// the near-uniform start keeps the spaces alike. Asserted at this seed:
// at least defaultSpaceZ shuffle sds above the shuffles' mean. With U's
// penalty at λ/10 and an O(1) random start (GatePenalty 0.1, GateInit 1,
// the job's gate_penalty and gate_init) it clears chance by far more, by
// the margin asserted below at this seed; at other seeds it does not
// always (docs/notes/2026-11-23-recommendations-report.md has seeds 1-5
// and why this is not the default).
// Retrieval itself is exact (TestTopKMatchesBruteForce).
func TestPlantedRecommendations(t *testing.T) {
	if testing.Short() {
		t.Skip("trains LMT and two Monomers on 6,000 items")
	}
	const gated = "monomer-gated"
	s := newPlantedSynth(t, synthSeed)
	train, valid, _ := s.pairs(t, synth.AlsoBought, rand.New(rand.NewPCG(synthSeed, 1)))
	fits := map[string]*models.Fit{}
	for name, spec := range map[string]models.Spec{
		models.ModelLMT:     {Model: models.ModelLMT, K: (synthN + 1) * synthKMono},
		models.ModelMonomer: {Model: models.ModelMonomer, K: synthKMono, N: synthN},
		gated:               {Model: models.ModelMonomer, K: synthKMono, N: synthN, GatePenalty: 0.1, GateInit: 1},
	} {
		spec.Lambdas, spec.MaxIter = []float64{synthLambda}, synthItersAB
		f, err := models.Train(t.Context(), s.feat, train, valid, spec, rand.New(rand.NewPCG(synthSeed, 2)), nil)
		if err != nil {
			t.Fatal(err)
		}
		fits[name] = f
	}
	n := s.feat.Rows()
	rng := rand.New(rand.NewPCG(9, 9))
	queries := make([]int32, 500)
	for i, p := range rng.Perm(n)[:len(queries)] {
		queries[i] = int32(p)
	}
	slices.Sort(queries)
	lmt, _ := recommendStats(t, s, fits[models.ModelLMT], queries, 10)
	mono, _ := recommendStats(t, s, fits[models.ModelMonomer], queries, 10)
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

	// Space against the query's planted notion.
	local := localToWorld(s)
	notionAll := make([]int, n)
	for i := range n {
		notionAll[i] = s.w.Items[local[i]].Notion
	}
	notion := make([]int, len(queries))
	for qi, q := range queries {
		notion[qi] = notionAll[q]
	}
	items := make([]int32, n)
	for i := range items {
		items[i] = int32(i)
	}
	match := map[string][4]float64{} // real, largest, mean and sd of the shuffled
	for _, name := range []string{models.ModelMonomer, gated} {
		f := fits[name]
		st, lists := recommendStats(t, s, f, queries, 10)
		real := spaceMatch(notion, lists, synthN)
		hi, mean, sd := shuffledMatch(notion, lists, synthN, rand.New(rand.NewPCG(9, 10)), 20)
		match[name] = [4]float64{real, hi, mean, sd}
		proj, err := f.Project(s.feat, items)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: space is the query's notion for %.3f of the recommendations; shuffled notions at most %.3f (mean %.3f, sd %.4f); gate argmax is the notion for %.3f of the items; cross %.3f, coverage %.3f, validation error %.3f",
			name, real, hi, mean, sd, gateAgreement(proj, notionAll, synthN), st.cross, st.coverage, f.ValidError)
		meanP := make([][]float64, synthN)
		count := make([]int, synthN)
		for i := range meanP {
			meanP[i] = make([]float64, synthN)
		}
		for i, k := range notionAll {
			count[k]++
			for j, p := range proj.Gate(i) {
				meanP[k][j] += p
			}
		}
		for k, ps := range meanP {
			for j := range ps {
				ps[j] /= float64(max(count[k], 1))
			}
			t.Logf("%s: notion %d (%d items): mean P(k|x) %.3f", name, k, count[k], ps)
		}
	}
	if m := match[models.ModelMonomer]; !(m[0] > m[2]+defaultSpaceZ*m[3]) {
		t.Errorf("default gate: the space is the query's notion for %.3f of the recommendations, shuffled notions %.3f ± %.4f: want at least %g sds above", m[0], m[2], m[3], defaultSpaceZ)
	}
	if m := match[gated]; !(m[0] > m[1]+gatedSpaceMargin) {
		t.Errorf("gate_penalty 0.1, gate_init 1: the space is the query's notion for %.3f of the recommendations, shuffled notions %.3f: want at least %.2f more", m[0], m[1], gatedSpaceMargin)
	}
}

// gatedSpaceMargin is how far the gated Monomer's space match must clear
// the shuffled notions' at seed 1. Measured there (300 iterations): the 20
// shuffles score 0.346 ± 0.009 (largest 0.368); the gated fit 0.580, the
// default one 0.383. At the pipeline's budget (200 iterations, patience 6)
// the gated fit cleared the largest shuffle by 0.17, 0.13 and 0.31 at
// seeds 1-3 and by −0.02 and 0.01 at seeds 4-5, where its gate collapsed
// onto one space: a margin for this seed, about 11 shuffle sds.
const gatedSpaceMargin = 0.10

// defaultSpaceZ is how many shuffle sds the default Monomer's space match
// must clear the shuffles' mean by at seed 1, where it measured 4.3.
const defaultSpaceZ = 3.0

// localToWorld maps each item of s to its World.Items index.
func localToWorld(s *synthTop) []int {
	local := make([]int, s.feat.Rows())
	for wi, li := range s.index {
		if li >= 0 {
			local[li] = wi
		}
	}
	return local
}

// gateAgreement is the share of items whose gate argmax is their notion,
// under the best one-to-one relabelling of the n spaces.
func gateAgreement(proj *models.Projection, notion []int, n int) float64 {
	conf := make([][]int, n) // conf[notion][argmax]
	for i := range conf {
		conf[i] = make([]int, n)
	}
	for i, k := range notion {
		conf[k][argmax(proj.Gate(i))]++
	}
	return float64(bestMatch(conf)) / float64(len(notion))
}

// spaceMatch is the share of recommendations whose space is their query's
// notion under the best one-to-one relabelling of the n spaces.
func spaceMatch(notion []int, lists [][]models.Hit, n int) float64 {
	conf := make([][]int, n)
	for i := range conf {
		conf[i] = make([]int, n)
	}
	var total int
	for qi, l := range lists {
		for _, h := range l {
			conf[notion[qi]][h.Space-1]++ // Space is 1-based
			total++
		}
	}
	return float64(bestMatch(conf)) / float64(total)
}

// shuffledMatch is spaceMatch with the notions shuffled among the queries,
// over shuffles draws: its largest value, mean and standard deviation.
func shuffledMatch(notion []int, lists [][]models.Hit, n int, rng *rand.Rand, shuffles int) (hi, mean, sd float64) {
	var sum, sq float64
	for range shuffles {
		sh := slices.Clone(notion)
		rng.Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
		a := spaceMatch(sh, lists, n)
		hi = max(hi, a)
		sum += a
		sq += a * a
	}
	mean = sum / float64(shuffles)
	return hi, mean, math.Sqrt(max(sq/float64(shuffles)-mean*mean, 0))
}

// bestMatch is the largest Σ_k conf[k][π(k)] over permutations π.
func bestMatch(conf [][]int) int {
	n := len(conf)
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	best := 0
	var walk func(int)
	walk = func(d int) {
		if d == n {
			s := 0
			for k, j := range perm {
				s += conf[k][j]
			}
			best = max(best, s)
			return
		}
		for i := d; i < n; i++ {
			perm[d], perm[i] = perm[i], perm[d]
			walk(d + 1)
			perm[d], perm[i] = perm[i], perm[d]
		}
	}
	walk(0)
	return best
}

func argmax(v []float64) int {
	b := 0
	for i, x := range v {
		if x > v[b] {
			b = i
		}
	}
	return b
}

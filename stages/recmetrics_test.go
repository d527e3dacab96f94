package stages

import (
	"math"
	"testing"

	"monomer/models"
)

// hits turns item numbers into a ranked list, nearest first.
func hits(items ...int32) []models.Hit {
	out := make([]models.Hit, len(items))
	for i, it := range items {
		out[i] = models.Hit{Item: it, Dist: float64(i)}
	}
	return out
}

// TestScoreHeldOut: hit rate and recall@k on lists worked out by hand.
func TestScoreHeldOut(t *testing.T) {
	queries := []int32{1, 2, 3}
	lists := [][]models.Hit{
		hits(5, 7, 9, 3, 8), // 7 is known (trained on), so skipped
		hits(4, 6, 2, 1),
		hits(11, 12, 13),
	}
	known := map[int32][]int32{1: {7}}
	// Query 1's pair (1, 9) is listed twice in the test split: it counts once.
	test := map[int32][]int32{1: {3, 9, 9}, 2: {1}, 3: {13}}
	l2 := func(r float64) float64 { return 1 / math.Log2(r+1) } // the discount at rank r
	// q1's two positives at ranks 2 and 3 of its top 3 or 4; its best
	// DCG puts them at ranks 1 and 2.
	q1 := (l2(2) + l2(3)) / (l2(1) + l2(2))
	for _, tc := range []struct {
		k                   int
		hit, recall, nd, rr float64
	}{
		// Top 3 without known items: q1 5 9 3 (2 of {3, 9}), q2 4 6 2
		// (none of {1}), q3 11 12 13 (13, at rank k exactly).
		// NDCG: q3's one positive at rank 3 of 1 possible; MRR 1/2, 0, 1/3.
		{k: 3, hit: 2.0 / 3, recall: (1 + 0 + 1) / 3.0, nd: (q1 + 0 + l2(3)) / 3, rr: (0.5 + 0 + 1.0/3) / 3},
		// Top 2: q1 5 9 (1 of 2), q2 4 6, q3 11 12.
		{k: 2, hit: 1.0 / 3, recall: (0.5 + 0 + 0) / 3, nd: l2(2) / (l2(1) + l2(2)) / 3, rr: 0.5 / 3},
		// Top 1: 5, 4, 11: no hit.
		{k: 1, hit: 0, recall: 0},
		// Top 4: q1 5 9 3 8, q2 4 6 2 1, q3 (all three).
		// q2's positive at rank 4: NDCG l2(4), reciprocal rank 1/4.
		{k: 4, hit: 1, recall: 1, nd: (q1 + l2(4) + l2(3)) / 3, rr: (0.5 + 0.25 + 1.0/3) / 3},
	} {
		s := scoreHeldOut(lists, queries, test, known, tc.k)
		if math.Abs(s.HitRate-tc.hit) > 1e-15 || math.Abs(s.Recall-tc.recall) > 1e-15 {
			t.Errorf("k %d: hit rate %v recall %v, want %v %v (the top k counted off by one?)", tc.k, s.HitRate, s.Recall, tc.hit, tc.recall)
		}
		if math.Abs(s.NDCG-tc.nd) > 1e-15 || math.Abs(s.MRR-tc.rr) > 1e-15 {
			t.Errorf("k %d: NDCG %v MRR %v, want %v %v", tc.k, s.NDCG, s.MRR, tc.nd, tc.rr)
		}
	}
	if s := scoreHeldOut(nil, nil, test, known, 3); !math.IsNaN(s.NDCG) || !math.IsNaN(s.MRR) {
		t.Errorf("no queries: %+v, want NaN", s)
	}
}

// TestTopItemShare: the largest share of lists one item is in, ties to
// the lower index, flagged above DominantShare.
func TestTopItemShare(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lists [][]models.Hit
		share float64
		item  int32
	}{
		{name: "one item in 3 of 4", lists: [][]models.Hit{hits(1, 2), hits(3, 1), hits(1), hits(4)}, share: 0.75, item: 1},
		{name: "a tie to the lower index", lists: [][]models.Hit{hits(9, 5), hits(5, 9), hits(7)}, share: 2.0 / 3, item: 5},
		{name: "each once", lists: [][]models.Hit{hits(1), hits(2), hits(3), hits(4), hits(5)}, share: 0.2, item: 1},
	} {
		share, item := topItemShare(tc.lists)
		if share != tc.share || item != tc.item {
			t.Errorf("%s: share %v of item %d, want %v of %d", tc.name, share, item, tc.share, tc.item)
		}
	}
	if share, _ := topItemShare(nil); !math.IsNaN(share) {
		t.Errorf("no lists: share %v, want NaN", share)
	}
}

// TestCoverageHand: the share of candidates recommended and the Gini
// coefficient of how often, on lists worked out by hand. Gini is
// Σᵢ Σⱼ |xᵢ − xⱼ| / (2 n² x̄) over the n candidates' counts x.
func TestCoverageHand(t *testing.T) {
	cand := []int32{10, 11, 12, 13}
	for _, tc := range []struct {
		name        string
		lists       [][]models.Hit
		share, gini float64
	}{
		// Counts 2 1 1 0: |x−y| summed over ordered pairs is 12, x̄ = 1,
		// so 12 / (2·16·1).
		{name: "one item twice", lists: [][]models.Hit{hits(10, 11), hits(10, 12)}, share: 0.75, gini: 12.0 / 32},
		{name: "each once", lists: [][]models.Hit{hits(10, 11), hits(12, 13)}, share: 1, gini: 0},
		// Counts 3 0 0 0: 6 ordered pairs differ by 3, x̄ = 3/4.
		{name: "one item only", lists: [][]models.Hit{hits(10), hits(10), hits(10)}, share: 0.25, gini: 18 / (2 * 16 * 0.75)},
	} {
		share, gini := coverage(tc.lists, cand)
		if math.Abs(share-tc.share) > 1e-15 || math.Abs(gini-tc.gini) > 1e-15 {
			t.Errorf("%s: coverage %v Gini %v, want %v %v", tc.name, share, gini, tc.share, tc.gini)
		}
	}
}

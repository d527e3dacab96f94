package stages

import (
	"math"
	"slices"

	"monomer/graph"
	"monomer/models"
)

// heldOutScores are the ranking metrics of lists over the query items
// with held-out test positives (binary relevance, each distinct test
// positive once):
//
//   - HitRate: the share of queries with a test positive in the top k;
//   - Recall: the mean share of a query's test positives in its top k;
//   - NDCG: the mean normalised discounted cumulative gain at k,
//     Σ_{r≤k, item r a positive} 1/log₂(r+1) over its best value,
//     Σ_{r≤min(k, positives)} 1/log₂(r+1);
//   - MRR: the mean reciprocal rank of the first test positive in the top
//     k, 0 for a query without one (MRR@k).
//
// Ranks count only the items a model did not train or validate on. All
// NaN for no queries.
type heldOutScores struct {
	HitRate, Recall, NDCG, MRR float64
}

// heldOutPairs are the test positives by query and the positives a model
// saw (train and validation), over pairs of two candidates.
func heldOutPairs(pairs []graph.Pair, cand []int32) (test, known map[int32][]int32) {
	test, known = map[int32][]int32{}, map[int32][]int32{}
	isCand := make(map[int32]bool, len(cand))
	for _, c := range cand {
		isCand[c] = true
	}
	for _, p := range pairs {
		if !p.Label || !isCand[p.X] || !isCand[p.Y] {
			continue
		}
		if p.Split == graph.Test {
			test[p.X] = append(test[p.X], p.Y)
		} else {
			known[p.X] = append(known[p.X], p.Y)
		}
	}
	return test, known
}

// heldOutExtra is how many more than k items a query's list needs so that
// k remain once its known positives are left out.
func heldOutExtra(queries []int32, known map[int32][]int32) int {
	extra := 0
	for _, q := range queries {
		extra = max(extra, len(known[q]))
	}
	return extra
}

// heldOut scores r's lists for queries (heldOutScores), leaving out of
// each list the candidates skip(x, y) rejects (nil: none) and the known
// positives.
func heldOut(r *models.Retriever, queries []int32, test, known map[int32][]int32, k int, skip func(x, y int32) bool) (heldOutScores, error) {
	if len(queries) == 0 {
		return scoreHeldOut(nil, nil, test, known, k), nil
	}
	lists, err := r.TopKExcept(queries, k+heldOutExtra(queries, known), 0, skip)
	if err != nil {
		return heldOutScores{}, err
	}
	return scoreHeldOut(lists, queries, test, known, k), nil
}

// scoreHeldOut is heldOutScores of lists, query qi's list ranked nearest
// first: the first k items not in known[q] are its top k.
func scoreHeldOut(lists [][]models.Hit, queries []int32, test, known map[int32][]int32, k int) heldOutScores {
	if len(queries) == 0 {
		nan := math.NaN()
		return heldOutScores{nan, nan, nan, nan}
	}
	var hits, rsum, nsum, msum float64
	for qi, q := range queries {
		// Duplicate test pairs count once.
		pos := slices.Clone(test[q])
		slices.Sort(pos)
		pos = slices.Compact(pos)
		found, rank := 0, 0
		var dcg, rr float64
		for _, h := range lists[qi] {
			if slices.Contains(known[q], h.Item) {
				continue
			}
			if rank++; rank > k {
				break
			}
			if _, ok := slices.BinarySearch(pos, h.Item); ok {
				found++
				dcg += 1 / math.Log2(float64(rank)+1)
				if rr == 0 {
					rr = 1 / float64(rank)
				}
			}
		}
		var ideal float64
		for r := 1; r <= min(k, len(pos)); r++ {
			ideal += 1 / math.Log2(float64(r)+1)
		}
		if found > 0 {
			hits++
			nsum += dcg / ideal
		}
		rsum += float64(found) / float64(len(pos))
		msum += rr
	}
	n := float64(len(queries))
	return heldOutScores{HitRate: hits / n, Recall: rsum / n, NDCG: nsum / n, MRR: msum / n}
}

// DominantShare is the share of a model's lists one item may fill before
// the lists are flagged as dominated by it: past a quarter, a list says
// more about that item than about the query (a real shop's run had one
// product in 67 % of Monomer's lists, at 0.6 % coverage; issue 55).
const DominantShare = 0.25

// topItemShare is the largest share of lists one item is in, and the
// item (-1 for no lists).
func topItemShare(lists [][]models.Hit) (share float64, item int32) {
	counts := map[int32]int{}
	item = -1
	best := 0
	for _, l := range lists {
		for _, h := range l {
			counts[h.Item]++
			// The lower index wins a tie, whatever the map's order.
			if c := counts[h.Item]; c > best || (c == best && h.Item < item) {
				best, item = c, h.Item
			}
		}
	}
	if len(lists) == 0 {
		return math.NaN(), -1
	}
	return float64(best) / float64(len(lists)), item
}

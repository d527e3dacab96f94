package models

import (
	"cmp"
	"math"
	"slices"

	"monomer/graph"
)

// PopularityName is the baseline's name where tables list it beside the
// models (not a registered model).
const PopularityName = "popularity"

// TrainDegree is, per item of n, the number of training positives it is an
// end of (either side): the popularity a baseline ranks by.
func TrainDegree(pairs []graph.Pair, n int) []int {
	deg := make([]int, n)
	for _, p := range pairs {
		if p.Label && p.Split == graph.Train {
			deg[p.X]++
			deg[p.Y]++
		}
	}
	return deg
}

// Popularity is the baseline every ranking model has to beat: it
// recommends to every query the same candidates, most trained-on first.
// The recommend stage scores it beside the models, and any other
// evaluation of lists (cold items, issue 53) should take it from here so
// that the baseline is one.
type Popularity struct {
	order  []int32 // candidates by degree descending, then index ascending
	degree []int
}

// NewPopularity ranks cand (item indices) by degree (indexed by item).
func NewPopularity(degree []int, cand []int32) *Popularity {
	order := slices.Clone(cand)
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(degree[b], degree[a]), cmp.Compare(a, b))
	})
	return &Popularity{order: order, degree: degree}
}

// TopK returns, for each query, the first k candidates of the ranking,
// the query itself and the candidates y with skip(x, y) left out (a nil
// skip leaves out only the query). Dist is minus the degree, so lists read
// nearest first as a Retriever's do; Prob is NaN, as the baseline has no
// probability.
func (p *Popularity) TopK(queries []int32, k int, skip func(x, y int32) bool) [][]Hit {
	out := make([][]Hit, len(queries))
	for qi, q := range queries {
		var l []Hit
		for _, c := range p.order {
			if len(l) == k {
				break
			}
			if c == q || (skip != nil && skip(q, c)) {
				continue
			}
			l = append(l, Hit{Item: c, Dist: -float64(p.degree[c]), Prob: math.NaN()})
		}
		out[qi] = l
	}
	return out
}

package models

import (
	"slices"
	"testing"

	"monomer/graph"
)

// TestPopularity: the baseline's degrees and lists on a graph worked out by
// hand. Training positives 0-1, 0-2, 0-3, 1-2, 4-2; item 3 also in a
// validation positive and 4-1 a training negative, neither counted.
func TestPopularity(t *testing.T) {
	tr := func(x, y int32) graph.Pair { return graph.Pair{X: x, Y: y, Label: true, Split: graph.Train} }
	pairs := []graph.Pair{tr(0, 1), tr(0, 2), tr(0, 3), tr(1, 2), tr(4, 2),
		{X: 3, Y: 4, Label: true, Split: graph.Valid}, {X: 4, Y: 1, Split: graph.Train}}
	deg := TrainDegree(pairs, 6)
	if want := []int{3, 2, 3, 1, 1, 0}; !slices.Equal(deg, want) {
		t.Fatalf("degrees %v, want %v", deg, want)
	}
	// Candidates leave out item 1. Ranking: 0 and 2 (3 each, lower index
	// first), then 3 and 4 (1 each), then 5.
	p := NewPopularity(deg, []int32{0, 2, 3, 4, 5})
	odd := func(_, y int32) bool { return y%2 == 1 }
	for _, tc := range []struct {
		name  string
		q     int32
		k     int
		skip  func(x, y int32) bool
		items []int32
	}{
		{name: "top 3", q: 1, k: 3, items: []int32{0, 2, 3}},
		{name: "the query left out", q: 0, k: 3, items: []int32{2, 3, 4}},
		{name: "skip odd items", q: 2, k: 3, skip: odd, items: []int32{0, 4}},
		{name: "k above the candidates", q: 5, k: 9, items: []int32{0, 2, 3, 4}},
	} {
		l := p.TopK([]int32{tc.q}, tc.k, tc.skip)[0]
		var got []int32
		for i, h := range l {
			got = append(got, h.Item)
			if h.Dist != -float64(deg[h.Item]) {
				t.Errorf("%s: rank %d distance %v, want minus its degree %d", tc.name, i+1, h.Dist, deg[h.Item])
			}
		}
		if !slices.Equal(got, tc.items) {
			t.Errorf("%s: list %v, want %v", tc.name, got, tc.items)
		}
	}
}

package graph

import (
	"slices"
	"testing"
)

func TestCrossEdges(t *testing.T) {
	const x = NotItem
	tests := []struct {
		name    string
		related [][]int32
		sub     []string
		want    []Edge
		st      DropStats
	}{
		{name: "no items"},
		{name: "no lists", sub: []string{"a", "b"}, related: [][]int32{nil, {}}},
		{name: "cross edges kept, both directions",
			sub: []string{"a", "b"}, related: [][]int32{{1}, {0}},
			want: []Edge{{0, 1}, {1, 0}}},
		{name: "target not an item",
			sub: []string{"a", "b"}, related: [][]int32{{x, 1, x}, nil},
			want: []Edge{{0, 1}}, st: DropStats{NotItem: 2}},
		{name: "self loop, though its subcategory is its own",
			sub: []string{"a", "b"}, related: [][]int32{{0, 1}, {1}},
			want: []Edge{{0, 1}}, st: DropStats{SelfLoop: 2}},
		{name: "same subcategory",
			sub: []string{"a", "a", "b"}, related: [][]int32{{1, 2}, {0}, nil},
			want: []Edge{{0, 2}}, st: DropStats{SameSubcategory: 2}},
		{name: "duplicate counted once the first is kept",
			sub: []string{"a", "b"}, related: [][]int32{{1, 1, 1}, nil},
			want: []Edge{{0, 1}}, st: DropStats{Duplicate: 2}},
		{name: "a duplicate of a dropped entry counts under the drop",
			sub: []string{"a", "a"}, related: [][]int32{{1, 1}, {1, 1}},
			st: DropStats{SameSubcategory: 2, SelfLoop: 2}},
		{name: "sorted by source then target whatever the list order",
			sub: []string{"a", "b", "c", "d"}, related: [][]int32{{3, 1, 2}, nil, {1, 0}, {0}},
			want: []Edge{{0, 1}, {0, 2}, {0, 3}, {2, 0}, {2, 1}, {3, 0}}},
		{name: "every rule at once",
			sub:     []string{"a", "a", "b"},
			related: [][]int32{{x, 0, 1, 2, 2, x}, {2, 0, 2}, {2, 0, 1, 0}},
			want:    []Edge{{0, 2}, {1, 2}, {2, 0}, {2, 1}},
			st:      DropStats{NotItem: 2, SelfLoop: 2, SameSubcategory: 2, Duplicate: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, st := CrossEdges(tc.related, tc.sub)
			if !slices.Equal(got, tc.want) {
				t.Errorf("edges %v, want %v", got, tc.want)
			}
			if st != tc.st {
				t.Errorf("drops %+v, want %+v", st, tc.st)
			}
			entries := 0
			for _, l := range tc.related {
				entries += len(l)
			}
			if n := int64(len(got)) + st.NotItem + st.SelfLoop + st.SameSubcategory + st.Duplicate; n != int64(entries) {
				t.Errorf("%d edges and drops for %d list entries", n, entries)
			}
		})
	}
}

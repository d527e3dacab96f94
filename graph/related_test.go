package graph

import (
	"fmt"
	"math/rand/v2"
	"runtime"
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

// crossEdgesOneMap is CrossEdges as it was written first, one map of every
// edge kept: the reference for the spans on all cores.
func crossEdgesOneMap(related [][]int32, sub []string) ([]Edge, DropStats) {
	var edges []Edge
	var st DropStats
	seen := map[Edge]bool{}
	for i, targets := range related {
		for _, j := range targets {
			e := Edge{Src: int32(i), Dst: j}
			switch {
			case j == NotItem:
				st.NotItem++
			case int(j) == i:
				st.SelfLoop++
			case sub[j] == sub[i]:
				st.SameSubcategory++
			case seen[e]:
				st.Duplicate++
			default:
				seen[e] = true
				edges = append(edges, e)
			}
		}
	}
	slices.SortFunc(edges, func(x, y Edge) int {
		if x.Src != y.Src {
			return int(x.Src - y.Src)
		}
		return int(x.Dst - y.Dst)
	})
	return edges, st
}

// TestCrossEdgesAsOneMap: over 20,000 items (spans of 4096 cut it five
// ways, the last short) with every kind of entry, CrossEdges gives the
// one-map reference's edges and counts at GOMAXPROCS 1, 2, 3, 7 and 16.
func TestCrossEdgesAsOneMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 20_003
	sub := make([]string, n)
	related := make([][]int32, n)
	for i := range n {
		sub[i] = fmt.Sprint("s", rng.IntN(7))
		for range rng.IntN(12) {
			switch r := rng.IntN(20); {
			case r == 0:
				related[i] = append(related[i], NotItem)
			case r == 1:
				related[i] = append(related[i], int32(i))
			case r < 6 && len(related[i]) > 0:
				related[i] = append(related[i], related[i][rng.IntN(len(related[i]))])
			default:
				related[i] = append(related[i], int32(rng.IntN(n)))
			}
		}
	}
	want, wantSt := crossEdgesOneMap(related, sub)
	if wantSt.Duplicate == 0 || wantSt.SameSubcategory == 0 || wantSt.NotItem == 0 || wantSt.SelfLoop == 0 {
		t.Fatalf("the lists lack a kind of entry: %+v", wantSt)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, p := range []int{1, 2, 3, 7, 16} {
		runtime.GOMAXPROCS(p)
		got, st := CrossEdges(related, sub)
		if !slices.Equal(got, want) || st != wantSt {
			t.Fatalf("GOMAXPROCS=%d: %d edges %+v, want %d %+v", p, len(got), st, len(want), wantSt)
		}
	}
}

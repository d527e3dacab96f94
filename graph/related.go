package graph

import (
	"cmp"
	"slices"
)

// NotItem stands in a related list for a target that is not an item of the
// experiment (out of its category, without a feature source, or not in the
// metadata at all).
const NotItem int32 = -1

// DropStats counts the related-list entries CrossEdges dropped, each under
// the first rule it breaks, in the order of the fields.
type DropStats struct {
	NotItem         int64 // the target is not an item of the experiment
	SelfLoop        int64 // the target is the item itself
	SameSubcategory int64 // both ends are in one subcategory
	Duplicate       int64 // the edge was kept already
}

// CrossEdges is the edge rule of an experiment's graph (the paper learns
// relations across categories, so an edge inside one subcategory is no
// example of them):
// related[i] lists the targets on item i's page, as item indices or
// NotItem, and sub[i] is item i's subcategory. It keeps each edge (i, j)
// whose target is an item other than i, in another subcategory, once; it
// returns them in (src, dst) order, whatever the order of the lists, and
// counts the entries dropped.
func CrossEdges(related [][]int32, sub []string) ([]Edge, DropStats) {
	var (
		edges []Edge
		st    DropStats
	)
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
		if c := cmp.Compare(x.Src, y.Src); c != 0 {
			return c
		}
		return cmp.Compare(x.Dst, y.Dst)
	})
	return edges, st
}

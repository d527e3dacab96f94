package graph

import (
	"cmp"
	"slices"

	"monomer/internal/par"
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
//
// An edge's source is the item whose list names it, so a duplicate can
// only be in that one list: items are taken in spans on all cores, each
// item's kept targets sorted and made unique on their own, and the spans'
// edges and counts joined in item order (the same result at any
// GOMAXPROCS; one map of every edge made this a serial second of ingest
// at Women's size).
func CrossEdges(related [][]int32, sub []string) ([]Edge, DropStats) {
	const span = 4096
	parts := make([][]Edge, (len(related)+span-1)/span)
	stats := make([]DropStats, len(parts))
	par.Spans(len(related), span, 0, func(lo, hi int) {
		var out []Edge
		var st DropStats
		for i := lo; i < hi; i++ {
			start := len(out)
			for _, j := range related[i] {
				switch {
				case j == NotItem:
					st.NotItem++
				case int(j) == i:
					st.SelfLoop++
				case sub[j] == sub[i]:
					st.SameSubcategory++
				default:
					out = append(out, Edge{Src: int32(i), Dst: j})
				}
			}
			mine := out[start:]
			slices.SortFunc(mine, func(x, y Edge) int { return cmp.Compare(x.Dst, y.Dst) })
			kept := len(slices.CompactFunc(mine, func(x, y Edge) bool { return x.Dst == y.Dst }))
			st.Duplicate += int64(len(mine) - kept)
			out = out[:start+kept]
		}
		parts[lo/span], stats[lo/span] = out, st
	})
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	edges := make([]Edge, 0, n)
	var st DropStats
	for k, p := range parts {
		edges = append(edges, p...)
		st.NotItem += stats[k].NotItem
		st.SelfLoop += stats[k].SelfLoop
		st.SameSubcategory += stats[k].SameSubcategory
		st.Duplicate += stats[k].Duplicate
	}
	return edges, st
}

package models

import (
	"os"
	"slices"
)

// graphOrder returns an order of n local items in which the two ends of
// most related pairs lie close: order[p] is the item at position p, a
// permutation of [0, n). It is a Cuthill–McKee order of the graph of the
// related pairs (x[q], y[q] with labels[q]): a breadth-first search from
// the first unvisited item in index order, each item's unvisited
// neighbours taken by ascending degree (then index). An item's neighbours
// so sit together right after the items placed before them, and a
// component stays in one run.
//
// The evaluators keep P and G in this order, so the rows a pair or an
// item's gradient reads of the other end are mostly near the rows just read
// instead of anywhere in a P of hundreds of MB (cache and TLB misses were
// most of an evaluation's time beyond the two products at Electronics'
// size, BENCHMARKS.md). Unrelated pairs are random edges whatever the
// order. Deterministic: it depends on the pairs alone, in O(pairs·log).
func graphOrder(n int, x, y []int32, labels []bool) []int32 {
	off := make([]int32, n+1)
	for q, l := range labels {
		if l && x[q] != y[q] {
			off[x[q]+1]++
			off[y[q]+1]++
		}
	}
	for i := range n {
		off[i+1] += off[i]
	}
	adj := make([]int32, off[n])
	fill := slices.Clone(off[:n])
	for q, l := range labels {
		if l && x[q] != y[q] {
			adj[fill[x[q]]], adj[fill[y[q]]] = y[q], x[q]
			fill[x[q]]++
			fill[y[q]]++
		}
	}
	deg := func(i int32) int32 { return off[i+1] - off[i] }
	for i := range n {
		slices.SortFunc(adj[off[i]:off[i+1]], func(a, b int32) int {
			if da, db := deg(a), deg(b); da != db {
				return int(da - db)
			}
			return int(a - b)
		})
	}
	order := make([]int32, 0, n)
	seen := make([]bool, n)
	for s := range int32(n) {
		if seen[s] {
			continue
		}
		seen[s] = true
		order = append(order, s)
		for head := len(order) - 1; head < len(order); head++ {
			v := order[head]
			for _, u := range adj[off[v]:off[v+1]] {
				if !seen[u] {
					seen[u] = true
					order = append(order, u)
				}
			}
		}
	}
	return order
}

// localize renumbers the training pair set's items in graphOrder where the
// evaluators read the rows as sparse rows (bag of words, lean dense rows),
// and returns the rows to read: sparse features copied in that order
// (repackSparse), so that reading them in local order is sequential too.
// Dense rows multiplied by gemm are left in place (their blocks are taken
// from the mapped matrix as runs of ascending rows).
func localize(src rowSource, ps *pairSet) rowSource {
	if src.sparse == nil && !src.lean {
		return src
	}
	if os.Getenv("MONOMER_ORDER") == "none" {
		return src
	}
	switch os.Getenv("MONOMER_ORDER") {
	case "deg":
		ps.reorder(degreeOrder(len(ps.items), ps.x, ps.y))
	case "degcm":
		ps.reorder(degreeOrder(len(ps.items), ps.x, ps.y))
		ps.reorder(graphOrder(len(ps.items), ps.x, ps.y, ps.labels))
	default:
		ps.reorder(graphOrder(len(ps.items), ps.x, ps.y, ps.labels))
	}
	if src.sparse != nil && os.Getenv("MONOMER_REPACK") != "" {
		src.sparse = repackSparse(src.sparse, ps.items, sparseNNZ(src.sparse, ps.items))
	}
	return src
}

func degreeOrder(n int, x, y []int32) []int32 {
	deg := make([]int32, n)
	for q := range x {
		deg[x[q]]++
		deg[y[q]]++
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return int(deg[b] - deg[a]) })
	return order
}

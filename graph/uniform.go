package graph

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
)

// UniformStats reports what Uniform did.
type UniformStats struct {
	Edges       int   // |R|
	ActiveItems int   // items with at least one edge in R: the pool pairs are drawn from
	CrossPairs  int64 // ordered pairs of active items in different subcategories
	// Attempts is the number of candidate pairs drawn; each draw is already a
	// cross-subcategory pair, so the rejected ones (Attempts − |R̄|) were in R
	// or drawn before. 0 when Enumerated.
	Attempts int
	// Enumerated is true when the candidates were few enough (CrossPairs ≤
	// 3·|R| + 2^16) to list them all and draw without replacement, which
	// gives the same distribution without a long rejection tail.
	Enumerated bool
}

// Uniform draws |R| negatives as the earlier LMT code did: uniformly random
// ordered pairs (x, y) of items that have at least one edge in R, with x and
// y in different subcategories, not in R, and no pair twice. Unlike Rewire it
// does not keep degrees. The negatives come back sorted by (Src, Dst).
//
// It draws a cross-subcategory pair directly (one random number picks a
// subcategory weighted by its share of cross pairs, an item in it and an item
// outside it) and rejects only pairs of R and repeats, which gives the same
// distribution as rejecting same-subcategory and self pairs too. When fewer
// than |R| candidate pairs exist it returns ErrIncomplete and no negatives;
// when few exist it lists them all (see UniformStats.Enumerated), so it
// never loops for long. Once ctx is done Uniform returns ctx.Err() within
// ctxEvery draws (or candidates listed), with no negatives.
func Uniform(ctx context.Context, pos []Edge, sub []int32, rng *rand.Rand) ([]Edge, UniformStats, error) {
	m := len(pos)
	st := UniformStats{Edges: m}
	set, err := loadPositives(pos, sub)
	if err != nil {
		return nil, st, err
	}
	if err := ctx.Err(); err != nil {
		return nil, st, err
	}
	if m == 0 {
		return []Edge{}, st, nil
	}

	cp := newCrossPairs(pos, sub)
	st.ActiveItems = len(cp.items)
	st.CrossPairs = int64(cp.total)
	if cp.total < uint64(2*m) {
		return nil, st, fmt.Errorf("graph: uniform: %d items with edges form %d cross-subcategory pairs, fewer than |R| = %d plus as many negatives: %w",
			len(cp.items), cp.total, m, ErrIncomplete)
	}

	keys := make([]uint64, 0, m)
	if cp.total <= uint64(3*m)+1<<16 {
		st.Enumerated = true
		cand := make([]uint64, 0, cp.total-uint64(m))
		for r := range cp.total {
			if r&(ctxEvery-1) == ctxEvery-1 {
				if err := ctx.Err(); err != nil {
					return nil, st, err
				}
			}
			x, y := cp.at(r)
			if k := key(x, y); !set.has(k) {
				cand = append(cand, k)
			}
		}
		// A partial Fisher-Yates shuffle draws m without replacement.
		for i := range m {
			j := i + rng.IntN(len(cand)-i)
			cand[i], cand[j] = cand[j], cand[i]
		}
		keys = append(keys, cand[:m]...)
	} else {
		// At most 2·|R| of the more than 3·|R| candidates are ever taken
		// (R and the negatives so far), so over a third stay free: under
		// 3·|R| draws on average.
		for len(keys) < m {
			if st.Attempts&(ctxEvery-1) == ctxEvery-1 {
				if err := ctx.Err(); err != nil {
					return nil, st, err
				}
			}
			st.Attempts++
			x, y := cp.at(rng.Uint64N(cp.total))
			if k := key(x, y); set.add(k) {
				keys = append(keys, k)
			}
		}
	}
	return edgesOfSortedKeys(keys), st, nil
}

// crossPairs numbers the ordered cross-subcategory pairs of the items that
// have an edge, so that one uniform number in [0, total) picks one uniformly.
type crossPairs struct {
	items []int32  // active items grouped by subcategory, each group in index order
	start []uint64 // items[start[g]:start[g+1]] is group g
	cum   []uint64 // cum[g]: pairs whose first item lies in a group before g
	total uint64
}

func newCrossPairs(pos []Edge, sub []int32) *crossPairs {
	active := make([]bool, len(sub))
	for _, e := range pos {
		active[e.Src] = true
		active[e.Dst] = true
	}
	cp := &crossPairs{}
	for i, a := range active {
		if a {
			cp.items = append(cp.items, int32(i))
		}
	}
	slices.SortStableFunc(cp.items, func(x, y int32) int { return cmp.Compare(sub[x], sub[y]) })
	n := uint64(len(cp.items))
	for k := range cp.items {
		if k == 0 || sub[cp.items[k]] != sub[cp.items[k-1]] {
			cp.start = append(cp.start, uint64(k))
		}
	}
	cp.start = append(cp.start, n)
	groups := len(cp.start) - 1
	cp.cum = make([]uint64, groups+1)
	for g := range groups {
		size := cp.start[g+1] - cp.start[g]
		cp.cum[g+1] = cp.cum[g] + size*(n-size) // n < 2^31: no overflow
	}
	cp.total = cp.cum[groups]
	return cp
}

// at decodes r in [0, total) into the r-th cross pair: its group g by cum
// (strictly increasing when total > 0, as then every group has 0 < size < n),
// then x within g and y among the items outside g.
func (cp *crossPairs) at(r uint64) (x, y int32) {
	g, found := slices.BinarySearch(cp.cum, r)
	if !found {
		g--
	}
	n := uint64(len(cp.items))
	size := cp.start[g+1] - cp.start[g]
	off := r - cp.cum[g]
	xi, yi := off/(n-size), off%(n-size)
	if yi >= cp.start[g] {
		yi += size // skip the group itself
	}
	return cp.items[cp.start[g]+xi], cp.items[yi]
}

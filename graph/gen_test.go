package graph

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// shape describes a random test graph.
type shape struct {
	items, edges, subs int
	// alpha is the exponent of Zipf-like item weights (weight of the item of
	// rank r is r^-alpha) for both ends; 0 draws ends uniformly. Women's
	// also_bought degrees look like alpha ≈ 0.8.
	alpha float64
	// hubs items get hubShare of all edge ends (half as sources, half as
	// destinations): star-heavy graphs, where rewiring is hardest.
	hubs     int
	hubShare float64
	// subAlpha skews subcategory sizes the same way (0: uniform).
	subAlpha float64
}

// womenShape is the size of the paper's Women's Clothing also_bought graph
// (Table 1: 659,566 items, 116 subcategories; 1.92 M edges).
var womenShape = shape{items: 659_566, edges: 1_920_000, subs: 116, alpha: 0.8, subAlpha: 0.7}

// sampler draws indices with probability proportional to weights.
type sampler struct{ cum []float64 }

func newSampler(w []float64) sampler {
	cum := make([]float64, len(w))
	s := 0.0
	for i, x := range w {
		s += x
		cum[i] = s
	}
	return sampler{cum}
}

func (s sampler) draw(rng *rand.Rand) int {
	r := rng.Float64() * s.cum[len(s.cum)-1]
	i, _ := slices.BinarySearch(s.cum, r)
	return min(i, len(s.cum)-1)
}

func zipfWeights(n int, alpha float64, rng *rand.Rand) []float64 {
	w := make([]float64, n)
	for r := range w {
		w[r] = math.Pow(float64(r+1), -alpha)
	}
	rng.Shuffle(n, func(i, j int) { w[i], w[j] = w[j], w[i] })
	return w
}

// genGraph draws a graph of shape sh: subcategories first, then distinct
// cross-subcategory edges (fewer if the shape cannot hold that many).
func genGraph(sh shape, rng *rand.Rand) (pos []Edge, sub []int32) {
	subPick := newSampler(zipfWeights(sh.subs, sh.subAlpha, rng))
	sub = make([]int32, sh.items)
	for i := range sub {
		sub[i] = int32(subPick.draw(rng))
	}
	srcW := zipfWeights(sh.items, sh.alpha, rng)
	dstW := zipfWeights(sh.items, sh.alpha, rng)
	if sh.hubs > 0 {
		// Give the first items (random subcategories) hubShare of the mass.
		var rest float64
		for _, x := range srcW[sh.hubs:] {
			rest += x
		}
		for i := range sh.hubs {
			srcW[i] = rest * sh.hubShare / (1 - sh.hubShare) / float64(sh.hubs)
			dstW[i] = srcW[i]
		}
	}
	src, dst := newSampler(srcW), newSampler(dstW)
	set := newEdgeSet(sh.edges)
	for try := 0; len(pos) < sh.edges && try < 20*sh.edges; try++ {
		a, b := int32(src.draw(rng)), int32(dst.draw(rng))
		if a == b || sub[a] == sub[b] || !set.add(key(a, b)) {
			continue
		}
		pos = append(pos, Edge{a, b})
	}
	return pos, sub
}

// degrees returns out- and in-degrees of es over n items.
func degrees(es []Edge, n int) (out, in []int) {
	out, in = make([]int, n), make([]int, n)
	for _, e := range es {
		out[e.Src]++
		in[e.Dst]++
	}
	return out, in
}

// checkNegatives checks the contract of Rewire (degrees when rewired) or
// Uniform on neg against pos.
func checkNegatives(t *testing.T, pos, neg, dropped []Edge, sub []int32, rewired bool) {
	t.Helper()
	inR := make(map[Edge]bool, len(pos))
	active := make([]bool, len(sub))
	for _, e := range pos {
		inR[e] = true
		active[e.Src], active[e.Dst] = true, true
	}
	if len(neg)+len(dropped) != len(pos) {
		t.Fatalf("|R̄| = %d + dropped %d, want |R| = %d", len(neg), len(dropped), len(pos))
	}
	for i, e := range neg {
		switch {
		case e.Src == e.Dst:
			t.Fatalf("negative %d %v is a self loop", i, e)
		case sub[e.Src] == sub[e.Dst]:
			t.Fatalf("negative %d %v lies in subcategory %d", i, e, sub[e.Src])
		case inR[e]:
			t.Fatalf("negative %d %v is in R", i, e)
		case !active[e.Src] || !active[e.Dst]:
			t.Fatalf("negative %d %v has an item without edges", i, e)
		case i > 0 && compareEdges(neg[i-1], e) >= 0:
			t.Fatalf("negatives %d %v and %d %v: duplicate or out of order", i-1, neg[i-1], i, e)
		}
	}
	for _, e := range dropped {
		if !inR[e] {
			t.Fatalf("dropped pair %v is not in R", e)
		}
	}
	if !rewired {
		return
	}
	po, pi := degrees(pos, len(sub))
	no, ni := degrees(neg, len(sub))
	do, di := degrees(dropped, len(sub))
	for v := range sub {
		if no[v]+do[v] != po[v] || ni[v]+di[v] != pi[v] {
			t.Fatalf("item %d: out/in degree %d/%d in R̄ (+%d/%d dropped), %d/%d in R",
				v, no[v], ni[v], do[v], di[v], po[v], pi[v])
		}
	}
}

package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"unsafe"
)

var (
	// ErrInvalidGraph marks an input that breaks the contract of R: an end
	// out of range, a self loop, a duplicate pair, or a pair inside one
	// subcategory.
	ErrInvalidGraph = errors.New("invalid graph")
	// ErrIncomplete marks negatives that fall short of |R| by more than the
	// caller allows: the graph leaves too little room to rewire it (or, for
	// Uniform, to sample from).
	ErrIncomplete = errors.New("too few negatives")
	// ErrInvalidOptions marks an option out of its range.
	ErrInvalidOptions = errors.New("invalid options")
	// ErrBroken marks a result of Rewire that breaks its own guarantees
	// (degrees kept, no pair inside a subcategory, no self loop or
	// duplicate): a bug in this package, never bad input.
	ErrBroken = errors.New("rewiring broke its invariants")
)

// DefaultSwapsPerEdge is the number of switch attempts per edge of R in the
// main phase of Rewire. Each attempt picks two edges, so an edge is picked
// about 2S times, and if its attempts succeed with probability p it stays
// unswitched with probability about exp(−2·S·p). S = 20 keeps that under
// 0.1 % for every edge with p ≥ 0.18 (Milo et al. 2003 likewise use a fixed
// number of switches per edge). A graph shaped like Women's also_bought
// accepts 88 % of attempts and leaves no edge unswitched; edges at hubs that
// list or are listed by a large share of all items have a much lower p, and
// the clean-up phase takes those.
const DefaultSwapsPerEdge = 20

// RewireOptions tunes Rewire. The zero value is the default.
type RewireOptions struct {
	// SwapsPerEdge is the number of switch attempts per edge in the main
	// phase. If 0, it is DefaultSwapsPerEdge (see there for why).
	SwapsPerEdge int
	// ExtraAttempts is the attempt budget of the clean-up phase, which keeps
	// switching the pairs still in R after the main phase. If 0, it is 1000
	// attempts per pair still in R, at least 1,000,000 and at most the main
	// phase's SwapsPerEdge × |R| + 1,000,000 (so a graph that cannot be
	// rewired at all costs at most about twice a normal run).
	ExtraAttempts int
	// MaxDropFraction is the share of |R| that may be dropped (pairs still in
	// R when the clean-up budget is spent) before Rewire returns
	// ErrIncomplete. If 0, it is 0.001; a negative value allows any number.
	MaxDropFraction float64
	// Progress, if not nil, is called with attempts done and the main phase's
	// total every 2^20 attempts and once at the end of each phase; the total
	// grows by the clean-up budget when that phase starts.
	Progress func(done, total int64)
}

// RewireStats reports what Rewire did; all of it is deterministic.
type RewireStats struct {
	Edges           int // |R|
	Attempts        int // switch attempts, both phases
	Accepted        int // switches done, both phases
	CleanupAttempts int // attempts of the clean-up phase, included in Attempts
	CleanupAccepted int // switches of the clean-up phase, included in Accepted
	// NeverSwitched is the number of pairs of R that the main phase never
	// switched (they go to the clean-up phase).
	NeverSwitched int
	// Dropped is the number of pairs still in R when the clean-up budget ran
	// out; they are not negatives, so |R̄| = |R| − Dropped and their ends
	// lose that much degree.
	Dropped int
	// DroppedEdges are those pairs, sorted by (Src, Dst).
	DroppedEdges []Edge
	// Why attempts failed; a failed attempt counts under its first reason in
	// this order.
	RejectedSelfLoop int // (a,d) or (c,b) is a self loop
	RejectedSameSub  int // (a,d) or (c,b) lies inside one subcategory
	RejectedExists   int // (a,d) or (c,b) is in R or already a negative
}

// NeverSwitchedFraction is NeverSwitched / Edges (0 for an empty graph).
func (s RewireStats) NeverSwitchedFraction() float64 {
	if s.Edges == 0 {
		return 0
	}
	return float64(s.NeverSwitched) / float64(s.Edges)
}

// Rewire draws the negatives R̄ by degree-preserving random rewiring of the
// positives R = pos (Milo et al. 2003; paper Section III-C, "Learning the
// Model"). sub[i] is the subcategory of item i; every edge end must index
// sub.
//
// Starting from a copy of R it repeatedly picks two current pairs (a,b),
// (c,d) uniformly and switches them to (a,d), (c,b) when neither new pair is
// a self loop, neither is in R or among the current pairs, and each joins two
// subcategories. That keeps every item's out- and in-degree. After
// SwapsPerEdge × |R| attempts, a clean-up phase picks only among pairs still
// in R (each with a uniform partner) until none is left or its budget is
// spent; the rest are dropped and reported.
//
// The negatives come back sorted by (Src, Dst), with no duplicates. The
// result depends only on pos (order included), sub and the state of rng.
// Bad input returns ErrInvalidGraph or ErrInvalidOptions and nothing else,
// before any work; more drops than
// MaxDropFraction allows return the negatives, the stats and an error
// wrapping ErrIncomplete. Once ctx is done Rewire returns ctx.Err() within
// ctxEvery attempts, with no negatives.
func Rewire(ctx context.Context, pos []Edge, sub []int32, rng *rand.Rand, opts RewireOptions) ([]Edge, RewireStats, error) {
	m := len(pos)
	st := RewireStats{Edges: m}
	swaps := cmp.Or(opts.SwapsPerEdge, DefaultSwapsPerEdge)
	if swaps < 0 {
		return nil, st, fmt.Errorf("graph: rewire: SwapsPerEdge %d < 0: %w", swaps, ErrInvalidOptions)
	}
	if opts.ExtraAttempts < 0 {
		return nil, st, fmt.Errorf("graph: rewire: ExtraAttempts %d < 0: %w", opts.ExtraAttempts, ErrInvalidOptions)
	}
	set, err := loadPositives(pos, sub)
	if err != nil {
		return nil, st, err
	}
	if err := ctx.Err(); err != nil {
		return nil, st, err
	}
	w := newRewirer(pos, sub, set, &st)
	total := int64(swaps) * int64(m)
	if err := w.mainPhase(ctx, rng, total, opts.Progress); err != nil {
		return nil, st, err
	}
	budget := opts.ExtraAttempts
	if budget == 0 {
		budget = max(1_000_000, 1000*w.countOrig())
		budget = min(budget, swaps*m+1_000_000)
	}
	if err := w.cleanup(ctx, rng, budget, total, opts.Progress); err != nil {
		return nil, st, err
	}
	neg := w.negatives()
	if w.err != nil {
		return nil, st, w.err
	}
	if err := checkRewired(pos, neg, st.DroppedEdges, sub); err != nil {
		return nil, st, err
	}
	maxDrop := cmp.Or(opts.MaxDropFraction, 0.001)
	if maxDrop >= 0 && float64(st.Dropped) > maxDrop*float64(m) {
		return neg, st, fmt.Errorf("graph: rewire: %d of %d pairs still in R after %d clean-up attempts (%.3g%%, limit %.3g%%): %w",
			st.Dropped, m, st.CleanupAttempts, 100*float64(st.Dropped)/float64(m), 100*maxDrop, ErrIncomplete)
	}
	return neg, st, nil
}

// newRewirer starts from a copy of R = pos: every current pair is still
// one of R.
func newRewirer(pos []Edge, sub []int32, set *edgeSet, st *RewireStats) *rewirer {
	m := len(pos)
	w := &rewirer{
		cur:   make([]arc, m),
		orig:  make([]bool, m),
		set:   set,
		st:    st,
		limit: 2 * m,
	}
	for i, e := range pos {
		w.cur[i] = arc{e.Src, e.Dst, sub[e.Src], sub[e.Dst]}
		w.orig[i] = true
	}
	return w
}

// mainPhase makes total attempts on uniform pairs of current edges. The
// run is bound by memory latency (a few cache misses per attempt in
// tables of 30-60 MB at Women's size), so pairs are drawn arcAhead
// attempts early and their memory prefetched while earlier attempts run:
// twice as fast. The draws are in the same order, so results are those of
// drawing each pair just before its attempt.
func (w *rewirer) mainPhase(ctx context.Context, rng *rand.Rand, total int64, progress func(done, total int64)) error {
	m := len(w.cur)
	if m >= 2 {
		draw := func() [2]int {
			i := rng.IntN(m)
			j := rng.IntN(m - 1)
			if j >= i {
				j++ // a uniform partner other than i
			}
			return [2]int{i, j}
		}
		// ring[k&15] holds the pair of attempt k, for k in [n, n+arcAhead].
		var ring [16][2]int
		for k := range min(total, arcAhead) {
			ring[k] = draw()
		}
		for n := int64(0); n < total; n++ {
			if k := n + arcAhead; k < total {
				ring[k&15] = draw()
				w.warmArcs(ring[k&15])
			}
			if k := n + keyAhead; k < total {
				w.warmKeys(ring[k&15])
			}
			w.try(ring[n&15][0], ring[n&15][1])
			if n&(ctxEvery-1) == ctxEvery-1 {
				if err := ctx.Err(); err != nil {
					return err
				}
				if progress != nil && n&(1<<20-1) == 1<<20-1 {
					progress(n+1, total)
				}
			}
		}
	}
	if progress != nil {
		progress(total, total)
	}
	return nil
}

// countOrig is the number of current pairs still in R.
func (w *rewirer) countOrig() int {
	n := 0
	for _, o := range w.orig {
		if o {
			n++
		}
	}
	return n
}

// cleanup picks only among the pairs still in R (in index order, then
// picked at random), each with a uniform partner, until none is left or
// budget attempts are spent. total is the main phase's attempts, for
// progress.
func (w *rewirer) cleanup(ctx context.Context, rng *rand.Rand, budget int, total int64, progress func(done, total int64)) error {
	m, st := len(w.cur), w.st
	var stuck []int
	for i, o := range w.orig {
		if o {
			stuck = append(stuck, i)
		}
	}
	st.NeverSwitched = len(stuck)
	if m < 2 {
		budget = 0 // nothing to switch with
	}
	before := st.Attempts
	for n := 0; len(stuck) > 0 && n < budget; {
		k := rng.IntN(len(stuck))
		i := stuck[k]
		if !w.orig[i] {
			// Switched earlier as somebody's partner.
			stuck[k] = stuck[len(stuck)-1]
			stuck = stuck[:len(stuck)-1]
			continue
		}
		j := rng.IntN(m - 1)
		if j >= i {
			j++
		}
		n++
		if w.try(i, j) {
			st.CleanupAccepted++
			stuck[k] = stuck[len(stuck)-1]
			stuck = stuck[:len(stuck)-1]
		}
		if n&(ctxEvery-1) == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if progress != nil && n&(1<<20-1) == 0 {
				progress(total+int64(n), total+int64(budget))
			}
		}
	}
	st.CleanupAttempts = st.Attempts - before
	if progress != nil && budget > 0 && st.NeverSwitched > 0 {
		progress(total+int64(st.CleanupAttempts), total+int64(st.CleanupAttempts))
	}
	return nil
}

// negatives returns the current pairs that left R, sorted by (Src, Dst),
// and records those still in R as dropped.
func (w *rewirer) negatives() []Edge {
	st := w.st
	keys := make([]uint64, 0, len(w.cur))
	for i, e := range w.cur {
		if w.orig[i] {
			st.DroppedEdges = append(st.DroppedEdges, Edge{e.src, e.dst})
			continue
		}
		keys = append(keys, key(e.src, e.dst))
	}
	st.Dropped = len(st.DroppedEdges)
	slices.SortFunc(st.DroppedEdges, compareEdges)
	return edgesOfSortedKeys(keys)
}

// ctxEvery is how many attempts Rewire makes between looks at its context
// (a power of two, dividing the 2^20 of progress reports): about a
// millisecond of work, so a look costs nothing measurable.
const ctxEvery = 1 << 14

// rewirer is the state of one Rewire call.
type rewirer struct {
	cur  []arc    // current pairs; position i started as pos[i]
	orig []bool   // orig[i]: cur[i] is still pos[i], a pair of R
	set  *edgeSet // R and every current pair: the pairs a switch may not create
	st   *RewireStats
	// limit is the most keys set can hold when switches are right (R plus
	// as many negatives); past it err is set and try does nothing more, so
	// a broken switch ends the run with an error within the attempt budget
	// instead of filling the set until its probing never ends.
	limit int
	err   error
}

// arc is a current pair with the subcategories of its ends, which travel
// with them through switches: that saves four random reads of sub per
// attempt.
type arc struct {
	src, dst       int32
	srcSub, dstSub int32
}

// warmArcs prefetches the arcs of a coming attempt. It changes no result.
func (w *rewirer) warmArcs(ij [2]int) {
	prefetch(unsafe.Pointer(&w.cur[ij[0]]))
	prefetch(unsafe.Pointer(&w.cur[ij[1]]))
}

// warmKeys prefetches the home slots of a coming attempt's four pairs in the
// set (its arcs are in cache by then). An attempt in between may still change
// its arcs, which only wastes a prefetch.
func (w *rewirer) warmKeys(ij [2]int) {
	x, y := w.cur[ij[0]], w.cur[ij[1]]
	sl := w.set.slots
	prefetch(unsafe.Pointer(&sl[w.set.home(key(x.src, y.dst))]))
	prefetch(unsafe.Pointer(&sl[w.set.home(key(y.src, x.dst))]))
	prefetch(unsafe.Pointer(&sl[w.set.home(key(x.src, x.dst))]))
	prefetch(unsafe.Pointer(&sl[w.set.home(key(y.src, y.dst))]))
}

// try switches cur[i] = (a,b) and cur[j] = (c,d) to (a,d), (c,b) if that is
// allowed, and reports whether it did.
func (w *rewirer) try(i, j int) bool {
	if w.err != nil {
		return false
	}
	w.st.Attempts++
	x, y := w.cur[i], w.cur[j]
	a, b, c, d := x.src, x.dst, y.src, y.dst
	switch {
	case a == d || c == b:
		w.st.RejectedSelfLoop++
		return false
	case x.srcSub == y.dstSub || y.srcSub == x.dstSub:
		w.st.RejectedSameSub++
		return false
	}
	// a == c makes (a,d) the current pair (c,d), so the set rejects it.
	ad, cb := key(a, d), key(c, b)
	if w.set.has(ad) || w.set.has(cb) {
		w.st.RejectedExists++
		return false
	}
	// Pairs of R stay in the set for good; a negative leaves it when it is
	// switched away, so it may be drawn again later.
	if w.orig[i] {
		w.orig[i] = false
	} else {
		w.set.del(key(a, b))
	}
	if w.orig[j] {
		w.orig[j] = false
	} else {
		w.set.del(key(c, d))
	}
	w.set.add(ad)
	w.set.add(cb)
	w.cur[i] = arc{a, d, x.srcSub, y.dstSub}
	w.cur[j] = arc{c, b, y.srcSub, x.dstSub}
	w.st.Accepted++
	if w.set.len() > w.limit {
		w.err = fmt.Errorf("graph: rewire: %d pairs in the set after switch %d, more than |R| + |R̄| = %d: a switch left a pair behind: %w",
			w.set.len(), w.st.Attempts, w.limit, ErrBroken)
	}
	return true
}

// checkRewired checks Rewire's result against its contract: every item keeps
// its out- and in-degree between R and R̄ plus the dropped pairs, and no
// negative is a self loop, lies inside one subcategory or comes twice. It
// costs one pass over the pairs, a small part of the rewiring.
func checkRewired(pos, neg, dropped []Edge, sub []int32) error {
	for i, e := range neg {
		switch {
		case e.Src == e.Dst:
			return fmt.Errorf("graph: rewire: negative %d→%d is a self loop: %w", e.Src, e.Dst, ErrBroken)
		case sub[e.Src] == sub[e.Dst]:
			return fmt.Errorf("graph: rewire: negative %d→%d lies inside subcategory %d: %w", e.Src, e.Dst, sub[e.Src], ErrBroken)
		case i > 0 && compareEdges(neg[i-1], e) >= 0:
			return fmt.Errorf("graph: rewire: negative %d→%d comes twice or out of order: %w", e.Src, e.Dst, ErrBroken)
		}
	}
	// deg[2v] and deg[2v+1] count v's out- and in-degree in R minus R̄ and
	// the dropped pairs: all zero when degrees are kept.
	deg := make([]int32, 2*len(sub))
	for _, e := range pos {
		deg[2*e.Src]++
		deg[2*e.Dst+1]++
	}
	for _, es := range [][]Edge{neg, dropped} {
		for _, e := range es {
			deg[2*e.Src]--
			deg[2*e.Dst+1]--
		}
	}
	for i, d := range deg {
		if d != 0 {
			dir := [2]string{"out", "in"}[i%2]
			return fmt.Errorf("graph: rewire: item %d has %s-degree %d more in R than in R̄ and the dropped pairs: degrees not preserved: %w",
				i/2, dir, d, ErrBroken)
		}
	}
	return nil
}

// loadPositives checks pos against sub and returns a set of its keys with
// room for as many more.
func loadPositives(pos []Edge, sub []int32) (*edgeSet, error) {
	if len(sub) >= math.MaxInt32 {
		return nil, fmt.Errorf("graph: %d items, more than an int32 index allows: %w", len(sub), ErrInvalidGraph)
	}
	set := newEdgeSet(2 * len(pos))
	n := int32(len(sub))
	for i, e := range pos {
		switch {
		case e.Src < 0 || e.Src >= n || e.Dst < 0 || e.Dst >= n:
			return nil, fmt.Errorf("graph: edge %d (%d→%d): item index outside [0, %d): %w", i, e.Src, e.Dst, n, ErrInvalidGraph)
		case e.Src == e.Dst:
			return nil, fmt.Errorf("graph: edge %d (%d→%d): self loop: %w", i, e.Src, e.Dst, ErrInvalidGraph)
		case sub[e.Src] == sub[e.Dst]:
			return nil, fmt.Errorf("graph: edge %d (%d→%d): both ends in subcategory %d: %w", i, e.Src, e.Dst, sub[e.Src], ErrInvalidGraph)
		}
		if !set.add(key(e.Src, e.Dst)) {
			return nil, fmt.Errorf("graph: edge %d (%d→%d): duplicate pair: %w", i, e.Src, e.Dst, ErrInvalidGraph)
		}
	}
	return set, nil
}

// edgesOfSortedKeys sorts keys, which orders them by (Src, Dst), and decodes
// them.
func edgesOfSortedKeys(keys []uint64) []Edge {
	slices.Sort(keys)
	out := make([]Edge, len(keys))
	for i, k := range keys {
		out[i] = edgeOf(k)
	}
	return out
}

func compareEdges(x, y Edge) int {
	if x.Src != y.Src {
		return int(x.Src) - int(y.Src)
	}
	return int(x.Dst) - int(y.Dst)
}

// How many attempts ahead the main phase prefetches a pair's arcs, and then
// the set slots of the pairs it would create and remove; measured best on a
// third of Women's size (1.45 s, against 3.8 s without prefetching, CPU
// time). Keys need the arcs in cache, so keyAhead < arcAhead < 16.
const arcAhead, keyAhead = 8, 3

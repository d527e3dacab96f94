package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

var propertyShapes = []struct {
	name  string
	shape shape
	// Bounds on the stats (fractions of |R|).
	maxNeverSwitched, maxDropped float64
}{
	{name: "uniform", shape: shape{items: 2000, edges: 10_000, subs: 20}, maxNeverSwitched: 0.001},
	{name: "power-law", shape: shape{items: 20_000, edges: 60_000, subs: 40, alpha: 0.8, subAlpha: 0.7}, maxNeverSwitched: 0.001},
	{name: "steep power-law", shape: shape{items: 5000, edges: 30_000, subs: 40, alpha: 1, subAlpha: 0.7}, maxNeverSwitched: 0.01},
	// Hubs that list or are listed by most items cannot all keep their
	// degree with pairs outside R: some pairs must be dropped.
	{name: "saturated hubs", shape: shape{items: 5000, edges: 30_000, subs: 40, alpha: 1.5, subAlpha: 1}, maxNeverSwitched: 0.5, maxDropped: 0.2},
	{name: "star-heavy", shape: shape{items: 2000, edges: 10_000, subs: 10, hubs: 5, hubShare: 0.5}, maxNeverSwitched: 0.2, maxDropped: 0.01},
	{name: "two subcategories", shape: shape{items: 1000, edges: 5000, subs: 2}, maxNeverSwitched: 0.01},
	{name: "two skewed subcategories", shape: shape{items: 1000, edges: 5000, subs: 2, subAlpha: 3}, maxNeverSwitched: 0.05, maxDropped: 0.01},
	{name: "dense", shape: shape{items: 100, edges: 2000, subs: 4}, maxNeverSwitched: 0.05, maxDropped: 0.01},
}

func TestRewireProperties(t *testing.T) {
	for _, tc := range propertyShapes {
		t.Run(tc.name, func(t *testing.T) {
			pos, sub := genGraph(tc.shape, rand.New(rand.NewPCG(7, 7)))
			neg, st, err := Rewire(context.Background(), pos, sub, rand.New(rand.NewPCG(1, 1)), RewireOptions{MaxDropFraction: -1})
			if err != nil {
				t.Fatal(err)
			}
			checkNegatives(t, pos, neg, st.DroppedEdges, sub, true)
			m := float64(len(pos))
			t.Logf("|R| %d: attempts %d accepted %d (%.1f%%), never switched %d (%.3f%%), clean-up %d/%d, dropped %d; rejected self %d sub %d exists %d",
				len(pos), st.Attempts, st.Accepted, 100*float64(st.Accepted)/float64(st.Attempts),
				st.NeverSwitched, 100*st.NeverSwitchedFraction(), st.CleanupAccepted, st.CleanupAttempts, st.Dropped,
				st.RejectedSelfLoop, st.RejectedSameSub, st.RejectedExists)
			switch {
			case st.Edges != len(pos) || st.Dropped != len(st.DroppedEdges) || len(neg) != len(pos)-st.Dropped:
				t.Errorf("stats %+v do not add up with |R| %d, |R̄| %d", st, len(pos), len(neg))
			case st.Attempts != st.Accepted+st.RejectedSelfLoop+st.RejectedSameSub+st.RejectedExists:
				t.Errorf("attempts %d != accepted + rejected", st.Attempts)
			case st.CleanupAccepted < 0 || st.CleanupAccepted > st.CleanupAttempts ||
				(st.NeverSwitched > st.Dropped) != (st.CleanupAccepted > 0):
				// The clean-up phase switched something iff it left fewer
				// pairs of R than the main phase did.
				t.Errorf("clean-up accepted %d of %d attempts; never switched %d, dropped %d",
					st.CleanupAccepted, st.CleanupAttempts, st.NeverSwitched, st.Dropped)
			case st.Attempts-st.CleanupAttempts != DefaultSwapsPerEdge*len(pos):
				t.Errorf("main phase made %d attempts, want %d", st.Attempts-st.CleanupAttempts, DefaultSwapsPerEdge*len(pos))
			case st.NeverSwitchedFraction() > tc.maxNeverSwitched:
				t.Errorf("never switched %.4f of R, want ≤ %g", st.NeverSwitchedFraction(), tc.maxNeverSwitched)
			case float64(st.Dropped) > tc.maxDropped*m:
				t.Errorf("dropped %d of %d, want ≤ %g", st.Dropped, len(pos), tc.maxDropped)
			}
		})
	}
}

func TestRewireDeterministic(t *testing.T) {
	pos, sub := genGraph(shape{items: 3000, edges: 15_000, subs: 30, alpha: 1}, rand.New(rand.NewPCG(3, 3)))
	run := func(seed uint64) ([]Edge, RewireStats) {
		neg, st, err := Rewire(context.Background(), pos, sub, rand.New(rand.NewPCG(seed, 1)), RewireOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return neg, st
	}
	a, sa := run(1)
	b, sb := run(1)
	c, _ := run(2)
	if !slices.Equal(a, b) || sa.Attempts != sb.Attempts || sa.Accepted != sb.Accepted {
		t.Error("same seed gave different negatives")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds gave the same negatives")
	}
	// The input must not be modified.
	again, _ := genGraph(shape{items: 3000, edges: 15_000, subs: 30, alpha: 1}, rand.New(rand.NewPCG(3, 3)))
	if !slices.Equal(pos, again) {
		t.Error("Rewire modified its input")
	}
}

// TestRewireImpossible: graphs with no valid switch (or too few) end with
// drops and ErrIncomplete, quickly.
func TestRewireImpossible(t *testing.T) {
	// Item 0 alone in subcategory 1; every edge touches it, and any switch
	// makes a self loop or a pair inside subcategory 0.
	star := func(n int) ([]Edge, []int32) {
		sub := make([]int32, n)
		sub[0] = 1
		var pos []Edge
		for i := 1; i < n; i++ {
			pos = append(pos, Edge{0, int32(i)}, Edge{int32(i), 0})
		}
		return pos, sub
	}
	starPos, starSub := star(500)
	cases := []struct {
		name        string
		pos         []Edge
		sub         []int32
		opts        RewireOptions
		wantDropped int
		wantErr     error
	}{
		{name: "star, one item alone", pos: starPos, sub: starSub, wantDropped: len(starPos), wantErr: ErrIncomplete},
		{name: "star, drops allowed", pos: starPos, sub: starSub, opts: RewireOptions{MaxDropFraction: -1}, wantDropped: len(starPos)},
		{name: "star, small budget", pos: starPos, sub: starSub, opts: RewireOptions{SwapsPerEdge: 1, ExtraAttempts: 10}, wantDropped: len(starPos), wantErr: ErrIncomplete},
		{name: "one edge", pos: []Edge{{0, 1}}, sub: []int32{0, 1}, wantDropped: 1, wantErr: ErrIncomplete},
		// The smallest graph that rewires: (0,1), (2,3) become (0,3), (2,1).
		{name: "two switchable edges", pos: []Edge{{0, 1}, {2, 3}}, sub: []int32{0, 1, 2, 3}},
		// Two edges between two items: switching gives self loops.
		{name: "two items", pos: []Edge{{0, 1}, {1, 0}}, sub: []int32{0, 1}, wantDropped: 2, wantErr: ErrIncomplete},
		{name: "empty", sub: []int32{0, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			neg, st, err := Rewire(context.Background(), tc.pos, tc.sub, rand.New(rand.NewPCG(1, 1)), tc.opts)
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if st.Dropped != tc.wantDropped {
				t.Errorf("dropped %d, want %d", st.Dropped, tc.wantDropped)
			}
			checkNegatives(t, tc.pos, neg, st.DroppedEdges, tc.sub, true)
			if len(tc.pos) >= 2 && st.Attempts-st.CleanupAttempts != cmp.Or(tc.opts.SwapsPerEdge, DefaultSwapsPerEdge)*len(tc.pos) {
				t.Errorf("main phase made %d attempts, want SwapsPerEdge × |R|", st.Attempts-st.CleanupAttempts)
			}
			if want := 100 * float64(st.Dropped) / float64(max(1, len(tc.pos))); err != nil &&
				!strings.Contains(err.Error(), fmt.Sprintf("%d of %d pairs still in R after %d clean-up attempts (%.3g%%, limit 0.1%%)",
					st.Dropped, len(tc.pos), st.CleanupAttempts, want)) {
				t.Errorf("error %q does not give the drops as counted", err)
			}
			// "Quickly" is the documented attempt budget, counted rather
			// than timed: a loaded machine cannot fail it, a loop can.
			swaps := cmp.Or(tc.opts.SwapsPerEdge, DefaultSwapsPerEdge)
			budget := cmp.Or(tc.opts.ExtraAttempts, swaps*len(tc.pos)+1_000_000)
			if st.Attempts > swaps*len(tc.pos)+budget {
				t.Errorf("%d attempts, more than the budget %d + %d", st.Attempts, swaps*len(tc.pos), budget)
			}
			if err != nil {
				t.Log(err)
			}
		})
	}
}

func TestRewireInvalid(t *testing.T) {
	sub := []int32{0, 1, 1, 2}
	cases := []struct {
		name string
		pos  []Edge
		opts RewireOptions
	}{
		{name: "index too large", pos: []Edge{{0, 4}}},
		{name: "negative index", pos: []Edge{{-1, 0}}},
		{name: "self loop", pos: []Edge{{2, 2}}},
		{name: "same subcategory", pos: []Edge{{1, 2}}},
		{name: "duplicate", pos: []Edge{{0, 1}, {0, 2}, {0, 1}}},
		{name: "negative swaps", pos: []Edge{{0, 1}}, opts: RewireOptions{SwapsPerEdge: -1}},
		{name: "negative budget", pos: []Edge{{0, 1}}, opts: RewireOptions{ExtraAttempts: -1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			neg, _, err := Rewire(context.Background(), tc.pos, sub, rand.New(rand.NewPCG(1, 1)), tc.opts)
			if err == nil || neg != nil {
				t.Fatalf("got %v, %v; want an error", neg, err)
			}
			if !errors.Is(err, ErrInvalidGraph) && !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("err = %v, want ErrInvalidGraph", err)
			}
			t.Log(err)
		})
	}
}

func TestRewireProgress(t *testing.T) {
	pos, sub := genGraph(shape{items: 1000, edges: 60_000, subs: 20}, rand.New(rand.NewPCG(5, 5)))
	var calls int
	var last, lastTotal int64
	_, st, err := Rewire(context.Background(), pos, sub, rand.New(rand.NewPCG(1, 1)), RewireOptions{Progress: func(done, total int64) {
		calls++
		if done < last {
			t.Errorf("progress went back from %d to %d", last, done)
		}
		last, lastTotal = done, total
	}})
	if err != nil {
		t.Fatal(err)
	}
	if calls < 2 || last != lastTotal || last != int64(st.Attempts) {
		t.Errorf("%d calls, last %d/%d, attempts %d", calls, last, lastTotal, st.Attempts)
	}
}

// refRewire is Rewire written plainly, with a Go map and no prefetching; it
// draws the same random numbers in the same order, so it must give the same
// negatives.
func refRewire(pos []Edge, sub []int32, rng *rand.Rand, swaps, extra int) (neg, dropped []Edge) {
	m := len(pos)
	cur := slices.Clone(pos)
	orig := make([]bool, m)
	taken := make(map[Edge]bool)
	for i, e := range pos {
		orig[i] = true
		taken[e] = true
	}
	try := func(i, j int) bool {
		a, b, c, d := cur[i].Src, cur[i].Dst, cur[j].Src, cur[j].Dst
		ad, cb := Edge{a, d}, Edge{c, b}
		if a == d || c == b || sub[a] == sub[d] || sub[c] == sub[b] || taken[ad] || taken[cb] {
			return false
		}
		for _, k := range []int{i, j} {
			if !orig[k] {
				delete(taken, cur[k])
			}
			orig[k] = false
		}
		taken[ad], taken[cb] = true, true
		cur[i], cur[j] = ad, cb
		return true
	}
	partner := func(i int) int {
		j := rng.IntN(m - 1)
		if j >= i {
			j++
		}
		return j
	}
	for range swaps * m {
		i := rng.IntN(m)
		try(i, partner(i))
	}
	var stuck []int
	for i := range orig {
		if orig[i] {
			stuck = append(stuck, i)
		}
	}
	for n := 0; len(stuck) > 0 && n < extra; {
		k := rng.IntN(len(stuck))
		if i := stuck[k]; orig[i] {
			n++
			if !try(i, partner(i)) {
				continue
			}
		}
		stuck[k] = stuck[len(stuck)-1] // the same swap-removal as Rewire
		stuck = stuck[:len(stuck)-1]
	}
	for i, e := range cur {
		if orig[i] {
			dropped = append(dropped, e)
		} else {
			neg = append(neg, e)
		}
	}
	slices.SortFunc(neg, compareEdges)
	slices.SortFunc(dropped, compareEdges)
	return neg, dropped
}

func TestRewireMatchesReference(t *testing.T) {
	cases := []struct {
		name         string
		shape        shape
		swaps, extra int
	}{
		{name: "power-law", shape: shape{items: 3000, edges: 12_000, subs: 20, alpha: 1}, swaps: 20, extra: 1_000_000},
		{name: "star-heavy, clean-up", shape: shape{items: 500, edges: 3000, subs: 5, hubs: 3, hubShare: 0.6}, swaps: 3, extra: 50_000},
		{name: "tiny", shape: shape{items: 10, edges: 12, subs: 3}, swaps: 5, extra: 100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pos, sub := genGraph(tc.shape, rand.New(rand.NewPCG(2, 2)))
			neg, st, _ := Rewire(context.Background(), pos, sub, rand.New(rand.NewPCG(1, 1)), RewireOptions{SwapsPerEdge: tc.swaps, ExtraAttempts: tc.extra})
			wantNeg, wantDropped := refRewire(pos, sub, rand.New(rand.NewPCG(1, 1)), tc.swaps, tc.extra)
			if !slices.Equal(neg, wantNeg) || !slices.Equal(st.DroppedEdges, wantDropped) {
				t.Fatalf("Rewire and the reference differ: %d/%d negatives, %d/%d dropped", len(neg), len(wantNeg), st.Dropped, len(wantDropped))
			}
			t.Logf("never switched %d, clean-up %d/%d, dropped %d", st.NeverSwitched, st.CleanupAccepted, st.CleanupAttempts, st.Dropped)
		})
	}
}

// Rewire stops with the context's error: before any attempt when the context
// is already done, and within ctxEvery attempts of a cancel in either phase
// (cancelled here from the progress hook, so no timer is involved).
func TestRewireCancel(t *testing.T) {
	pos, sub := genGraph(shape{items: 1000, edges: 60_000, subs: 20}, rand.New(rand.NewPCG(5, 5)))
	total := int64(DefaultSwapsPerEdge) * int64(len(pos))
	for _, tc := range []struct {
		name  string
		swaps int
		at    func(done, total int64) bool // cancel at this progress report
		// attempts made when Rewire returns lie in [lo, lo+ctxEvery]
		lo int64
	}{
		{name: "before", at: nil, lo: 0},
		{name: "main phase", at: func(done, _ int64) bool { return done == 1<<20 }, lo: 1 << 20},
		{name: "clean-up phase", swaps: 1, at: func(done, total int64) bool { return done == total },
			lo: int64(len(pos))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.at == nil {
				cancel()
			}
			cancelled := tc.at == nil
			neg, st, err := Rewire(ctx, pos, sub, rand.New(rand.NewPCG(1, 1)), RewireOptions{SwapsPerEdge: tc.swaps,
				Progress: func(done, total int64) {
					if !cancelled && tc.at(done, total) {
						cancel()
						cancelled = true
					}
				}})
			if !errors.Is(err, context.Canceled) || neg != nil {
				t.Fatalf("got %d negatives, %v; want none, context.Canceled", len(neg), err)
			}
			if a := int64(st.Attempts); a < tc.lo || a > tc.lo+ctxEvery {
				t.Errorf("%d attempts, want within [%d, %d] (a full run makes %d)", a, tc.lo, tc.lo+ctxEvery, total)
			}
		})
	}
}

// TestCheckRewired: Rewire's own check of its result names each broken
// guarantee (a switch that moves one end only breaks degrees).
func TestCheckRewired(t *testing.T) {
	sub := []int32{0, 0, 1, 1}
	pos := []Edge{{0, 2}, {1, 3}}
	cases := []struct {
		name     string
		neg, drp []Edge
		want     string // in the error; "" for none
	}{
		{name: "switched", neg: []Edge{{0, 3}, {1, 2}}},
		{name: "all dropped", drp: pos},
		{name: "one end moved", neg: []Edge{{0, 3}, {1, 3}}, want: "item 2 has in-degree 1 more"},
		{name: "inside a subcategory", neg: []Edge{{0, 1}, {2, 3}}, want: "inside subcategory 0"},
		{name: "self loop", neg: []Edge{{0, 0}, {1, 3}}, want: "self loop"},
		{name: "twice", neg: []Edge{{0, 3}, {0, 3}}, want: "twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkRewired(pos, tc.neg, tc.drp, sub)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("err = %v, want none", err)
			case tc.want != "" && (!errors.Is(err, ErrBroken) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want ErrBroken naming %q", err, tc.want)
			}
		})
	}
}

func TestNeverSwitchedFraction(t *testing.T) {
	if f := (RewireStats{}).NeverSwitchedFraction(); f != 0 {
		t.Errorf("empty graph: %v, want 0", f)
	}
	if f := (RewireStats{Edges: 8, NeverSwitched: 2}).NeverSwitchedFraction(); f != 0.25 {
		t.Errorf("2 of 8: %v, want 0.25", f)
	}
}

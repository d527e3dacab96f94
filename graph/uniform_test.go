package graph

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"monomer/internal/ctxtest"
)

func TestUniformProperties(t *testing.T) {
	cases := []struct {
		name           string
		shape          shape
		wantEnumerated bool
	}{
		{name: "power-law", shape: shape{items: 5000, edges: 20_000, subs: 40, alpha: 0.8, subAlpha: 0.7}},
		{name: "star-heavy", shape: shape{items: 2000, edges: 10_000, subs: 10, hubs: 5, hubShare: 0.5}},
		{name: "two subcategories", shape: shape{items: 1000, edges: 5000, subs: 2}},
		// 100 items in 4 subcategories hold about 7,400 cross pairs: few
		// enough to list.
		{name: "dense", shape: shape{items: 100, edges: 2000, subs: 4}, wantEnumerated: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pos, sub := genGraph(tc.shape, rand.New(rand.NewPCG(7, 7)))
			neg, st, err := Uniform(context.Background(), pos, sub, rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				t.Fatal(err)
			}
			checkNegatives(t, pos, neg, nil, sub, false)
			if st.Enumerated != tc.wantEnumerated || st.Edges != len(pos) {
				t.Errorf("stats %+v", st)
			}
			if !st.Enumerated && st.Attempts < len(pos) {
				t.Errorf("%d attempts for %d negatives", st.Attempts, len(pos))
			}
			again, _, _ := Uniform(context.Background(), pos, sub, rand.New(rand.NewPCG(1, 1)))
			other, _, _ := Uniform(context.Background(), pos, sub, rand.New(rand.NewPCG(2, 1)))
			if !slices.Equal(neg, again) || slices.Equal(neg, other) {
				t.Error("same seed must give the same negatives, another seed others")
			}
		})
	}
}

func TestUniformImpossible(t *testing.T) {
	cases := []struct {
		name string
		pos  []Edge
		sub  []int32
	}{
		// Item 0 alone in subcategory 1: the only cross pairs are R itself.
		{name: "star", pos: []Edge{{0, 1}, {1, 0}, {0, 2}, {2, 0}}, sub: []int32{1, 0, 0}},
		// Three items in three subcategories have 6 cross pairs, and R takes
		// 4 of them: 2 left for 4 negatives.
		{name: "too dense", pos: []Edge{{0, 1}, {0, 2}, {1, 0}, {2, 0}}, sub: []int32{0, 1, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			neg, _, err := Uniform(context.Background(), tc.pos, tc.sub, rand.New(rand.NewPCG(1, 1)))
			if !errors.Is(err, ErrIncomplete) || neg != nil {
				t.Fatalf("got %v, %v; want ErrIncomplete", neg, err)
			}
			t.Log(err)
		})
	}
	// Exactly enough candidates: all of them are taken.
	pos := []Edge{{0, 1}, {0, 2}, {1, 2}}
	neg, st, err := Uniform(context.Background(), pos, []int32{0, 1, 2}, rand.New(rand.NewPCG(1, 1)))
	if err != nil || !slices.Equal(neg, []Edge{{1, 0}, {2, 0}, {2, 1}}) || !st.Enumerated {
		t.Errorf("got %v, %+v, %v", neg, st, err)
	}
}

// TestCrossPairs checks that crossPairs.at maps [0, total) one to one onto
// the ordered cross-subcategory pairs of active items.
func TestCrossPairs(t *testing.T) {
	sub := []int32{5, 2, 5, 9, 2, 2, 7, 5, 9, -1}
	pos := []Edge{{0, 1}, {3, 2}, {4, 6}, {7, 8}, {9, 0}} // item 5 has no edge
	cp := newCrossPairs(pos, sub)
	want := map[Edge]bool{}
	for x := range sub {
		for y := range sub {
			if x != 5 && y != 5 && sub[x] != sub[y] {
				want[Edge{int32(x), int32(y)}] = true
			}
		}
	}
	if cp.total != uint64(len(want)) {
		t.Fatalf("total %d, want %d", cp.total, len(want))
	}
	for r := range cp.total {
		x, y := cp.at(r)
		e := Edge{x, y}
		if !want[e] {
			t.Fatalf("at(%d) = %v: not a cross pair, or repeated", r, e)
		}
		delete(want, e)
	}
}

// TestUniformIsUniform: on a graph too large to enumerate, every free cross
// pair is drawn about equally often.
func TestUniformIsUniform(t *testing.T) {
	// 600 items in subcategories of 300, 200 and 100 (so a wrong weighting
	// of subcategories shows): 220,000 cross pairs, > 3·|R| + 2^16.
	sub := make([]int32, 600)
	for i := range sub {
		switch {
		case i >= 500:
			sub[i] = 2
		case i >= 300:
			sub[i] = 1
		}
	}
	rng := rand.New(rand.NewPCG(4, 4))
	var pos []Edge
	set := newEdgeSet(60_000)
	for len(pos) < 50_000 {
		a, b := rng.Int32N(600), rng.Int32N(600)
		if sub[a] != sub[b] && set.add(key(a, b)) {
			pos = append(pos, Edge{a, b})
		}
	}
	// Count draws of a fixed sample of free pairs per subcategory pair.
	hits := map[[2]int32]int{}
	runs := 20
	for r := range runs {
		neg, st, err := Uniform(context.Background(), pos, sub, rand.New(rand.NewPCG(uint64(r), 9)))
		if err != nil || st.Enumerated {
			t.Fatal(err, st.Enumerated)
		}
		for _, e := range neg {
			hits[[2]int32{sub[e.Src], sub[e.Dst]}]++
		}
	}
	// Free pairs per subcategory pair, and the expected share of draws.
	free := map[[2]int32]float64{}
	var total float64
	for x := range int32(600) {
		for y := range int32(600) {
			if sub[x] != sub[y] && !set.has(key(x, y)) {
				free[[2]int32{sub[x], sub[y]}]++
				total++
			}
		}
	}
	n := float64(runs * len(pos))
	for k, f := range free {
		want := n * f / total
		if got := float64(hits[k]); math.Abs(got-want) > 5*math.Sqrt(want) {
			t.Errorf("subcategories %v: %v draws, want %.0f", k, got, want)
		}
	}
}

// TestUniformCancel: Uniform returns ctx.Err() and no negatives before any
// work, and at its first check inside each loop (drawing, and listing the
// candidates of a dense graph).
func TestUniformCancel(t *testing.T) {
	for _, tc := range []struct {
		name       string
		shape      shape
		live       int // Err calls that report a live context
		enumerated bool
	}{
		{name: "before", shape: shape{items: 5000, edges: 20_000, subs: 40}, live: 0},
		{name: "drawing", shape: shape{items: 5000, edges: 20_000, subs: 40}, live: 1},
		// About 30,000 cross pairs: listed, and more than ctxEvery of them.
		{name: "listing", shape: shape{items: 200, edges: 8000, subs: 4}, live: 1, enumerated: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pos, sub := genGraph(tc.shape, rand.New(rand.NewPCG(7, 7)))
			if _, st, err := Uniform(context.Background(), pos, sub, rand.New(rand.NewPCG(1, 1))); err != nil || st.Enumerated != tc.enumerated {
				t.Fatalf("uncancelled: enumerated %v, %v; want %v", st.Enumerated, err, tc.enumerated)
			}
			ctx := ctxtest.After(tc.live)
			neg, st, err := Uniform(ctx, pos, sub, rand.New(rand.NewPCG(1, 1)))
			if !errors.Is(err, context.Canceled) || neg != nil {
				t.Fatalf("got %d negatives, %v; want none, context.Canceled", len(neg), err)
			}
			if tc.name == "drawing" && st.Attempts != ctxEvery-1 {
				t.Errorf("stopped after %d draws, want %d (the first check)", st.Attempts, ctxEvery-1)
			}
		})
	}
}

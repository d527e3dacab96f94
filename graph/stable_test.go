package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// stableWorld is n positives and n negatives over ids "i<k>", with the key
// SplitPairsStable is given in the split stage.
func stableWorld(n int, base int32) (pos, neg []Edge, key func(Edge) uint64) {
	pos, neg = seqEdges(n, base), seqEdges(n, base+1_000_000)
	key = func(e Edge) uint64 {
		return PairKey(7, fmt.Sprint("i", e.Src), fmt.Sprint("i", e.Dst))
	}
	return pos, neg, key
}

func splitOf(pairs []Pair) map[Pair]Split {
	m := make(map[Pair]Split, len(pairs))
	for _, p := range pairs {
		s := p.Split
		p.Split = 0
		m[p] = s
	}
	return m
}

// The shares are 80/10/10 within binomial noise, every split has both
// labels, rows come in split order, and the stats count the rows.
func TestSplitPairsStableShares(t *testing.T) {
	pos, neg, key := stableWorld(20_000, 0)
	pairs, st := SplitPairsStable(pos, neg, key, 0)
	n := float64(len(pos) + len(neg))
	for s, want := range []float64{0.8, 0.1, 0.1} {
		sd := math.Sqrt(n * want * (1 - want))
		if d := math.Abs(float64(st.Pairs[s]) - n*want); d > 4*sd {
			t.Errorf("split %d: %d pairs, want %.0f ± %.0f", s, st.Pairs[s], n*want, 4*sd)
		}
	}
	if !st.Usable() || st.Discarded != 0 || len(pairs) != int(n) {
		t.Fatalf("stats %+v, %d rows", st, len(pairs))
	}
	var related [3]int
	for i, p := range pairs {
		if i > 0 && p.Split < pairs[i-1].Split {
			t.Fatalf("row %d: split %v after %v", i, p.Split, pairs[i-1].Split)
		}
		if p.Label {
			related[p.Split]++
		}
	}
	if related != st.Related {
		t.Fatalf("related %v, stats %v", related, st.Related)
	}
}

// What the split is for: a pair in two nights' runs is in the same split
// in both, whatever pairs came and went between them, and the two
// directions of a pair share one. The rows do not depend on the order the
// pairs came in.
func TestSplitPairsStableAcrossNights(t *testing.T) {
	pos, neg, key := stableWorld(5_000, 0)
	day1, _ := SplitPairsStable(pos, neg, key, 0)
	// Night two: 10 % of each label gone, 5 % new, reversed directions
	// added, and the rest given in another order.
	rng := rand.New(rand.NewPCG(3, 3))
	var pos2, neg2 []Edge
	for _, e := range pos {
		if rng.Float64() >= 0.1 {
			pos2 = append(pos2, e)
		}
	}
	for _, e := range neg {
		if rng.Float64() >= 0.1 {
			neg2 = append(neg2, e)
		}
	}
	pos2 = append(pos2, seqEdges(250, 500_000)...)
	neg2 = append(neg2, seqEdges(250, 1_500_000)...)
	for _, e := range pos[:100] {
		pos2 = append(pos2, Edge{e.Dst, e.Src})
	}
	rng.Shuffle(len(pos2), func(i, j int) { pos2[i], pos2[j] = pos2[j], pos2[i] })
	day2, _ := SplitPairsStable(pos2, neg2, key, 0)
	s1, s2 := splitOf(day1), splitOf(day2)
	common := 0
	for p, s := range s2 {
		if was, ok := s1[p]; ok {
			common++
			if was != s {
				t.Fatalf("pair %+v: split %v on day 1, %v on day 2", p, was, s)
			}
		}
		if p.Label {
			if back, ok := s2[Pair{X: p.Y, Y: p.X, Label: true}]; ok && back != s {
				t.Fatalf("pair %+v in %v, its reverse in %v", p, s, back)
			}
		}
	}
	if common < 8_000 {
		t.Fatalf("only %d pairs in both nights", common)
	}
	// Order: the same pairs in any order give the same rows.
	shuffled := slices.Clone(pos2)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	a, _ := SplitPairsStable(pos2, neg2, key, 0)
	b, _ := SplitPairsStable(shuffled, neg2, key, 0)
	if !slices.Equal(a, b) {
		t.Fatal("rows depend on the order of the positives")
	}
}

// Under the cap, the kept pairs are about 1.25 × cap, training about the
// cap, and a pair kept on two nights is in the same split on both.
func TestSplitPairsStableCapped(t *testing.T) {
	pos, neg, key := stableWorld(10_000, 0)
	pairs, st := SplitPairsStable(pos, neg, key, 4_000)
	if !st.Capped {
		t.Fatal("not capped")
	}
	kept := float64(len(pairs))
	if math.Abs(kept-5_000) > 4*math.Sqrt(5_000) || st.Discarded != 20_000-len(pairs) {
		t.Fatalf("kept %v pairs of 20,000 (want about 5,000), discarded %d", kept, st.Discarded)
	}
	if d := math.Abs(float64(st.Pairs[Train]) - 4_000); d > 4*math.Sqrt(4_000) {
		t.Fatalf("train %d, want about 4,000", st.Pairs[Train])
	}
	more, _ := SplitPairsStable(append(slices.Clone(pos), seqEdges(500, 700_000)...), neg, key, 4_000)
	s1 := splitOf(pairs)
	for p, s := range splitOf(more) {
		if was, ok := s1[p]; ok && was != s {
			t.Fatalf("pair %+v: split %v, then %v", p, was, s)
		}
	}
}

// PairKey is of the unordered pair and moves with its salt.
func TestPairKey(t *testing.T) {
	if PairKey(1, "a", "b") != PairKey(1, "b", "a") {
		t.Fatal("PairKey depends on the order of its ids")
	}
	if PairKey(1, "a", "b") == PairKey(2, "a", "b") || PairKey(1, "ab", "c") == PairKey(1, "a", "bc") {
		t.Fatal("PairKey collides")
	}
	if ItemKey(1, "a") == ItemKey(2, "a") {
		t.Fatal("ItemKey ignores its salt")
	}
}

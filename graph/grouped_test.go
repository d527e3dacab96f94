package graph

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestReverseInTrain: the share of test positives whose reverse is a
// training positive, on a graph worked out by hand.
func TestReverseInTrain(t *testing.T) {
	p := func(x, y int32, label bool, s Split) Pair { return Pair{X: x, Y: y, Label: label, Split: s} }
	pairs := []Pair{
		p(1, 2, true, Train), p(3, 4, true, Train), p(5, 6, true, Valid), p(7, 8, false, Train),
		p(2, 1, true, Test),  // reverse in training
		p(4, 3, true, Test),  // reverse in training
		p(6, 5, true, Test),  // reverse in validation only
		p(8, 7, true, Test),  // reverse a training negative
		p(1, 2, true, Test),  // the same direction, not the reverse
		p(2, 1, false, Test), // a negative: not counted
	}
	r := ReverseInTrain(pairs)
	if r.TestPositives != 5 || r.ReverseInTrain != 2 || r.Share != 0.4 {
		t.Errorf("%+v, want 2 of 5 test positives (0.4)", r)
	}
	if r := ReverseInTrain(pairs[:4]); r.TestPositives != 0 || !math.IsNaN(r.Share) {
		t.Errorf("no test positives: %+v, want share NaN", r)
	}
}

// TestSplitPairsGrouped: the two directions of a pair always share a
// split, the splits keep SplitPairs' sizes within a pair per boundary, and
// every pair is dealt once (or discarded under the cap).
func TestSplitPairsGrouped(t *testing.T) {
	// Positives: 300 relations given both ways and 200 one way; negatives
	// 500, a fifth of them both ways.
	var pos, neg []Edge
	for i := range int32(300) {
		pos = append(pos, Edge{i, i + 1000}, Edge{i + 1000, i})
	}
	for i := range int32(200) {
		pos = append(pos, Edge{i + 2000, i + 3000})
	}
	for i := range int32(100) {
		neg = append(neg, Edge{i + 4000, i + 5000}, Edge{i + 5000, i + 4000})
	}
	for i := range int32(600) {
		neg = append(neg, Edge{i + 6000, i + 7000})
	}
	// The paper's split does separate them: the test can fail.
	if paper, _ := SplitPairs(pos, neg, rand.New(rand.NewPCG(1, 1)), 0); ReverseInTrain(paper).ReverseInTrain == 0 {
		t.Error("SplitPairs put no reverse of a test positive in training: the data do not test grouping")
	}
	for _, tc := range []struct {
		name string
		cap  int
		seed uint64
	}{{"uncapped", 0, 1}, {"another seed", 0, 7}, {"capped", 700, 3}} {
		pairs, st := SplitPairsGrouped(pos, neg, rand.New(rand.NewPCG(tc.seed, 1)), tc.cap)
		want := SplitSizes(len(pos), len(neg), tc.cap)
		splitOf := map[Edge]Split{}
		var n [3]int
		for _, p := range pairs {
			e := Edge{p.X, p.Y}
			if _, dup := splitOf[e]; dup {
				t.Fatalf("%s: pair %v dealt twice", tc.name, e)
			}
			splitOf[e] = p.Split
			n[p.Split]++
		}
		for e, s := range splitOf {
			if r, ok := splitOf[Edge{e.Dst, e.Src}]; ok && r != s {
				t.Fatalf("%s: %v in %v, its reverse in %v", tc.name, e, s, r)
			}
		}
		if r := ReverseInTrain(pairs); r.ReverseInTrain != 0 {
			t.Errorf("%s: %d test positives with their reverse in training", tc.name, r.ReverseInTrain)
		}
		for s := range n {
			if n[s] != st.Pairs[s] {
				t.Errorf("%s: split %d has %d pairs, stats say %d", tc.name, s, n[s], st.Pairs[s])
			}
			// Two labels, each overshooting by at most one pair at each of
			// the two boundaries.
			if d := st.Pairs[s] - want.Pairs[s]; d < -4 || d > 4 {
				t.Errorf("%s: split %d has %d pairs, SplitPairs %d", tc.name, s, st.Pairs[s], want.Pairs[s])
			}
		}
		if len(pairs)+st.Discarded != len(pos)+len(neg) {
			t.Errorf("%s: %d pairs + %d discarded, want %d", tc.name, len(pairs), st.Discarded, len(pos)+len(neg))
		}
		if tc.cap == 0 && st.Discarded != 0 {
			t.Errorf("%s: %d discarded without a cap", tc.name, st.Discarded)
		}
	}
}

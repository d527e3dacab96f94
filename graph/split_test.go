package graph

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// seqEdges returns n distinct edges starting at item base.
func seqEdges(n int, base int32) []Edge {
	es := make([]Edge, n)
	for i := range es {
		es[i] = Edge{base + int32(i), base + int32(i) + 1}
	}
	return es
}

func TestSplitPairs(t *testing.T) {
	cases := []struct {
		name      string
		pos, neg  int
		trainCap  int
		wantPairs [3]int
		capped    bool
	}{
		{name: "even", pos: 500, neg: 500, wantPairs: [3]int{800, 100, 100}},
		{name: "rounding", pos: 10, neg: 9, wantPairs: [3]int{15, 2, 2}},
		{name: "drops", pos: 1000, neg: 990, wantPairs: [3]int{1592, 199, 199}},
		{name: "tiny", pos: 1, neg: 1, wantPairs: [3]int{2, 0, 0}},
		{name: "empty", wantPairs: [3]int{0, 0, 0}},
		{name: "cap exactly met", pos: 500, neg: 500, trainCap: 800, wantPairs: [3]int{800, 100, 100}},
		{name: "capped", pos: 500, neg: 500, trainCap: 400, wantPairs: [3]int{400, 50, 50}, capped: true},
		{name: "capped, odd", pos: 600, neg: 590, trainCap: 333, wantPairs: [3]int{333, 41, 42}, capped: true},
		{name: "capped, just", pos: 500, neg: 500, trainCap: 799, wantPairs: [3]int{799, 100, 100}, capped: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pos, neg := seqEdges(tc.pos, 0), seqEdges(tc.neg, 1_000_000)
			pairs, st := SplitPairs(pos, neg, rand.New(rand.NewPCG(1, 1)), tc.trainCap)
			if st.Pairs != tc.wantPairs || st.Capped != tc.capped {
				t.Fatalf("pairs per split %v capped %v, want %v %v", st.Pairs, st.Capped, tc.wantPairs, tc.capped)
			}
			kept := st.Pairs[0] + st.Pairs[1] + st.Pairs[2]
			if len(pairs) != kept || st.Discarded != tc.pos+tc.neg-kept {
				t.Fatalf("%d rows, %d discarded, stats %v", len(pairs), st.Discarded, st.Pairs)
			}
			// Rows in split order; labels as their source; no pair twice.
			seen := map[Pair]bool{}
			var related [3]int
			for i, p := range pairs {
				if i > 0 && p.Split < pairs[i-1].Split {
					t.Fatalf("row %d: split %v after %v", i, p.Split, pairs[i-1].Split)
				}
				e := Edge{p.X, p.Y}
				if p.Label != (e.Src < 1_000_000) {
					t.Fatalf("row %d %+v: wrong label", i, p)
				}
				p.Split = 0
				if seen[p] {
					t.Fatalf("row %d %+v: repeated", i, p)
				}
				seen[p] = true
				if p.Label {
					related[pairs[i].Split]++
				}
			}
			if related != st.Related {
				t.Errorf("related per split %v, stats say %v", related, st.Related)
			}
			// Label balance: each split holds the kept share of positives to
			// within one pair.
			for s, n := range st.Pairs {
				want := float64(n) * float64(tc.pos) / float64(max(1, tc.pos+tc.neg))
				if d := float64(related[s]) - want; d > 1 || d < -1 {
					t.Errorf("split %v: %d positives of %d, want %.1f", Split(s), related[s], n, want)
				}
			}
		})
	}
}

func TestSplitPairsDeterministic(t *testing.T) {
	pos, neg := seqEdges(3000, 0), seqEdges(3000, 1_000_000)
	a, _ := SplitPairs(pos, neg, rand.New(rand.NewPCG(1, 1)), 0)
	b, _ := SplitPairs(pos, neg, rand.New(rand.NewPCG(1, 1)), 0)
	c, _ := SplitPairs(pos, neg, rand.New(rand.NewPCG(2, 1)), 0)
	if !slices.Equal(a, b) {
		t.Error("same seed, different rows")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds, same rows")
	}
	// Another seed changes which pairs go to test, not only their order.
	test := func(ps []Pair) []Pair {
		var out []Pair
		for _, p := range ps {
			if p.Split == Test {
				out = append(out, p)
			}
		}
		slices.SortFunc(out, func(x, y Pair) int { return compareEdges(Edge{x.X, x.Y}, Edge{y.X, y.Y}) })
		return out
	}
	if slices.Equal(test(a), test(c)) {
		t.Error("different seeds, same test set")
	}
	// Within a split, labels are mixed rather than positives first.
	firstNeg := slices.IndexFunc(a, func(p Pair) bool { return !p.Label })
	if firstNeg > 20 {
		t.Errorf("first negative at row %d", firstNeg)
	}
}

// TestSplitMinimums: MinEdges positives (with as many negatives) are the
// fewest from which every split has a positive and a negative pair, as it
// has for every larger number; a train_cap of MinTrainCap and above keeps
// that for any number of half-positive pairs, and train_cap's declared
// minimum is MinTrainCap. SplitSizes is what SplitPairs splits.
func TestSplitMinimums(t *testing.T) {
	for e := 1; e <= 5000; e++ {
		if got, want := SplitSizes(e, e, 0).Usable(), e >= MinEdges; got != want {
			t.Fatalf("%d edges: usable %v, want %v", e, got, want)
		}
	}
	for c := 1; c <= 2000; c++ {
		usable := true
		for _, q := range []int{c, c + 1, 3 * c, 3*c + 1, 100 * c} {
			usable = usable && SplitSizes(q, q, c).Usable()
		}
		if usable != (c >= MinTrainCap) {
			t.Fatalf("train_cap %d: usable %v, want %v", c, usable, c >= MinTrainCap)
		}
	}
	f, _ := reflect.TypeFor[PairSettings]().FieldByName("TrainCap")
	if got := f.Tag.Get("min"); got != strconv.Itoa(MinTrainCap) {
		t.Errorf("train_cap's min tag %s, want MinTrainCap %d", got, MinTrainCap)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ p, q, cap int }{{9, 9, 0}, {40, 37, 0}, {500, 480, 100}} {
		pairs, st := SplitPairs(make([]Edge, c.p), make([]Edge, c.q), rng, c.cap)
		var n, pos [3]int
		for _, p := range pairs {
			n[p.Split]++
			if p.Label {
				pos[p.Split]++
			}
		}
		if want := SplitSizes(c.p, c.q, c.cap); st != want || n != want.Pairs || pos != want.Related {
			t.Errorf("%+v: SplitPairs %+v (%v pairs, %v positive), SplitSizes %+v", c, st, n, pos, want)
		}
	}
}

package graph

import (
	"math"
	"math/rand/v2"
)

// The split protocols a job may choose (PairSettings.Split).
const (
	// SplitPaper deals pairs one by one (SplitPairs): the paper's protocol,
	// under which the two directions of a relation given both ways can
	// land in different splits.
	SplitPaper = "paper"
	// SplitGrouped deals the two directions of a pair together
	// (SplitPairsGrouped).
	SplitGrouped = "grouped"
)

// ReverseShare counts the test positives (x, y) whose reverse (y, x) is a
// training positive, the share of the test set a model can answer by
// memorising the other direction (issue 55: 78.9 % of a real shop's test
// set, which moved LMT's error by 5.7 points). Share is NaN without test
// positives.
type ReverseShare struct {
	TestPositives, ReverseInTrain int
	Share                         float64
}

// ReverseInTrain measures ReverseShare on pairs.
func ReverseInTrain(pairs []Pair) ReverseShare {
	train := map[Edge]bool{}
	for _, p := range pairs {
		if p.Label && p.Split == Train {
			train[Edge{p.X, p.Y}] = true
		}
	}
	var r ReverseShare
	for _, p := range pairs {
		if p.Label && p.Split == Test {
			r.TestPositives++
			if train[Edge{p.Y, p.X}] {
				r.ReverseInTrain++
			}
		}
	}
	r.Share = math.NaN()
	if r.TestPositives > 0 {
		r.Share = float64(r.ReverseInTrain) / float64(r.TestPositives)
	}
	return r
}

// SplitPairsGrouped is SplitPairs with the pairs of each label grouped by
// their unordered ends, {x, y}: a relation given both ways is one group,
// and a group is dealt whole to train, validation or test, so no test pair
// has its reverse in training (of its own label). The groups of each label
// are shuffled and dealt in turn to the first split whose share of that
// label (SplitSizes' targets) is not yet full; a group of two at a
// boundary overshoots by one, so each split's count is within one pair per
// boundary of SplitPairs'. Groups left once the test split is full (under
// the cap) are discarded. The stats are of the pairs as dealt.
func SplitPairsGrouped(pos, neg []Edge, rng *rand.Rand, trainCap int) ([]Pair, SplitStats) {
	st := SplitSizes(len(pos), len(neg), trainCap)
	var parts [3][]Pair
	var dealt [3]int
	for _, label := range []bool{true, false} {
		es, target := pos, st.Related
		if !label {
			es = neg
			for s := range target {
				target[s] = st.Pairs[s] - st.Related[s]
			}
		}
		groups := groupEdges(es)
		for i := len(groups) - 1; i > 0; i-- { // Fisher-Yates, as shuffle
			j := rng.IntN(i + 1)
			groups[i], groups[j] = groups[j], groups[i]
		}
		s, placed, bound := 0, 0, target[0]
		for _, g := range groups {
			for s < 2 && placed >= bound {
				s++
				bound += target[s]
			}
			if placed >= bound {
				break // the test split is full: the rest are discarded
			}
			for _, e := range g {
				parts[s] = append(parts[s], Pair{X: e.Src, Y: e.Dst, Label: label, Split: Split(s)})
			}
			placed += len(g)
			if label {
				dealt[s] += len(g)
			}
		}
	}
	var out []Pair
	kept := 0
	for s := range parts {
		shuffle(parts[s], rng)
		out = append(out, parts[s]...)
		st.Pairs[s], st.Related[s] = len(parts[s]), dealt[s]
		kept += len(parts[s])
	}
	st.Discarded = len(pos) + len(neg) - kept
	return out, st
}

// groupEdges groups es by unordered ends, in the order of each group's
// first edge; an edge repeated stays in its group.
func groupEdges(es []Edge) [][]Edge {
	at := make(map[Edge]int, len(es))
	var groups [][]Edge
	for _, e := range es {
		k := e
		if k.Dst < k.Src {
			k = Edge{e.Dst, e.Src}
		}
		i, ok := at[k]
		if !ok {
			i = len(groups)
			at[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], e)
	}
	return groups
}

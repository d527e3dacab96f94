package graph

import "math/rand/v2"

// DefaultTrainCap is the paper's limit on training pairs (Section IV-A: "the
// training set being at most two million pairs").
const DefaultTrainCap = 2_000_000

// SplitStats reports what SplitPairs did. Arrays are indexed by Split.
type SplitStats struct {
	Positives, Negatives int // input sizes, |R| and |R̄|
	TrainCap             int // the cap in force
	// Capped is true when 80 % of the pairs would exceed TrainCap, so the
	// pairs were subsampled to 1.25 × TrainCap first; Discarded is how many
	// were left out.
	Capped    bool
	Discarded int
	Pairs     [3]int // rows per split
	Related   [3]int // positive rows per split
}

// SplitPairs labels R = pos and R̄ = neg, shuffles them with rng and splits
// them 80/10/10 into train, validation and test (paper Section IV-A). If 80 %
// of the pairs exceeds trainCap (0 means DefaultTrainCap), a random subset of
// 1.25 × trainCap pairs is kept first, so train has exactly trainCap pairs and
// the ratio holds.
//
// Split sizes: with T pairs kept, train has round(0.8·T) pairs, validation
// round(0.9·T) − round(0.8·T) and test the rest. Positives and negatives are
// shuffled separately and dealt to the splits by cumulative rounding, so
// every split (and the kept subset) has the input's share of positives to
// within one pair, and each split is a uniform random sample of each label.
//
// Rows come in split order (train, valid, test) and, within a split, in a
// random order (a prefix of a split is a random sample of it). The result
// depends only on the inputs (order included) and the state of rng. Pairs
// in both pos and neg are not detected.
func SplitPairs(pos, neg []Edge, rng *rand.Rand, trainCap int) ([]Pair, SplitStats) {
	st := SplitSizes(len(pos), len(neg), trainCap)
	ps := shuffledPairs(pos, true, rng)
	ns := shuffledPairs(neg, false, rng)
	out := make([]Pair, 0, st.Pairs[0]+st.Pairs[1]+st.Pairs[2])
	var prevAll, prevPos int
	for s := range st.Pairs {
		all, cpos := prevAll+st.Pairs[s], prevPos+st.Related[s]
		lo := len(out)
		out = append(out, ps[prevPos:cpos]...)
		out = append(out, ns[prevAll-prevPos:all-cpos]...)
		part := out[lo:]
		for i := range part {
			part[i].Split = Split(s)
		}
		shuffle(part, rng)
		prevAll, prevPos = all, cpos
	}
	return out, st
}

// SplitSizes is the SplitStats SplitPairs gives p positives and q
// negatives under trainCap, without the pairs: what a stage checks before
// it splits, and validation before it reads anything.
func SplitSizes(p, q, trainCap int) SplitStats {
	if trainCap <= 0 {
		trainCap = DefaultTrainCap
	}
	n := p + q
	st := SplitStats{Positives: p, Negatives: q, TrainCap: trainCap}

	// Cumulative split boundaries over the kept pairs.
	kept := n
	var cum [3]int // ends of train, valid, test
	if c := roundDiv(8*int64(n), 10); c > trainCap {
		st.Capped = true
		kept = min(n, int(roundDiv(10*int64(trainCap), 8)))
		rest := kept - trainCap
		cum = [3]int{trainCap, trainCap + rest/2, kept}
	} else {
		cum = [3]int{c, int(roundDiv(9*int64(n), 10)), n}
	}
	st.Discarded = n - kept
	var prevAll, prevPos int
	for s := range cum {
		// Positives among the first cum[s] kept rows: their share p/n of it.
		cpos := p
		if n > 0 {
			cpos = int(roundDiv(int64(cum[s])*int64(p), int64(n)))
		}
		st.Pairs[s], st.Related[s] = cum[s]-prevAll, cpos-prevPos
		prevAll, prevPos = cum[s], cpos
	}
	return st
}

// Usable reports whether every split has a positive and a negative pair:
// with fewer, a model trains on one label, λ is chosen on one, or the
// test error is 0 or 1 by construction.
func (st SplitStats) Usable() bool {
	for s := range st.Pairs {
		if st.Related[s] == 0 || st.Related[s] == st.Pairs[s] {
			return false
		}
	}
	return true
}

// MinEdges is the fewest positives that split usably (SplitStats.Usable)
// with as many negatives, as every larger number does (under no cap; a
// train_cap of at least MinTrainCap keeps it so).
const MinEdges = 9

// MinTrainCap is the smallest train_cap under which every split of a
// capped set of pairs, half positive, is usable: from 1.25·cap pairs the
// validation and test splits get 0.125·cap each.
const MinTrainCap = 14

// roundDiv is a/b rounded half up, for a ≥ 0, b > 0.
func roundDiv(a, b int64) int { return int((2*a + b) / (2 * b)) }

func shuffledPairs(es []Edge, label bool, rng *rand.Rand) []Pair {
	ps := make([]Pair, len(es))
	for i, e := range es {
		ps[i] = Pair{X: e.Src, Y: e.Dst, Label: label}
	}
	shuffle(ps, rng)
	return ps
}

// shuffle is Fisher-Yates with rng; written out so the order of draws is
// fixed here, not by a library's choice.
func shuffle(ps []Pair, rng *rand.Rand) {
	for i := len(ps) - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		ps[i], ps[j] = ps[j], ps[i]
	}
}

package graph

import (
	"cmp"
	"hash/fnv"
	"slices"
)

// SplitStable deals each pair by a hash of its two item ids
// (SplitPairsStable), so a pair keeps its split from one night's run to
// the next: a run warm-started from yesterday's (warm_from) is then tested
// on no pair yesterday's model trained on.
const SplitStable = "stable"

// PairKey is the 64-bit key SplitPairsStable deals a pair by: a hash of
// salt and the pair's two ids, in sorted order, so the two directions of a
// relation share a key (and a split, as under SplitGrouped). The ids are
// the items' own (ASINs or catalogue ids), not this run's indices, which
// move as items come and go; salt is drawn from the job's seed, so the
// key is the same every night the seed and the experiment's name are.
func PairKey(salt uint64, a, b string) uint64 {
	if b < a {
		a, b = b, a
	}
	return saltedKey(salt, a, "\x00", b)
}

// ItemKey is PairKey for one item: what cold_items draws by under a stable
// split, so an item held out tonight was held out last night too.
func ItemKey(salt uint64, id string) uint64 {
	return saltedKey(salt, "\x01", id) // the \x01 keeps it apart from every PairKey
}

// saltedKey is FNV-1a of salt's eight bytes and parts, finalised by mix64.
func saltedKey(salt uint64, parts ...string) uint64 {
	h := fnv.New64a()
	var s [8]byte
	for i := range s {
		s[i] = byte(salt >> (8 * i))
	}
	h.Write(s[:])
	for _, p := range parts {
		h.Write([]byte(p))
	}
	return mix64(h.Sum64())
}

// mix64 is SplitMix64's finaliser: FNV-1a's high bits change little for
// ids that differ in their last byte, and the split reads the high bits.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// KeyBelow reports whether key's fraction of 2³², its high 32 bits, is
// below share: a draw of probability share that the same key repeats.
func KeyBelow(key uint64, share float64) bool {
	return float64(key>>32) < share*(1<<32)
}

// SplitPairsStable labels R = pos and R̄ = neg and deals each pair by its
// key(e) alone: train when the high 32 bits of the key, as a fraction of
// 2³², are below 0.8, validation below 0.9, test above. A pair's split so
// depends on nothing but its key, so it is the same in every run whose
// pairs include it, whatever else came or went. The price is that the
// shares are 80/10/10 in expectation, not to the pair as SplitPairs'
// are (a binomial spread: one standard deviation is 95 pairs, 0.95 %, of
// a test split of 10,000 at 100,000 pairs).
//
// Under the cap (80 % of the pairs above trainCap, 0 meaning
// DefaultTrainCap) a pair is kept when its key's low 32 bits fall below
// SplitSizes' kept share, independent of its split, so a night with a few
// more pairs drops a few more but moves none to another split. Rows come
// in split order and within a split by key, a random order that is itself
// stable. The stats are of the pairs as dealt.
func SplitPairsStable(pos, neg []Edge, key func(Edge) uint64, trainCap int) ([]Pair, SplitStats) {
	st := SplitSizes(len(pos), len(neg), trainCap)
	n := len(pos) + len(neg)
	keep := 1.0
	if st.Capped && n > 0 {
		keep = float64(n-st.Discarded) / float64(n)
	}
	type keyed struct {
		k uint64
		p Pair
	}
	var parts [3][]keyed
	for _, label := range []bool{true, false} {
		es := pos
		if !label {
			es = neg
		}
		for _, e := range es {
			k := key(e)
			if keep < 1 && !KeyBelow(k<<32, keep) {
				continue
			}
			s := Test
			switch {
			case KeyBelow(k, 0.8):
				s = Train
			case KeyBelow(k, 0.9):
				s = Valid
			}
			parts[s] = append(parts[s], keyed{k, Pair{X: e.Src, Y: e.Dst, Label: label, Split: s}})
		}
	}
	out := make([]Pair, 0, n-st.Discarded)
	kept := 0
	for s := range parts {
		// Ties of key are the two directions of a pair, or a pair given
		// twice: ordered by label, then ends, so the order is total.
		slices.SortFunc(parts[s], func(a, b keyed) int {
			if c := cmp.Compare(a.k, b.k); c != 0 {
				return c
			}
			if a.p.Label != b.p.Label {
				if a.p.Label {
					return -1
				}
				return 1
			}
			return cmp.Or(cmp.Compare(a.p.X, b.p.X), cmp.Compare(a.p.Y, b.p.Y))
		})
		related := 0
		for _, kp := range parts[s] {
			out = append(out, kp.p)
			if kp.p.Label {
				related++
			}
		}
		st.Pairs[s], st.Related[s] = len(parts[s]), related
		kept += len(parts[s])
	}
	st.Discarded = n - kept
	return out, st
}

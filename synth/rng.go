package synth

import (
	"math"
	"math/rand/v2"
)

// Purposes of the per-item random streams. Each (seed, purpose, item) triple
// has its own PCG stream, so an item's draws never depend on which goroutine
// generated it, on the order items are visited, or on other purposes.
const (
	purposeGlobal uint64 = iota + 1
	purposeLatent
	purposeFeature
	purposeAlsoBought
	purposeAlsoViewed
	purposeExtras
	purposeMeta
	purposeEncode
	purposeReviews
	purposeCounts
	purposeOrphan
	purposeSession     // the planted buyers of an also_bought edge (2023 layout)
	purposeSession2023 // an item's 2023 review times
	purposeDay         // day 2's changes (Day)
)

// mix is the splitmix64 finaliser: a bijection that spreads nearby inputs.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// stream is a reusable random source that can be reset to any item's stream.
type stream struct {
	pcg rand.PCG
	*rand.Rand
}

func newStream() *stream {
	s := &stream{}
	s.Rand = rand.New(&s.pcg)
	return s
}

// reset positions s at the start of the stream for (seed, purpose, i).
func (s *stream) reset(seed, purpose uint64, i int) *stream {
	s.pcg.Seed(mix(seed^mix(purpose)), mix(uint64(i)^purpose<<56))
	return s
}

// itemStream returns a fresh stream for (seed, purpose, i).
func itemStream(seed, purpose uint64, i int) *stream {
	return newStream().reset(seed, purpose, i)
}

// poisson draws a Poisson variate: Knuth's product method for small means,
// a rounded normal for large ones (only the shape of the tail matters here).
func poisson(r *rand.Rand, mean float64) int {
	if mean <= 0 {
		return 0
	}
	if mean > 30 {
		v := math.Round(mean + math.Sqrt(mean)*r.NormFloat64())
		return int(max(v, 0))
	}
	l := math.Exp(-mean)
	k, p := 0, 1.0
	for {
		p *= r.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// heavyCount draws from a negative binomial with the given mean and shape
// 1/2: Poisson(mean * g) with g = n^2, n standard normal, which is a
// Gamma(1/2, 2) variate of mean 1 and variance 2. Capped at limit.
func heavyCount(r *rand.Rand, mean float64, limit int) int {
	n := r.NormFloat64()
	return min(poisson(r, mean*n*n), limit)
}

// logNormalCount draws floor(exp(μ + s n)), n standard normal, with μ set
// so that the mean is mean (about: the floor takes half a unit off), capped
// at limit: the long tail of reviews per item.
func logNormalCount(r *rand.Rand, mean, s float64, limit int) int {
	v := math.Exp(math.Log(mean) - s*s/2 + s*r.NormFloat64())
	return int(min(v, float64(limit)))
}

// pick returns a uniformly chosen element.
func pick[T any](r *rand.Rand, xs []T) T {
	return xs[r.IntN(len(xs))]
}

// chance reports true with probability p.
func chance(r *rand.Rand, p float64) bool {
	return p > 0 && r.Float64() < p
}

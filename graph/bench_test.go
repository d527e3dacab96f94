package graph

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// benchSizes go up to the paper's Women's Clothing graph; smaller ones keep
// its average degree (2.9 edges per item), power-law and subcategories.
var benchSizes = []struct {
	name  string
	shape shape
}{
	{"1e4", scaled(0.0052)},
	{"1e5", scaled(0.052)},
	{"women", womenShape},
}

func scaled(f float64) shape {
	sh := womenShape
	sh.items = int(float64(sh.items) * f)
	sh.edges = int(float64(sh.edges) * f)
	return sh
}

// benchGraphs caches generated graphs: generating Women's size takes a few
// seconds, more than what is measured for the smaller sizes.
var benchGraphs sync.Map

type benchGraph struct {
	pos []Edge
	sub []int32
	neg []Edge
}

func getBenchGraph(b *testing.B, sh shape) *benchGraph {
	if g, ok := benchGraphs.Load(sh); ok {
		return g.(*benchGraph)
	}
	pos, sub := genGraph(sh, rand.New(rand.NewPCG(11, 11)))
	// Split does not care how the negatives were drawn; Uniform is faster.
	neg, _, err := Uniform(context.Background(), pos, sub, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		b.Fatal(err)
	}
	g := &benchGraph{pos, sub, neg}
	benchGraphs.Store(sh, g)
	return g
}

func BenchmarkRewire(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			g := getBenchGraph(b, sz.shape)
			var st RewireStats
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var err error
				_, st, err = Rewire(context.Background(), g.pos, g.sub, rand.New(rand.NewPCG(uint64(i), 1)), RewireOptions{})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(g.pos))*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
			b.ReportMetric(float64(st.Attempts)*float64(b.N)/b.Elapsed().Seconds(), "attempts/s")
			b.ReportMetric(float64(st.Accepted)/float64(st.Attempts), "accept-ratio")
			b.ReportMetric(st.NeverSwitchedFraction(), "never-switched")
			b.ReportMetric(float64(st.Dropped), "dropped")
		})
	}
}

func BenchmarkUniform(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			g := getBenchGraph(b, sz.shape)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := Uniform(context.Background(), g.pos, g.sub, rand.New(rand.NewPCG(uint64(i), 1))); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(g.pos))*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		})
	}
}

func BenchmarkSplit(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			g := getBenchGraph(b, sz.shape)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				SplitPairs(g.pos, g.neg, rand.New(rand.NewPCG(uint64(i), 1)), 0)
			}
			n := len(g.pos) + len(g.neg)
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
		})
	}
}

// BenchmarkEdgeSet measures a lookup in a half-full set of n keys.
func BenchmarkEdgeSet(b *testing.B) {
	for _, n := range []int{1 << 16, 1 << 22} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			s := newEdgeSet(n)
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = key(rng.Int32(), rng.Int32())
				s.add(keys[i])
			}
			b.ResetTimer()
			hits := 0
			for i := 0; i < b.N; i++ {
				if s.has(keys[i&(n-1)] ^ uint64(i&1)) {
					hits++
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
		})
	}
}

// BenchmarkCoReview: reviews by users whose review counts follow a heavy
// tail (most review a few items, a few review hundreds), times over ten
// years in whole days as in the 2014/2018 files, the default window.
// Reports user-pairs/s, the quantity the cost grows with.
func BenchmarkCoReview(b *testing.B) {
	for _, n := range []int{1e5, 1e6} {
		b.Run(fmt.Sprintf("reviews=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 3))
			items := int32(n / 10)
			var rs []Review
			for u := int32(0); len(rs) < n; u++ {
				k := int(5 / (rng.Float64() + 0.01)) // 4 to 500, median about 10
				for range k {
					rs = append(rs, Review{User: u, Item: rng.Int32N(items), Time: int64(rng.IntN(3650)) * 86400})
				}
			}
			cfg := CoReviewConfig{Window: DefaultCoReviewWindowDays * 86400, MinUsers: DefaultCoReviewMinUsers, MaxUserItems: DefaultCoReviewMaxUserItems}
			work := make([]Review, len(rs))
			var st CoReviewStats
			b.ResetTimer()
			for range b.N {
				copy(work, rs)
				var err error
				if _, st, err = CoReview(context.Background(), work, cfg); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.UserPairs)*float64(b.N)/b.Elapsed().Seconds(), "user-pairs/s")
			b.ReportMetric(float64(st.UserPairs), "user-pairs")
			b.ReportMetric(float64(st.UsersSkipped), "users-skipped")
		})
	}
}

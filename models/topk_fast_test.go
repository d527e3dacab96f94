package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// fastWorld is a feature matrix for TestTopKFastMatchesExact.
type fastWorld struct {
	name string
	feat func(rng *rand.Rand) *denseFeat
}

const fastItems, fastDim = 1500, 12

// fastWorlds: random rows, and adversarial ones where the float32 scores
// cannot order the candidates: exact duplicates (ties in score, decided by
// item id), rows one float32 ulp apart (scores that differ in the last
// bits), a few rows copied many times (more tied candidates than k), and
// rows at scales past dotkern.Norm32's limit (every pair rescored).
var fastWorlds = []fastWorld{
	{"random", func(rng *rand.Rand) *denseFeat { return randDense(rng, fastItems, fastDim) }},
	{"duplicates", func(rng *rand.Rand) *denseFeat {
		m := randDense(rng, fastItems, fastDim)
		for i := 1; i < fastItems; i += 2 {
			copy(m.data[i*fastDim:(i+1)*fastDim], m.data[(i-1)*fastDim:i*fastDim])
		}
		return m
	}},
	{"ulp", func(rng *rand.Rand) *denseFeat {
		m := randDense(rng, fastItems, fastDim)
		for i := 1; i < fastItems; i++ {
			if rng.IntN(3) > 0 {
				src := rng.IntN(i)
				copy(m.data[i*fastDim:(i+1)*fastDim], m.data[src*fastDim:(src+1)*fastDim])
				j := i*fastDim + rng.IntN(fastDim)
				m.data[j] = math.Nextafter32(m.data[j], float32(math.Inf(2*rng.IntN(2)-1)))
			}
		}
		return m
	}},
	{"clusters", func(rng *rand.Rand) *denseFeat {
		m := randDense(rng, fastItems, fastDim)
		for i := 5; i < fastItems; i++ {
			src := rng.IntN(5)
			copy(m.data[i*fastDim:(i+1)*fastDim], m.data[src*fastDim:(src+1)*fastDim])
		}
		return m
	}},
	{"huge", func(rng *rand.Rand) *denseFeat {
		m := randDense(rng, fastItems, fastDim)
		for i := range m.data {
			if i%fastDim == 0 && (i/fastDim)%3 == 0 {
				m.data[i] *= 1e9 // ‖e(y)‖² beyond 2⁵⁰
			}
		}
		return m
	}},
}

// TestTopKFastMatchesExact: the float32-screened lists equal the exact
// path's (every float64 pair offered) for every query, at every rank, in
// items, distance and probability bits and spaces: LMT and Monomer (at the
// paper's K = 20, N = 4 too), with no filter, one and two filters, several
// k, GOMAXPROCS 1, 2 and 7, many candidate blocks; and the screen does
// screen (on the random world most pairs are never rescored).
func TestTopKFastMatchesExact(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	queries := make([]int32, fastItems)
	for i := range queries {
		queries[i] = int32(i)
	}
	cand := make([]int32, 0, fastItems)
	for i := range fastItems {
		if i%41 != 7 { // some queries are not candidates
			cand = append(cand, int32(i))
		}
	}
	odd := func(x, y int32) bool { return (x^y)&1 == 0 }
	group := func(x, y int32) bool { return x%7 == y%7 }
	for wi, w := range fastWorlds {
		for _, m := range []struct {
			model string
			k, n  int
		}{{ModelLMT, 5, 0}, {ModelMonomer, 4, 3}, {ModelMonomer, 20, 4}} {
			name := fmt.Sprintf("%s/%s-K%d", w.name, m.model, m.k)
			t.Run(name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(21, uint64(wi)))
				feat := w.feat(rng)
				r, err := NewRetriever(randFit(t, rng, m.model, fastDim, m.k, m.n), feat, cand)
				if err != nil {
					t.Fatal(err)
				}
				if r.pan == nil {
					t.Fatal("no float32 panels")
				}
				r.block = 100 // 16 blocks
				for _, tc := range []struct {
					k     int
					skips []func(x, y int32) bool
				}{{1, []func(x, y int32) bool{nil}}, {10, []func(x, y int32) bool{nil, group}}, {37, []func(x, y int32) bool{odd, nil, group}}} {
					runtime.GOMAXPROCS(1)
					want, wst, err := r.topKLists(queries, tc.k, 0, true, tc.skips)
					if err != nil {
						t.Fatal(err)
					}
					for _, p := range []int{1, 2, 7} {
						runtime.GOMAXPROCS(p)
						got, st, err := r.topKLists(queries, tc.k, 0, false, tc.skips)
						if err != nil {
							t.Fatal(err)
						}
						if st.pairs != wst.pairs {
							t.Fatalf("k=%d P=%d: %d pairs scored, exact path %d", tc.k, p, st.pairs, wst.pairs)
						}
						for f := range want {
							for qi := range want[f] {
								if !sameHits(got[f][qi], want[f][qi]) {
									t.Fatalf("k=%d P=%d filter %d query %d:\nfloat32 screen %v\nexact          %v", tc.k, p, f, queries[qi], got[f][qi], want[f][qi])
								}
							}
						}
						rate := float64(st.rescored) / float64(st.pairs)
						if p == 1 {
							t.Logf("k=%d: %.4f of pairs rescored", tc.k, rate)
						}
						if w.name == "random" && tc.k == 1 && rate > 0.1 {
							t.Errorf("k=%d P=%d: %.3f of pairs rescored on random rows", tc.k, p, rate)
						}
						if w.name == "clusters" && rate < 0.15 {
							// Five distinct rows: the query's nearest row is a
							// fifth of the candidates, all tied.
							t.Errorf("k=%d P=%d: %.3f of pairs rescored where nearly all tie", tc.k, p, rate)
						}
					}
				}
			})
		}
	}
}

// TestTopKScreenWorkerScratch: the float32 screen's workers stay within
// maxWorkerScratch each, as the float64 path's do (TestTopKWorkerScratch).
func TestTopKScreenWorkerScratch(t *testing.T) {
	const items, dim, nq, workers = 8192, 16, 512, 4
	rng := rand.New(rand.NewPCG(2, 10))
	feat := randDense(rng, items, dim)
	cand := make([]int32, items)
	for i := range cand {
		cand[i] = int32(i)
	}
	r, err := NewRetriever(randFit(t, rng, ModelMonomer, dim, 20, 4), feat, cand)
	if err != nil {
		t.Fatal(err)
	}
	if b := (items + r.retrieveBlock() - 1) / r.retrieveBlock(); b < workers {
		t.Fatalf("%d candidate blocks, the test needs %d", b, workers)
	}
	alloc := func(w int) uint64 {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		if _, _, err := r.topKLists(cand[:nq], 10, w, false, []func(x, y int32) bool{nil}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		return m1.TotalAlloc - m0.TotalAlloc
	}
	one, many := alloc(1), alloc(workers)
	if per := (int64(many) - int64(one)) / (workers - 1); per > maxWorkerScratch {
		t.Fatalf("%d bytes a worker (1 worker %d, %d workers %d), bound %d", per, one, workers, many, maxWorkerScratch)
	}
}

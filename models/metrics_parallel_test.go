package models

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"monomer/graph"
)

// testProcs are the GOMAXPROCS the split metrics are checked at: odd counts
// catch a split that assumes an even one.
var testProcs = []int{1, 2, 3, 7, 16}

// aucSerial is AUC as it was before its sort and count ran on all cores
// (one slices.Sort per class and one merge): the parallel one must give
// its bits.
func aucSerial(labels []bool, score []float64) float64 {
	var pos, neg []float64
	for i, l := range labels {
		if l {
			pos = append(pos, score[i])
		} else {
			neg = append(neg, score[i])
		}
	}
	if len(pos) == 0 || len(neg) == 0 {
		return math.NaN()
	}
	slices.Sort(pos)
	slices.Sort(neg)
	var twiceU int64
	lo, hi := 0, 0
	for _, p := range pos {
		for lo < len(neg) && cmp.Compare(neg[lo], p) < 0 {
			lo++
		}
		hi = max(hi, lo)
		for hi < len(neg) && cmp.Compare(neg[hi], p) == 0 {
			hi++
		}
		twiceU += 2*int64(lo) + int64(hi-lo)
	}
	return float64(twiceU) / (2 * float64(len(pos)) * float64(len(neg)))
}

// tiedScores draws n labels (related with probability pos) and scores from
// a few values, among them NaN, ±0 and ±Inf, so that most scores tie.
func tiedScores(rng *rand.Rand, n int, pos float64) ([]bool, []float64) {
	values := []float64{math.NaN(), math.Inf(-1), -3.5, -1, math.Copysign(0, -1), 0, 1e-300, 0.25, 2, math.Inf(1)}
	labels, score := make([]bool, n), make([]float64, n)
	for i := range n {
		labels[i] = rng.Float64() < pos
		if rng.IntN(4) == 0 {
			score[i] = rng.NormFloat64() // some distinct values too
		} else {
			score[i] = values[rng.IntN(len(values))]
		}
	}
	return labels, score
}

// TestAUCSameBitsAnyProcs checks the parallel AUC against the serial one
// bit for bit on inputs with many ties, at sizes around the run length and
// at every GOMAXPROCS of testProcs.
func TestAUCSameBitsAnyProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(1, 1))
	sizes := []int{0, 1, 2, 5, 1000, keyRun - 1, keyRun, keyRun + 1, 3*keyRun + 17}
	if !testing.Short() {
		sizes = append(sizes, 9*keyRun+5)
	}
	for _, n := range sizes {
		for _, pos := range []float64{0.5, 0.1, 0.97} {
			labels, score := tiedScores(rng, n, pos)
			want := aucSerial(labels, score)
			for _, p := range testProcs {
				runtime.GOMAXPROCS(p)
				got := AUC(labels, score)
				if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
					t.Errorf("n %d, related %.2f, GOMAXPROCS %d: AUC %v (%#x), serial %v (%#x)",
						n, pos, p, got, math.Float64bits(got), want, math.Float64bits(want))
				}
			}
		}
	}
}

// TestSortKeys checks the run sort and merge passes against slices.Sort
// with short runs, so that small inputs take many passes with pieces that
// start inside runs of equal keys (a merge piece that took a tie from the
// wrong side would duplicate or lose a key).
func TestSortKeys(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(2, 1))
	for _, run := range []int{1, 2, 3, 7, 64} {
		for _, n := range []int{0, 1, 2, 3, 10, 63, 64, 65, 200, 1000, 4097} {
			for _, distinct := range []uint64{1, 3, 1 << 62} {
				x := make([]uint64, n)
				for i := range x {
					x[i] = rng.Uint64N(distinct)
				}
				want := slices.Sorted(slices.Values(x))
				for _, p := range testProcs {
					runtime.GOMAXPROCS(p)
					got := sortKeys(slices.Clone(x), make([]uint64, n), run, 0)
					if !slices.Equal(got, want) {
						t.Fatalf("run %d, %d keys of %d values, GOMAXPROCS %d: not sorted or not the same keys",
							run, n, distinct, p)
					}
				}
			}
		}
	}
}

// TestScoreKeyOrder checks that scoreKey orders scores as cmp.Compare
// does, NaN lowest and −0 equal to 0.
func TestScoreKeyOrder(t *testing.T) {
	v := []float64{math.NaN(), math.Inf(-1), -math.MaxFloat64, -1, -5e-324, math.Copysign(0, -1), 0,
		5e-324, 1, math.MaxFloat64, math.Inf(1), math.Float64frombits(0xfff8000000000001)}
	for _, a := range v {
		for _, b := range v {
			if got, want := cmp.Compare(scoreKey(a), scoreKey(b)), cmp.Compare(a, b); got != want {
				t.Errorf("keys of %v and %v compare %d, the scores %d", a, b, got, want)
			}
		}
	}
}

// TestLogLikelihoodSameBitsAnyProcs checks the parallel logarithms with
// the sum in pair order against a serial loop, bit for bit.
func TestLogLikelihoodSameBitsAnyProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(3, 1))
	for _, n := range []int{1, 7, keyRun + 3, 4*keyRun - 1} {
		labels, prob := make([]bool, n), make([]float64, n)
		for i := range n {
			labels[i], prob[i] = rng.IntN(2) == 0, rng.Float64()
		}
		prob[0] = 0 // a clamped one
		var sum float64
		for i, l := range labels {
			p := prob[i]
			if !l {
				p = 1 - p
			}
			sum += math.Log(min(max(p, LogLikelihoodClamp), 1-LogLikelihoodClamp))
		}
		want := sum / float64(n)
		for _, p := range testProcs {
			runtime.GOMAXPROCS(p)
			if got := LogLikelihood(labels, prob); got != want {
				t.Errorf("%d pairs, GOMAXPROCS %d: %v, serial %v", n, p, got, want)
			}
		}
	}
}

func BenchmarkAUCTies(b *testing.B) {
	for _, n := range []int{100000, 2000000} {
		b.Run(fmt.Sprintf("pairs=%d", n), func(b *testing.B) {
			labels, score := tiedScores(rand.New(rand.NewPCG(1, 1)), n, 0.5)
			b.SetBytes(int64(n) * 8)
			for b.Loop() {
				AUC(labels, score)
			}
		})
	}
}

// TestErrorRateSameAnyProcs checks the run-wise error count against a
// serial one at every GOMAXPROCS of testProcs.
func TestErrorRateSameAnyProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(4, 1))
	for _, n := range []int{1, keyRun - 1, 3*keyRun + 5} {
		labels, prob := make([]bool, n), make([]float64, n)
		wrong := 0
		for i := range n {
			labels[i], prob[i] = rng.IntN(3) == 0, rng.Float64()
			if (prob[i] > 0.5) != labels[i] {
				wrong++
			}
		}
		want := float64(wrong) / float64(n)
		for _, p := range testProcs {
			runtime.GOMAXPROCS(p)
			if got := ErrorRate(labels, prob); got != want {
				t.Errorf("%d pairs, GOMAXPROCS %d: %v, serial %v", n, p, got, want)
			}
		}
	}
}

// TestScoresSameAnyProcs checks CT's and a learned model's scores of more
// pairs than one run at every GOMAXPROCS of testProcs: each pair's must be
// what it is scored alone.
func TestScoresSameAnyProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(5, 1))
	const items, dim, k = 300, 6, 3
	pairs := randPairs(rng, items, 2*keyRun+11)
	sub := make([]int32, items)
	names := []string{"a", "b", "c", "d", "e"}
	for i := range sub {
		sub[i] = int32(rng.IntN(len(names)))
	}
	ct, err := FitCT(sub, names, pairs[:5000], 0.5)
	if err != nil {
		t.Fatal(err)
	}
	e := Param{Name: "E", Rows: dim, Cols: k, Data: make([]float64, dim*k)}
	for i := range e.Data {
		e.Data[i] = rng.NormFloat64()
	}
	lmt, err := NewFit(ModelLMT, 1.5, []Param{e})
	if err != nil {
		t.Fatal(err)
	}
	feat := randDense(rng, items, dim)
	runtime.GOMAXPROCS(1)
	ld, _, err := lmt.Score(feat, pairs)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range testProcs {
		runtime.GOMAXPROCS(p)
		dist, prob := ct.Score(pairs)
		for i, q := range pairs {
			d, pr := ct.Score([]graph.Pair{q})
			if dist[i] != d[0] || prob[i] != pr[0] {
				t.Fatalf("GOMAXPROCS %d: CT pair %d scored (%v, %v) among all, (%v, %v) alone", p, i, dist[i], prob[i], d[0], pr[0])
			}
		}
		dist, prob, err := lmt.Score(feat, pairs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range pairs {
			if dist[i] != ld[i] || prob[i] != sigmoidStable(1.5-ld[i]) {
				t.Fatalf("GOMAXPROCS %d: LMT pair %d (%v, %v), want (%v, %v)", p, i, dist[i], prob[i], ld[i], sigmoidStable(1.5-ld[i]))
			}
		}
	}
}

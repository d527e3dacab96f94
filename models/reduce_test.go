package models

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// sortedMedian is the definition median must match bit for bit.
func sortedMedian(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// The selected median is the sorted one, bit for bit, on odd and even
// counts, long runs of equal values, sorted and reversed input, and NaNs
// (which sort first); and v is left as it was.
func TestMedianAsSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var cases [][]float64
	for _, n := range []int{1, 2, 3, 16, 17, 18, 100, 1001, 4096, 50000} {
		u, d, runs, asc := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range n {
			u[i] = rng.NormFloat64()
			d[i] = float64(rng.IntN(5)) // few distinct values
			runs[i] = float64(i / 1000)
			asc[i] = float64(i) * 0.5
		}
		desc := slices.Clone(asc)
		slices.Reverse(desc)
		withNaN := slices.Clone(u)
		withNaN[0], withNaN[n-1] = math.NaN(), math.NaN()
		cases = append(cases, u, d, runs, asc, desc, withNaN)
	}
	for _, v := range cases {
		before := slices.Clone(v)
		got, want := median(v), sortedMedian(v)
		if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("n=%d: median %v, sorted %v", len(v), got, want)
		}
		if !slices.EqualFunc(v, before, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
			t.Fatalf("n=%d: median reordered its input", len(v))
		}
	}
}

// nth gives every rank of a small array with duplicates its sorted value.
func TestNthEveryRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	v := make([]float64, 300)
	for i := range v {
		v[i] = float64(rng.IntN(40))
	}
	s := slices.Clone(v)
	slices.Sort(s)
	for k := range v {
		w := slices.Clone(v)
		if got := nth(w, k); got != s[k] {
			t.Fatalf("rank %d: %v, want %v", k, got, s[k])
		}
		for i := range w {
			if i < k && w[i] > w[k] || i > k && w[i] < w[k] {
				t.Fatalf("rank %d: w[%d] = %v on the wrong side of %v", k, i, w[i], w[k])
			}
		}
	}
}

func BenchmarkMedian(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	v := make([]float64, 3_000_000)
	for i := range v {
		v[i] = rng.ExpFloat64()
	}
	b.Run("select", func(b *testing.B) {
		for b.Loop() {
			median(v)
		}
	})
	b.Run("sort", func(b *testing.B) {
		for b.Loop() {
			sortedMedian(v)
		}
	})
}

// spanSum is the in-order sum of its spans' in-order sums, bit for bit at
// every GOMAXPROCS, over a count that ends in a partial span.
func TestSpanSumSameAtProcs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 3*sumSpan + 1234
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64() * math.Exp(rng.NormFloat64()*8) // wide magnitudes: order shows in the bits
	}
	var want float64
	for lo := 0; lo < n; lo += sumSpan {
		var s float64
		for _, x := range v[lo:min(lo+sumSpan, n)] {
			s += x
		}
		want += s
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range sameBitsProcs {
		runtime.GOMAXPROCS(procs)
		got := spanSum(n, func(lo, hi int) (s float64) {
			for _, x := range v[lo:hi] {
				s += x
			}
			return s
		})
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("GOMAXPROCS %d: %v, want %v", procs, got, want)
		}
	}
}

// check reports the first bad row in the items' order (not in index order,
// not whichever core finds one first), the same at every GOMAXPROCS, with
// bad rows in several of its spans.
func TestCheckFirstBadRow(t *testing.T) {
	const rows = 20000
	m := &sparseFeat{dim: 8, idx: make([][]int32, rows), val: make([][]float32, rows)}
	for i := range rows {
		m.idx[i], m.val[i] = []int32{1, 5}, []float32{0.5, 0.5}
	}
	m.idx[17000] = []int32{5, 1} // not ascending
	m.idx[9000] = []int32{1, 9}  // out of range
	m.val[12000] = []float32{1}  // one value short
	items := make([]int32, 0, rows)
	for i := rows - 1; i >= 0; i-- { // descending: the first bad row met is 17000
		items = append(items, int32(i))
	}
	src := rowSource{sparse: m, dim: 8, rows: rows}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range sameBitsProcs {
		runtime.GOMAXPROCS(procs)
		err := src.check(items)
		if err == nil || !strings.Contains(err.Error(), "row 17000: columns not strictly ascending") {
			t.Fatalf("GOMAXPROCS %d: %v, want row 17000's error", procs, err)
		}
		if err := src.check(items[3000:]); err == nil || !strings.Contains(err.Error(), "row 12000 has 2 indices and 1 values") {
			t.Fatalf("GOMAXPROCS %d: %v, want row 12000's error", procs, err)
		}
		if err := src.check(items[:2999]); err != nil {
			t.Fatalf("GOMAXPROCS %d: good rows refused: %v", procs, err)
		}
	}
}

// newPairSet's index is the same at every GOMAXPROCS, over several spans
// of pairs, and means what its fields say: byX lists pair indices by local
// x, xEnd/yEnd are those pairs' ends, yPos finds a pair of byY in byX.
func TestPairSetSameAtProcs(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	pairs := randPairs(rng, 5000, 3*pairChunk+77)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first *pairSet
	for _, procs := range sameBitsProcs {
		runtime.GOMAXPROCS(procs)
		ps, err := newPairSet(pairs, 6000, "test")
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = ps
			for k, q := range ps.byX {
				if ps.xEnd[k] != ps.x[q] || ps.yEnd[k] != ps.y[q] || k > 0 && ps.x[ps.byX[k-1]] > ps.x[q] {
					t.Fatalf("byX[%d] = pair %d: ends %d %d, want %d %d, in x order", k, q, ps.xEnd[k], ps.yEnd[k], ps.x[q], ps.y[q])
				}
			}
			for j, q := range ps.byY {
				if ps.byX[ps.yPos[j]] != q || ps.yOther[j] != ps.x[q] {
					t.Fatalf("byY[%d] = pair %d: yPos %d, other end %d", j, q, ps.yPos[j], ps.yOther[j])
				}
			}
			for i, p := range pairs {
				if ps.items[ps.x[i]] != p.X || ps.items[ps.y[i]] != p.Y || ps.labels[i] != p.Label {
					t.Fatalf("pair %d indexed as %d-%d", i, ps.items[ps.x[i]], ps.items[ps.y[i]])
				}
			}
			continue
		}
		for name, ab := range map[string][2][]int32{"x": {first.x, ps.x}, "y": {first.y, ps.y}, "byX": {first.byX, ps.byX}, "byY": {first.byY, ps.byY},
			"xOff": {first.xOff, ps.xOff}, "yOff": {first.yOff, ps.yOff}, "xEnd": {first.xEnd, ps.xEnd}, "yEnd": {first.yEnd, ps.yEnd},
			"yPos": {first.yPos, ps.yPos}, "yOther": {first.yOther, ps.yOther}, "items": {first.items, ps.items}} {
			if !slices.Equal(ab[0], ab[1]) {
				t.Fatalf("GOMAXPROCS %d: %s differs from GOMAXPROCS 1", procs, name)
			}
		}
	}
}

package stages

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"monomer/graph"
	"monomer/models"
	"monomer/schema"
)

// The slice kinds of evaluate/slices.parquet (schema.SlicesCols).
const (
	sliceCold     = "cold"          // groups cold, warm
	sliceDegree   = "query_degree"  // groups q1..q4
	sliceCategory = "category_pair" // groups "query sub → item sub"
)

// testSlices assigns each test pair to its group of every slice kind,
// the same for every model: built once per experiment.
type testSlices struct {
	cold     []bool // an end of the pair is in no training pair
	quartile []int8 // 0..3: the query's training degree's quartile
	qLabel   [4]string
	cat      []int32 // index into cats
	cats     []catPair
}

// catPair is one (query subcategory, item subcategory) of the test pairs
// and its heterogeneity: the Euclidean distance between the two
// subcategories' mean feature vectors (0 within a subcategory), the
// paper's case for Monomer (its section I: related items of different
// kinds need not be close in one space).
type catPair struct {
	name          string
	heterogeneity float64
}

// newTestSlices groups the test pairs. degree is the training positives
// of each item (models.TrainDegree); seen marks the items in any training
// pair; het is the heterogeneity of subcategories a → b.
func newTestSlices(test []graph.Pair, degree []int, seen []bool, it *items, het func(a, b int32) float64) *testSlices {
	ts := &testSlices{cold: make([]bool, len(test)), quartile: make([]int8, len(test)), cat: make([]int32, len(test))}
	// Quartiles of the test pairs' query degrees: bounds at the 25th, 50th
	// and 75th of them in order, a degree on a bound in the lower group.
	qd := make([]int, len(test))
	for i, p := range test {
		qd[i] = degree[p.X]
		ts.cold[i] = !seen[p.X] || !seen[p.Y]
	}
	sorted := slices.Clone(qd)
	slices.Sort(sorted)
	var bound [3]int
	for q := range bound {
		if n := len(sorted); n > 0 {
			bound[q] = sorted[((q+1)*n+3)/4-1]
		}
	}
	lo, hi := [4]int{math.MaxInt, math.MaxInt, math.MaxInt, math.MaxInt}, [4]int{-1, -1, -1, -1}
	for i, d := range qd {
		q := 0
		for q < 3 && d > bound[q] {
			q++
		}
		ts.quartile[i] = int8(q)
		lo[q], hi[q] = min(lo[q], d), max(hi[q], d)
	}
	for q := range ts.qLabel {
		ts.qLabel[q] = fmt.Sprintf("q%d: no pairs", q+1)
		if hi[q] >= 0 {
			ts.qLabel[q] = fmt.Sprintf("q%d: degree %d-%d", q+1, lo[q], hi[q])
		}
	}
	// Category pairs in name order.
	type ab struct{ a, b int32 }
	at := map[ab]int32{}
	var keys []ab
	for _, p := range test {
		k := ab{it.sub[p.X], it.sub[p.Y]}
		if _, ok := at[k]; !ok {
			at[k] = 0
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(x, y ab) int {
		return cmp.Or(cmp.Compare(it.subName[x.a], it.subName[y.a]), cmp.Compare(it.subName[x.b], it.subName[y.b]))
	})
	for i, k := range keys {
		at[k] = int32(i)
		ts.cats = append(ts.cats, catPair{name: it.subName[k.a] + " → " + it.subName[k.b], heterogeneity: het(k.a, k.b)})
	}
	for i, p := range test {
		ts.cat[i] = at[ab{it.sub[p.X], it.sub[p.Y]}]
	}
	return ts
}

// add appends model's rows to t: for each slice kind, each group's test
// pairs, positives, error and AUC (score ranks, as evaluate's AUC). Every
// kind's pairs add up to the test set.
func (ts *testSlices) add(t *schema.SlicesCols, exp, model string, labels []bool, prob, score []float64) {
	group := func(kind string, n int, of func(i int) int, name func(g int) string, het func(g int) float64) {
		idx := make([][]int, n)
		for i := range labels {
			g := of(i)
			idx[g] = append(idx[g], i)
		}
		for g, rows := range idx {
			if len(rows) == 0 && kind != sliceCold && kind != sliceDegree {
				continue
			}
			l, p, s := make([]bool, len(rows)), make([]float64, len(rows)), make([]float64, len(rows))
			pos := 0
			for j, i := range rows {
				l[j], p[j], s[j] = labels[i], prob[i], score[i]
				if labels[i] {
					pos++
				}
			}
			t.Experiment = append(t.Experiment, exp)
			t.Model = append(t.Model, model)
			t.Slice = append(t.Slice, kind)
			t.Group = append(t.Group, name(g))
			t.Pairs = append(t.Pairs, int64(len(rows)))
			t.Positives = append(t.Positives, int64(pos))
			t.Error = append(t.Error, models.ErrorRate(l, p))
			t.AUC = append(t.AUC, models.AUC(l, s))
			t.Heterogeneity = append(t.Heterogeneity, het(g))
		}
	}
	nan := func(int) float64 { return math.NaN() }
	group(sliceCold, 2, func(i int) int {
		if ts.cold[i] {
			return 0
		}
		return 1
	}, func(g int) string { return [2]string{"cold", "warm"}[g] }, nan)
	group(sliceDegree, 4, func(i int) int { return int(ts.quartile[i]) }, func(g int) string { return ts.qLabel[g] }, nan)
	group(sliceCategory, len(ts.cats), func(i int) int { return int(ts.cat[i]) },
		func(g int) string { return ts.cats[g].name }, func(g int) float64 { return ts.cats[g].heterogeneity })
}

// experimentSlices groups the test pairs of pairs (newTestSlices).
func experimentSlices(pairs, test []graph.Pair, it *items, feat models.Features) (*testSlices, error) {
	seen, used := make([]bool, len(it.asin)), make([]bool, len(it.asin))
	for _, p := range pairs {
		used[p.X], used[p.Y] = true, true
		if p.Split == graph.Train {
			seen[p.X], seen[p.Y] = true, true
		}
	}
	het, err := subcategoryMeans(feat, it, used)
	if err != nil {
		return nil, err
	}
	return newTestSlices(test, models.TrainDegree(pairs, len(it.asin)), seen, it, het), nil
}

// subcategoryMeans returns the heterogeneity of subcategories a → b: the
// distance between the mean feature vectors of their items among used
// (the items of any pair, all with features).
func subcategoryMeans(f models.Features, it *items, used []bool) (func(a, b int32) float64, error) {
	dim := f.Dim()
	sums := make([][]float64, len(it.subName))
	counts := make([]int, len(it.subName))
	row := func(i int) ([]int32, []float32, error) {
		switch r := f.(type) {
		case models.Sparse:
			idx, val := r.SparseRow(i)
			return idx, val, nil
		case models.Dense:
			return nil, r.Row(i), nil
		}
		return nil, nil, fmt.Errorf("stages: evaluate: features of type %T have no rows", f)
	}
	for i, u := range used {
		if !u {
			continue
		}
		s := it.sub[i]
		if sums[s] == nil {
			sums[s] = make([]float64, dim)
		}
		idx, val, err := row(i)
		if err != nil {
			return nil, err
		}
		for j, v := range val {
			c := j
			if idx != nil {
				c = int(idx[j])
			}
			if c < dim {
				sums[s][c] += float64(v)
			}
		}
		counts[s]++
	}
	for s, sum := range sums {
		for j := range sum {
			sum[j] /= float64(counts[s])
		}
	}
	return func(a, b int32) float64 {
		if sums[a] == nil || sums[b] == nil {
			return math.NaN()
		}
		var d float64
		for j := range sums[a] {
			x := sums[a][j] - sums[b][j]
			d += x * x
		}
		return math.Sqrt(d)
	}, nil
}

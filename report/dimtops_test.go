package report

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTopRowsIsStableSortCut checks topRows against what dimTops did
// before: a stable sort of the rows by each column, descending, cut at k,
// on values with many ties, NaN and ±0.
func TestTopRowsIsStableSortCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	values := []float64{math.NaN(), math.Inf(-1), -1, math.Copysign(0, -1), 0, 0.5, 2, math.Inf(1)}
	for _, tc := range []struct{ n, dims, k int }{
		{1, 1, 3}, {2, 3, 3}, {3, 2, 3}, {50, 4, 3}, {500, 20, 3}, {500, 5, 1}, {40, 3, 0}, {200, 2, 10},
	} {
		rows := make([][]float64, tc.n)
		for r := range rows {
			rows[r] = make([]float64, tc.dims)
			for d := range rows[r] {
				rows[r][d] = values[rng.IntN(len(values))]
				if rng.IntN(3) == 0 {
					rows[r][d] = rng.NormFloat64()
				}
			}
		}
		got := topRows(tc.n, tc.dims, tc.k, func(r int) []float64 { return rows[r] })
		for d := range tc.dims {
			order := make([]int, tc.n)
			for i := range order {
				order[i] = i
			}
			slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rows[b][d], rows[a][d]) })
			want := order[:min(tc.k, tc.n)]
			if !slices.Equal(got[d], want) {
				t.Errorf("%d rows, k %d, column %d: %v, want %v", tc.n, tc.k, d, got[d], want)
			}
		}
	}
}

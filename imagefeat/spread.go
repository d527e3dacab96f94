package imagefeat

import (
	"context"
	"math"
)

// Spread describes how a set of feature rows vary: what decides whether
// any model can learn from them (models.UnusableFeatures).
type Spread struct {
	Rows int
	// Variance is the mean squared distance of a row to the mean row
	// (the trace of the rows' covariance): 0 when every row is the same,
	// all zero or any other constant.
	Variance float64
	// MeanSqNorm is the mean ‖f‖² of the rows, MaxAbs the largest
	// magnitude of any value.
	MeanSqNorm, MaxAbs float64
}

// SpreadOf measures the rows of m listed in rows, in float64 over one
// pass. Values are taken relative to the first row, so rows equal to it
// contribute exact zeros and a constant matrix has a variance of exactly
// 0, whatever its value. Once ctx is done it returns ctx.Err() within
// 4096 rows.
func SpreadOf(ctx context.Context, m *Matrix, rows []int32) (Spread, error) {
	sp := Spread{Rows: len(rows)}
	if len(rows) == 0 {
		return sp, nil
	}
	dim := m.Dim()
	first := m.Row(int(rows[0]))
	sum, sumSq := make([]float64, dim), make([]float64, dim)
	var norms float64
	for k, r := range rows {
		if k%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return sp, err
			}
		}
		for j, v := range m.Row(int(r)) {
			x := float64(v)
			d := x - float64(first[j])
			sum[j] += d
			sumSq[j] += d * d
			norms += x * x
			sp.MaxAbs = max(sp.MaxAbs, math.Abs(x))
		}
	}
	n := float64(len(rows))
	for j := range dim {
		mean := sum[j] / n
		sp.Variance += max(0, sumSq[j]/n-mean*mean)
	}
	sp.MeanSqNorm = norms / n
	return sp, nil
}

// spreadDims is how many dimensions a task of VarianceOf sums.
const spreadDims = 128

// VarianceOf is SpreadOf without MeanSqNorm (left 0) on all cores: each
// task sums a fixed span of dimensions over the rows in order, so Variance
// and MaxAbs have SpreadOf's bits whatever GOMAXPROCS. (SpreadOf's
// MeanSqNorm is one running sum over every value, which no split keeps.)
func VarianceOf(ctx context.Context, m *Matrix, rows []int32) (Spread, error) {
	sp := Spread{Rows: len(rows)}
	if len(rows) == 0 {
		return sp, nil
	}
	dim := m.Dim()
	first := m.Row(int(rows[0]))
	sum, sumSq := make([]float64, dim), make([]float64, dim)
	tasks := (dim + spreadDims - 1) / spreadDims
	maxAbs := make([]float64, tasks)
	forTasks(tasks, func(_, t int) bool {
		lo, hi := t*spreadDims, min(dim, (t+1)*spreadDims)
		s, s2, f := sum[lo:hi], sumSq[lo:hi], first[lo:hi]
		for k, r := range rows {
			if k%4096 == 0 && ctx.Err() != nil {
				return false
			}
			for j, v := range m.Row(int(r))[lo:hi] {
				x := float64(v)
				d := x - float64(f[j])
				s[j] += d
				s2[j] += d * d
				maxAbs[t] = max(maxAbs[t], math.Abs(x))
			}
		}
		return true
	})
	if err := ctx.Err(); err != nil {
		return sp, err
	}
	n := float64(len(rows))
	for j := range dim {
		mean := sum[j] / n
		sp.Variance += max(0, sumSq[j]/n-mean*mean)
	}
	for _, a := range maxAbs {
		sp.MaxAbs = max(sp.MaxAbs, a)
	}
	return sp, nil
}

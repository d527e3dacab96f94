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

// Varies reports whether any row of m listed in rows differs from the
// first in some value (compared as numbers: -0 equals 0). It is the
// zero-variance verdict of SpreadOf (Variance == 0 exactly when every
// row equals the first, bar float64 cancellation on rows that differ by
// under about 1e-8 of their magnitude) without summing anything: it stops
// at the first row that differs, the second on any real data, and reads
// the whole matrix only when it is constant. Once ctx is done it returns
// ctx.Err() within 4096 rows.
func Varies(ctx context.Context, m *Matrix, rows []int32) (bool, error) {
	if len(rows) == 0 {
		return false, nil
	}
	first := m.Row(int(rows[0]))
	for k, r := range rows[1:] {
		if k%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		for j, v := range m.Row(int(r)) {
			if v != first[j] {
				return true, nil
			}
		}
	}
	return false, nil
}

package models

import (
	"math"
	"slices"
)

// Gini is the Gini coefficient of non-negative counts (how often each item
// is recommended): 0 when every item is recommended equally often, near 1
// when a few items take every slot. With the counts sorted ascending,
// G = Σ_i (2i − n − 1) c_i / (n Σ c_i), i = 1..n. NaN for no counts or a
// zero total.
func Gini(counts []float64) float64 {
	c := slices.Clone(counts)
	slices.Sort(c)
	n := float64(len(c))
	var num, sum float64
	for i, v := range c {
		num += (2*float64(i+1) - n - 1) * v
		sum += v
	}
	if n == 0 || sum == 0 {
		return math.NaN()
	}
	return num / (n * sum)
}

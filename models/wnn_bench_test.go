package models

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkWNNTopics times one WNN pass with its gradient on dense rows of
// LDA+WNN's shape at Electronics' size, 412,082 items × 100 topics and 2 M
// random pairs (every value non-zero: real topics there are 11 % non-zero
// and take the sparse path), and on longer rows with as many bytes in all
// (1024 and 4096 values). A pair's work on 100 values is short and its y row a
// random read from 165 MB, so the pass waits on memory unless the rows
// are asked for early enough (wnnDenseAhead).
func BenchmarkWNNTopics(b *testing.B) {
	for _, dim := range []int{100, 1024, 4096} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			items, pairs := 412082*100/dim, 2000000
			rng := rand.New(rand.NewPCG(1, 1))
			feat := randDense(rng, items, dim)
			for i, v := range feat.data {
				feat.data[i] = v * v // topic weights are not negative
			}
			spec, _ := Spec{Model: ModelWNN}.resolve()
			obj, _, theta := startObjective(b, feat, dim, randPairs(rng, items, pairs), spec, rng)
			grad := make([]float64, len(theta))
			obj.eval(theta, grad)
			cpu0 := cpuSeconds()
			for b.Loop() {
				obj.eval(theta, grad)
			}
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/eval")
		})
	}
}

package report_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"monomer/report"
)

// Two groups of points far apart in 3-D stay apart on the 2-D map.
func ExampleTSNE() {
	const n, d = 40, 3
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, n*d)
	for i := range n {
		for k := range d {
			x[i*d+k] = float64(10*(i%2)) + rng.NormFloat64()
		}
	}
	res, err := report.TSNE(context.Background(), x, n, d, report.TSNEOptions{Iterations: 300}, rand.New(rand.NewPCG(2, 2)))
	if err != nil {
		fmt.Println(err)
		return
	}
	// The mean distance between the groups' centres, against the mean
	// spread within them.
	var c [2][2]float64
	for i := range n {
		c[i%2][0] += res.Y[2*i] / (n / 2)
		c[i%2][1] += res.Y[2*i+1] / (n / 2)
	}
	var spread float64
	for i := range n {
		spread += math.Hypot(res.Y[2*i]-c[i%2][0], res.Y[2*i+1]-c[i%2][1]) / n
	}
	apart := math.Hypot(c[0][0]-c[1][0], c[0][1]-c[1][1])
	fmt.Println(len(res.Y)/2, "points; groups apart:", apart > 3*spread, "; KL fell:", res.KL[len(res.KL)-1] < res.KL[0])
	// Output: 40 points; groups apart: true ; KL fell: true
}

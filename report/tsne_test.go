package report

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"monomer/internal/ctxtest"
)

// clusters draws n points in d dimensions around 3 well-separated centres.
func clusters(n, d int, seed uint64) ([]float64, []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x, lab := make([]float64, n*d), make([]int, n)
	for i := range n {
		lab[i] = i % 3
		for k := range d {
			c := 0.0
			if k == lab[i] {
				c = 8
			}
			x[i*d+k] = c + rng.NormFloat64()
		}
	}
	return x, lab
}

func TestTSNEDeterministicAcrossGOMAXPROCS(t *testing.T) {
	x, _ := clusters(150, 6, 1)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	procsList := []int{1, 2, 3, 7, 16} // odd counts catch splits that assume even ones
	maps := make([][]float64, len(procsList))
	for i, procs := range procsList {
		runtime.GOMAXPROCS(procs)
		r, err := TSNE(context.Background(), x, 150, 6, TSNEOptions{Iterations: 200}, rand.New(rand.NewPCG(5, 5)))
		if err != nil {
			t.Fatal(err)
		}
		maps[i] = r.Y
	}
	for k := 1; k < len(maps); k++ {
		for i := range maps[0] {
			if math.Float64bits(maps[0][i]) != math.Float64bits(maps[k][i]) {
				t.Fatalf("coordinate %d: %v at GOMAXPROCS 1, %v at %d", i, maps[0][i], maps[k][i], procsList[k])
			}
		}
	}
	other, err := TSNE(context.Background(), x, 150, 6, TSNEOptions{Iterations: 200}, rand.New(rand.NewPCG(6, 6)))
	if err != nil {
		t.Fatal(err)
	}
	if other.Y[0] == maps[0][0] && other.Y[1] == maps[0][1] {
		t.Error("another seed gave the same map")
	}
}

func TestTSNEKLDecreasesAndSeparatesClusters(t *testing.T) {
	const n, d = 240, 8
	x, lab := clusters(n, d, 2)
	r, err := TSNE(context.Background(), x, n, d, TSNEOptions{Iterations: 600}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.KL) < 5 {
		t.Fatalf("%d KL records", len(r.KL))
	}
	for i := 1; i < len(r.KL); i++ {
		// Momentum may add a wiggle; no record may rise by more than 1%.
		if r.KL[i] > r.KL[i-1]*1.01 {
			t.Errorf("KL rose from %v (iteration %d) to %v (iteration %d)", r.KL[i-1], r.KLIter[i-1], r.KL[i], r.KLIter[i])
		}
	}
	if last, first := r.KL[len(r.KL)-1], r.KL[0]; !(last < first) {
		t.Errorf("KL %v at the end, %v after exaggeration: did not decrease", last, first)
	}
	// Every point's nearest neighbour in the map is in its own cluster.
	same := 0
	for i := range n {
		best, bd := -1, math.Inf(1)
		for j := range n {
			if j == i {
				continue
			}
			dx, dy := r.Y[2*i]-r.Y[2*j], r.Y[2*i+1]-r.Y[2*j+1]
			if v := dx*dx + dy*dy; v < bd {
				best, bd = j, v
			}
		}
		if lab[best] == lab[i] {
			same++
		}
	}
	if same < n*98/100 {
		t.Errorf("%d of %d nearest map neighbours share the cluster", same, n)
	}
}

func TestTSNEBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	if _, err := TSNE(context.Background(), make([]float64, 6), 3, 2, TSNEOptions{}, rng); err == nil {
		t.Error("3 points accepted")
	}
	x := make([]float64, 20)
	x[3] = math.NaN()
	if _, err := TSNE(context.Background(), x, 10, 2, TSNEOptions{}, rng); err == nil {
		t.Error("NaN accepted")
	}
}

// TestTSNECancel: TSNE looks at ctx before every iteration and returns its
// error and no map.
func TestTSNECancel(t *testing.T) {
	x, _ := clusters(60, 4, 3)
	for _, live := range []int{0, 1, 150} {
		ctx := ctxtest.After(live)
		r, err := TSNE(ctx, x, 60, 4, TSNEOptions{Iterations: 200}, rand.New(rand.NewPCG(1, 1)))
		if !errors.Is(err, context.Canceled) || r != nil || ctx.N != -1 {
			t.Errorf("cancelled after %d iterations: map %v, %v, %d checks left; want none, context.Canceled, -1", live, r != nil, err, ctx.N)
		}
	}
}

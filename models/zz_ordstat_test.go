package models

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestZZOrderStats(t *testing.T) {
	run := os.Getenv("MONOMER_BENCH_BOW_RUN")
	if run == "" {
		t.Skip()
	}
	train, err := benchTrainPairs(filepath.Join(run, "split", "pairs.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := newPairSet(train, 1<<23, "train")
	if err != nil {
		t.Fatal(err)
	}
	n := len(ps.items)
	t0 := time.Now()
	ord := graphOrder(n, ps.x, ps.y, ps.labels)
	fmt.Println("order", time.Since(t0), len(ord), n)
	rank := make([]int32, n)
	for p, i := range ord {
		rank[i] = int32(p)
	}
	stat := func(name string, r func(int32) int32) {
		for _, lab := range []bool{true, false} {
			var d []int
			for q := range ps.x {
				if ps.labels[q] == lab {
					a, b := r(ps.x[q]), r(ps.y[q])
					if a > b {
						a, b = b, a
					}
					d = append(d, int(b-a))
				}
			}
			slices.Sort(d)
			w := func(lim int) float64 {
				k, _ := slices.BinarySearch(d, lim)
				return float64(k) / float64(len(d))
			}
			fmt.Printf("%s related=%v median %d p90 %d  <256 %.3f <4096 %.3f <32768 %.3f\n", name, lab, d[len(d)/2], d[len(d)*9/10], w(256), w(4096), w(32768))
		}
	}
	stat("asc", func(i int32) int32 { return i })
	stat("cm", func(i int32) int32 { return rank[i] })
}

func TestZZDegree(t *testing.T) {
	run := os.Getenv("MONOMER_BENCH_BOW_RUN")
	if run == "" {
		t.Skip()
	}
	train, err := benchTrainPairs(filepath.Join(run, "split", "pairs.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := newPairSet(train, 1<<23, "train")
	n := len(ps.items)
	deg := make([]int, n)
	for q := range ps.x {
		deg[ps.x[q]]++
		deg[ps.y[q]]++
	}
	slices.Sort(deg)
	slices.Reverse(deg)
	tot := 2 * len(ps.x)
	c := 0
	for i, d := range deg {
		c += d
		for _, f := range []float64{0.01, 0.05, 0.1, 0.2, 0.3, 0.5} {
			if i == int(f*float64(n)) {
				fmt.Printf("top %.2f items: %.3f of ends (deg %d)\n", f, float64(c)/float64(tot), d)
			}
		}
	}
	fmt.Println("max deg", deg[0], "median", deg[n/2], "pairs", len(ps.x))
}

func BenchmarkZZOracle(b *testing.B) {
	run := os.Getenv("MONOMER_BENCH_BOW_RUN")
	feat, err := benchReadBow(run)
	if err != nil {
		b.Fatal(err)
	}
	train, err := benchTrainPairs(filepath.Join(run, "split", "pairs.parquet"))
	if err != nil {
		b.Fatal(err)
	}
	ps, _ := newPairSet(train, feat.Rows(), "train")
	n := len(ps.items)
	win := 256
	if os.Getenv("ZZWIN") != "" {
		fmt.Sscan(os.Getenv("ZZWIN"), &win)
	}
	hide := os.Getenv("ZZHIDE") != ""
	negRand := hide || os.Getenv("ZZNEG") != ""
	for q := range train {
		if negRand && !train[q].Label {
			continue // negatives stay random
		}
		r := int(ps.x[q]) + (q*7919)%(2*win+1) - win
		r = max(0, min(n-1, r))
		if r == int(ps.x[q]) {
			r = (r + 1) % n
		}
		train[q].Y = ps.items[r]
	}
	if hide {
		// The same pairs over items renumbered at random: the locality is
		// in the graph, not in the ids.
		pi := rand.New(rand.NewPCG(7, 7)).Perm(n)
		loc := make(map[int32]int, n)
		for i, it := range ps.items {
			loc[it] = i
		}
		for q := range train {
			train[q].X = ps.items[pi[loc[train[q].X]]]
			train[q].Y = ps.items[pi[loc[train[q].Y]]]
		}
	}
	for _, spec := range []Spec{{Model: ModelLMT, K: 100}, {Model: ModelMonomer, K: 20, N: 4}, {Model: ModelWNN}} {
		b.Run(spec.Model, func(b *testing.B) {
			spec, _ := spec.resolve()
			obj, _, theta := startObjective(b, feat, feat.Dim(), train, spec, rand.New(rand.NewPCG(1, 1)))
			grad := make([]float64, len(theta))
			obj.eval(theta, grad)
			timeEvals(b, obj, theta, grad)
		})
	}
}

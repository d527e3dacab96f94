package models

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"testing"

	"monomer/graph"
	"monomer/imagefeat"
	"monomer/schema"
)

// BenchmarkObjectiveFullScale times one objective+gradient evaluation of LMT
// (K=100) and Monomer (K=20, N=4; benchSpecs for also_viewed's sizes) on a
// real run's image features and training pairs (the paper's Women's
// Clothing size: 659,566 × 4096 mapped matrix, 2 M pairs), beside a raw
// sgemm of the same shapes in the same process. It runs only with
// MONOMER_BENCH_RUN set to a run directory of an image experiment
// (…/features/image.arrow, …/split/pairs.parquet); at that size one
// evaluation is 10–20 CPU-seconds, so use -benchtime 2x.
//
// The raw sgemm multiplies on the mapped rows in place (copying 591 k rows
// out, as rawSgemmCPU does, would put 9.7 GB on the heap beside the 10.8 GB
// page cache): the evaluation's blocks of rowBlock items in its item
// groups and workers, each as rowBlock contiguous rows starting at the
// block's first item, in two gemms where those rows cross a record batch
// (split-blocks). So the ceiling multiplies exactly items × F × C, all from
// the mapping, where the evaluation also multiplies gap rows and copies
// the blocks it cannot take in place (copied-blocks).
//
// The evaluations and the raw sgemm run under the pprof labels
// phase=eval and phase=sgemm, so a -test.cpuprofile can be cut to the
// timed evaluations (go tool pprof -tagfocus phase=eval).
func BenchmarkObjectiveFullScale(b *testing.B) {
	run := os.Getenv("MONOMER_BENCH_RUN")
	if run == "" {
		b.Skip("MONOMER_BENCH_RUN=<run dir of an image experiment>")
	}

	m, err := imagefeat.OpenMatrix(filepath.Join(run, "features", "image.arrow"))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	train, err := benchTrainPairs(filepath.Join(run, "split", "pairs.parquet"))
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("blas: %s\nmatrix: %d × %d, train pairs: %d\n", BLAS(), m.Rows(), m.Dim(), len(train))
	dim := m.Dim()
	for _, spec := range benchSpecs(b) {
		b.Run(spec.Model, func(b *testing.B) {
			spec, _ := spec.resolve()
			obj, ps, theta := startObjective(b, m, dim, train, spec, rand.New(rand.NewPCG(1, 1)))
			grad := make([]float64, len(theta))
			printBits(spec, obj.eval(theta, grad), grad) // buffers, and the page cache warm
			cols := (len(theta) - 1) / dim
			raw, split := math.NaN(), math.NaN()
			if spec.Model != ModelWNN { // WNN has no product to compare with
				pprof.Do(b.Context(), pprof.Labels("phase", "sgemm"), func(context.Context) {
					raw, split = rawSgemmMappedCPU(m, ps.items, dim, cols, 2)
				})
			}
			cpu, best := timeEvals(b, obj, theta, grad)
			flops := 2 * 2 * float64(len(ps.items)) * float64(dim) * float64(cols)
			b.ReportMetric(flops/cpu/1e9, "GFLOP/cpu-s")
			b.ReportMetric(raw, "sgemm-cpu-s")
			b.ReportMetric(flops/raw/1e9, "sgemm-GFLOP/cpu-s")
			b.ReportMetric(raw/cpu, "sgemm-ratio")
			b.ReportMetric(raw/best, "sgemm-ratio-best")
			b.ReportMetric(float64(len(ps.items)), "items")
			b.ReportMetric(split, "split-blocks")
			b.ReportMetric(copiedBlocks(obj), "copied-blocks")
			b.ReportMetric(sparseDensity(obj), "sparse-density")
			b.ReportMetric(productsPerPair(obj), "products/pair")
		})
	}
}

// benchSpecs are the models the full-scale benchmarks time, at the paper's
// sizes for also_bought (LMT K=100, Monomer K=20, N=4), or for also_viewed
// (K=50, K=10, N=4, paper §V) with MONOMER_BENCH_GRAPH=also_viewed.
func benchSpecs(b *testing.B) []Spec {
	k, mk := 100, 20
	switch g := os.Getenv("MONOMER_BENCH_GRAPH"); g {
	case "", "also_bought":
	case "also_viewed":
		k, mk = 50, 10
	default:
		b.Fatalf("MONOMER_BENCH_GRAPH=%q: want also_bought or also_viewed", g)
	}
	return []Spec{{Model: ModelLMT, K: k}, {Model: ModelMonomer, K: mk, N: 4}, {Model: ModelWNN}}
}

// timeEvals times the benchmark's evaluations (value and gradient) under
// the pprof label phase=eval, reports s/eval and cpu-s/eval, and returns
// the CPU-seconds an evaluation and those of the fastest one.
func timeEvals(b *testing.B, obj *objective, theta, grad []float64) (cpu, best float64) {
	cpu0 := cpuSeconds()
	best = math.Inf(1)
	b.ResetTimer()
	pprof.Do(b.Context(), pprof.Labels("phase", "eval"), func(context.Context) {
		for b.Loop() {
			c := cpuSeconds()
			obj.eval(theta, grad)
			best = min(best, cpuSeconds()-c)
		}
	})
	cpu = (cpuSeconds() - cpu0) / float64(b.N)
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/eval")
	b.ReportMetric(cpu, "cpu-s/eval")
	return cpu, best
}

// benchTrainPairs reads the training pairs of a split stage's pairs.parquet,
// in table order, as the train stage does.
func benchTrainPairs(path string) ([]graph.Pair, error) {
	var out []graph.Pair
	err := schema.Read(context.Background(), path, func(c *schema.Cols) error {
		x, y, label, split := c.Int32s("x_idx"), c.Int32s("y_idx"), c.Int8s("label"), c.Strings("split")
		if c.Err() != nil {
			return nil
		}
		for i := range x {
			if split[i] == graph.Train.String() {
				out = append(out, graph.Pair{X: x[i], Y: y[i], Label: label[i] == 1, Split: graph.Train})
			}
		}
		return nil
	})
	return out, err
}

// rawSgemmMappedCPU is rawSgemmCPU on the mapped rows in place: the two
// products P = X·W and Xᵀ·G over the evaluation's blocks (see
// BenchmarkObjectiveFullScale), fastest of reps repetitions. It also returns
// the share of blocks split in two at a record batch.
func rawSgemmMappedCPU(m *imagefeat.Matrix, items []int32, dim, c, reps int) (cpu, split float64) {
	n := len(items)
	w, p := make([]float32, dim*c), make([]float32, n*c)
	for i := range w {
		w[i] = float32(i%7) * 0.01
	}
	groups := itemGroups(n)
	acc := make([][]float32, len(groups))
	for i := range acc {
		acc[i] = make([]float32, dim*c)
	}
	// Each block's rows, found once outside the timing: one in-place
	// segment, or two where the rows cross a record batch of the mapping.
	type segment struct {
		x      []float32
		lo, gi int // first item (row of P) and item group
	}
	var segs []segment
	nSplit, nBlocks := 0, 0
	for gi, g := range groups {
		for lo := g.lo; lo < g.hi; lo += rowBlock {
			r := min(lo+rowBlock, g.hi) - lo
			start := min(int(items[lo]), m.Rows()-r)
			nBlocks++
			if x := m.Block(start, start+r); x != nil {
				segs = append(segs, segment{x, lo, gi})
				continue
			}
			// The batch boundary: the largest k with rows start..k-1 in
			// one batch.
			k := start + sort.Search(r, func(j int) bool { return m.Block(start, start+j+1) == nil })
			nSplit++
			a, b := m.Block(start, k), m.Block(k, start+r)
			if len(a)+len(b) != r*dim {
				panic(fmt.Sprintf("rows %d..%d span more than two record batches", start, start+r))
			}
			segs = append(segs, segment{a, lo, gi}, segment{b, lo + k - start, gi})
		}
	}
	cpu = math.Inf(1)
	for range reps {
		cpu0 := cpuSeconds()
		runChunks(len(groups), 0, func(_, gi int) {
			for _, s := range segs {
				if s.gi != gi {
					continue
				}
				r := len(s.x) / dim
				gemm(false, r, c, dim, s.x, w, p[s.lo*c:(s.lo+r)*c])
				gemm(true, dim, c, r, s.x, p[s.lo*c:(s.lo+r)*c], acc[gi])
			}
		})
		cpu = min(cpu, cpuSeconds()-cpu0)
	}
	return cpu, float64(nSplit) / float64(nBlocks)
}

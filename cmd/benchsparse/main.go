// Command benchsparse measures the sparse products of LMT and Monomer
// (internal/csrkern) against the FMA peak of the CPU it runs on, both in
// CPU-seconds of the measuring thread (getrusage), so that other load on a
// shared machine costs it as little as possible. `make bench-sparse` runs it;
// BENCHMARKS.md has its current figures, and
// docs/notes/2026-11-25-sparse-products-fma-peak.md their history.
//
// Data: the synth world of the small scale (seed 1; 20,000 image items):
// its image features (synth eq. 4, the rows packed as the models pack them,
// non-zeros only) and its items' reviews through the pipeline's bag of
// words (bow.Build, 5000 terms). Shapes: the parameter matrix's columns C
// for LMT (K = 100, and 50 for also_viewed) and Monomer (C = (N+1)K + N:
// 104 for K = 20, N = 4, and 54 for K = 10).
//
// A shape's figure is the flops on non-zeros of one evaluation's two
// products, 2·nnz·C each (a multiply and an add a column), per CPU-second
// of forward plus backward as models does them: per item group, where
// csrkern.ByColumns (image rows) Cols.MulTo and Cols.AddTo, else (bags of
// words) RowMul and RowAcc row by row, W and the accumulator with rows
// csrkern.Stride(C) apart. "old" is RowMul and RowAcc row by row on the
// AVX2 path with rows C apart, the products before Cols and AVX-512 (since
// the AVX2 row kernels of kern_avx2_amd64.s, one pass over a row's
// non-zeros at any C ≤ 104, where the AVX2 tiles took two at C = 100).
// The last line is the slowest shape's figure against the peak.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"

	"monomer/bow"
	"monomer/internal/csrkern"
	"monomer/synth"
)

// maxGroups and groupRows mirror models' item groups (at most 16, whole
// blocks of 512 items), each with its own F×C accumulator.
const maxGroups, groupRows = 16, 512

type matrix struct {
	name      string
	rows, dim int
	ptr       []int
	idx       []int32
	val       []float32
}

func (m *matrix) row(i int) ([]int32, []float32) {
	return m.idx[m.ptr[i]:m.ptr[i+1]], m.val[m.ptr[i]:m.ptr[i+1]]
}

func (m *matrix) add(idx []int32, val []float32) {
	m.idx, m.val = append(m.idx, idx...), append(m.val, val...)
	m.ptr = append(m.ptr, len(m.idx))
	m.rows++
}

func main() {
	scale := flag.String("scale", "small", "synth scale of the generated world (small or larger)")
	reps := flag.Int("reps", 5, "measurements per figure; the least CPU time is kept (other load only adds)")
	minFlops := flag.Float64("gflop", 5, "GFLOP per measurement of a product")
	limit := flag.String("path", "", `"avx2" or "go": measure that path's kernels (and, for avx2, the AVX2 FMA peak) as on a CPU without the wider ones`)
	flag.Parse()
	if *limit != "" {
		csrkern.Limit(*limit)
		if csrkern.Path() != *limit {
			fmt.Fprintf(os.Stderr, "benchsparse: -path %s: kernels %s in use (the CPU lacks it, or the name is unknown)\n", *limit, csrkern.Path())
			os.Exit(2)
		}
	}
	if err := run(*scale, *reps, *minFlops*1e9); err != nil {
		fmt.Fprintln(os.Stderr, "benchsparse:", err)
		os.Exit(1)
	}
}

func run(scale string, reps int, minFlops float64) error {
	runtime.LockOSThread() // RUSAGE_THREAD then measures this goroutine's work only
	cfg, err := synth.Scale(scale)
	if err != nil {
		return err
	}
	w, err := synth.NewWorld(cfg, 1)
	if err != nil {
		return err
	}
	img, words, err := data(w)
	if err != nil {
		return err
	}
	fmt.Printf("CPU: %s; kernels: %s; Go %s, GOMAXPROCS %d\n", cpuName(), csrkern.Path(), runtime.Version(), runtime.GOMAXPROCS(0))
	for _, m := range []*matrix{img, words} {
		fmt.Printf("data %s: %s\n", m.name, describe(m))
	}

	loop, kind, perIter := fmaLoop(csrkern.Path() != "avx512")
	peak := 0.0
	if loop != nil {
		n := 50_000_000
		for range reps {
			s := cpuSeconds(func() { loop(n) })
			peak = max(peak, float64(n)*perIter/s/1e9)
		}
	}
	fmt.Printf("FMA peak: %.1f GFLOP/CPU-s (%s, 12 independent accumulators, best of %d)\n", peak, kind, reps)

	shapes := []struct {
		name string
		c    int
	}{{"LMT K=100", 100}, {"Monomer K=20 N=4", 104}, {"LMT K=50", 50}, {"Monomer K=10 N=4", 54}}
	fmt.Printf("%-17s %-5s %4s  %8s %8s %8s  %8s %8s %8s  (GFLOP/CPU-s on non-zeros)\n",
		"shape", "data", "C", "forward", "backward", "both", "old fwd", "old bwd", "old both")
	slowest, slowName := 0.0, ""
	for _, m := range []*matrix{img, words} {
		for _, sh := range shapes {
			f, b, of, ob := measure(m, sh.c, reps, minFlops)
			both := 2 / (1/f + 1/b)
			fmt.Printf("%-17s %-5s %4d  %8.1f %8.1f %8.1f  %8.1f %8.1f %8.1f\n",
				sh.name, m.name, sh.c, f, b, both, of, ob, 2/(1/of+1/ob))
			if slowName == "" || both < slowest {
				slowest, slowName = both, sh.name+" on "+m.name
			}
		}
	}
	// What a product that reads one row of W a non-zero can reach at best:
	// the same kernel (RowMul) with W small enough to stay in L1, or in L2.
	for _, sh := range []struct{ wRows, c int }{{16, 100}, {1024, 100}, {16, 50}, {1024, 50}} {
		g := ceiling(sh.wRows, sh.c, reps, minFlops)
		fmt.Printf("ceiling: RowMul, C=%d, W of %d rows (%d KB): %.1f GFLOP/CPU-s, ratio %.2f\n",
			sh.c, sh.wRows, sh.wRows*csrkern.Stride(sh.c)*4>>10, g, g/max(peak, 1e-9))
	}
	fmt.Printf("slowest: %s (forward and backward together)\n", slowName)
	ratio := 0.0
	if peak > 0 {
		ratio = slowest / peak
	}
	fmt.Printf("sparse: %.1f GFLOP/CPU-s on non-zeros, FMA peak %.1f GFLOP/CPU-s, ratio %.2f\n", slowest, peak, ratio)
	return nil
}

// data generates the world's image rows (items with an image) and bags of
// words (items with reviews).
func data(w *synth.World) (img, words *matrix, err error) {
	f := w.Config.FeatureDim
	img = &matrix{name: "image", dim: f, ptr: []int{0}}
	dense := make([]float32, f)
	var idx []int32
	var val []float32
	var docs []bow.Doc
	var bowItems int32
	for i, it := range w.Items {
		if it.HasImage {
			w.Feature(i, dense)
			idx, val = idx[:0], val[:0]
			for j, v := range dense {
				if v != 0 {
					idx, val = append(idx, int32(j)), append(val, v)
				}
			}
			img.add(idx, val)
		}
		if it.Reviews > 0 {
			for _, text := range w.ReviewTexts(i) {
				docs = append(docs, bow.Doc{Item: bowItems, Text: text})
			}
			bowItems++
		}
	}
	res, err := bow.Build(context.Background(), bow.SliceDocs(docs), int(bowItems), bow.Options{})
	if err != nil {
		return nil, nil, err
	}
	words = &matrix{name: "bow", dim: res.Matrix.Dim(), ptr: []int{0}}
	for i := range res.Matrix.Rows() {
		words.add(res.Matrix.SparseRow(i))
	}
	return img, words, nil
}

func describe(m *matrix) string {
	n := make([]int, m.rows)
	for i := range n {
		n[i] = m.ptr[i+1] - m.ptr[i]
	}
	sort.Ints(n)
	q := func(p float64) int { return n[int(p*float64(len(n)-1))] }
	return fmt.Sprintf("%d rows × %d, %d non-zeros (density %.3f), non-zeros a row: mean %.0f, min %d, 10%% %d, median %d, 90%% %d, max %d",
		m.rows, m.dim, len(m.idx), float64(len(m.idx))/float64(m.rows)/float64(m.dim),
		float64(len(m.idx))/float64(m.rows), n[0], q(0.1), q(0.5), q(0.9), n[len(n)-1])
}

// measure returns the forward and backward GFLOP/CPU-s of the current
// kernels and of the old ones (AVX2 RowMul, RowAcc), each the best of reps.
func measure(m *matrix, c, reps int, minFlops float64) (fwd, bwd, oldFwd, oldBwd float64) {
	// W as models lays it out for sparse rows (rows csrkern.Stride(c) apart,
	// aligned), and as it was before (rows c apart).
	ws := csrkern.Stride(c)
	wm, wOld := csrkern.Floats(m.dim*ws), make([]float32, m.dim*c)
	for r := range m.dim {
		for k := range c {
			v := float32((r*c+k)%97)/97 - 0.5
			wm[r*ws+k], wOld[r*c+k] = v, v
		}
	}
	p := make([]float32, m.rows*c)
	for i := range p {
		p[i] = float32(i%89)/89 - 0.5
	}
	var groups [][2]int
	blocks := (m.rows + groupRows - 1) / groupRows
	ng := min(blocks, maxGroups)
	for g := range ng {
		groups = append(groups, [2]int{g * blocks / ng * groupRows, min((g+1)*blocks/ng*groupRows, m.rows)})
	}
	// Each group by columns or row by row, as models decides.
	cols := make([]*csrkern.Cols, len(groups))
	for g, gr := range groups {
		if csrkern.ByColumns(gr[1]-gr[0], m.dim, c, m.ptr[gr[1]]-m.ptr[gr[0]]) {
			cols[g] = csrkern.NewCols(gr[1]-gr[0], m.dim, c, func(i int) ([]int32, []float32) { return m.row(gr[0] + i) })
		}
	}
	// The accumulator as models lays it out for sparse rows (as W), and as
	// it was before.
	acc, accOld := csrkern.Floats(m.dim*ws), make([]float32, m.dim*c)
	flops := 2 * float64(len(m.idx)) * float64(c)
	forwardOld := func() {
		for i := range m.rows {
			idx, val := m.row(i)
			csrkern.RowMul(p[i*c:(i+1)*c], idx, val, wOld, c)
		}
	}
	// forwardNew is models' forward: by columns where ByColumns (image
	// rows), else RowMul row by row.
	forwardNew := func() {
		for g, gr := range groups {
			if cols[g] != nil {
				cols[g].MulTo(p[gr[0]*c:gr[1]*c], wm, c, ws)
				continue
			}
			for i := gr[0]; i < gr[1]; i++ {
				idx, val := m.row(i)
				csrkern.RowMul(p[i*c:(i+1)*c], idx, val, wm, ws)
			}
		}
	}
	backward := func() {
		for g, gr := range groups {
			clear(acc)
			if cols[g] != nil {
				cols[g].AddTo(acc, p[gr[0]*c:gr[1]*c], c, ws)
				continue
			}
			for i := gr[0]; i < gr[1]; i++ {
				idx, val := m.row(i)
				csrkern.RowAcc(acc, idx, val, p[i*c:(i+1)*c], ws)
			}
		}
	}
	oldBackward := func() {
		for _, gr := range groups {
			clear(accOld)
			for i := gr[0]; i < gr[1]; i++ {
				idx, val := m.row(i)
				csrkern.RowAcc(accOld, idx, val, p[i*c:(i+1)*c], c)
			}
		}
	}
	fwd, bwd = rate(reps, minFlops, flops, forwardNew), rate(reps, minFlops, flops, backward)
	restore := csrkern.Limit("avx2")
	oldFwd, oldBwd = rate(reps, minFlops, flops, forwardOld), rate(reps, minFlops, flops, oldBackward)
	restore()
	return fwd, bwd, oldFwd, oldBwd
}

// ceiling times RowMul over rows of 64 non-zeros (a bag of words' median)
// whose columns are drawn with replacement from a W of wRows rows (16 rows
// have fewer than 64; RowMul does not mind repeats): with W in L1 or L2 it
// is the best the gather of a W row per non-zero does on this CPU.
func ceiling(wRows, c, reps int, minFlops float64) float64 {
	const rows, nnz = 4096, 64
	ws := csrkern.Stride(c)
	w := csrkern.Floats(wRows * ws)
	for i := range w {
		w[i] = float32(i%97)/97 - 0.5
	}
	m := &matrix{dim: wRows, ptr: []int{0}}
	rng := rand.New(rand.NewPCG(1, 1))
	idx, val := make([]int32, nnz), make([]float32, nnz)
	for range rows {
		for j := range idx {
			idx[j], val[j] = rng.Int32N(int32(wRows)), float32(j%13)/13
		}
		slices.Sort(idx)
		m.add(idx, val)
	}
	p := make([]float32, c)
	return rate(reps, minFlops, 2*float64(len(m.idx))*float64(c), func() {
		for i := range m.rows {
			idx, val := m.row(i)
			csrkern.RowMul(p, idx, val, w, ws)
		}
	})
}

// rate is the best of reps measurements of fn, each fn run often enough
// for about minFlops (flops a run), in GFLOP per CPU-second.
func rate(reps int, minFlops, flops float64, fn func()) float64 {
	passes := max(1, int(minFlops/flops+0.5))
	best := 0.0
	for range reps {
		s := cpuSeconds(func() {
			for range passes {
				fn()
			}
		})
		best = max(best, float64(passes)*flops/s/1e9)
	}
	return best
}

// cpuSeconds is the CPU time fn takes on this (locked) thread.
func cpuSeconds(fn func()) float64 {
	t0 := threadCPU()
	fn()
	return (threadCPU() - t0).Seconds()
}

func cpuName() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

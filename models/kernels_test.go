package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"

	"monomer/graph"
)

// gradProblem builds the training objective of model name on a random small
// problem, float64 kernels, and a random point θ = [c, Θ] where related and
// unrelated pairs fall on both sides of c. The objective scales the
// features by 0.37 (see featureScale).
func gradProblem(t testing.TB, name, kind string, rng *rand.Rand) (model, *objective, []float64) {
	const items, dim, k, n = 14, 7, 3, 3
	var feat Features = randDense(rng, items, dim)
	if kind == "sparse" {
		feat = randSparse(rng, items, dim, 3)
	}
	src, ps, err := prepare(feat, dim, randPairs(rng, items, 60), "train")
	if err != nil {
		t.Fatal(err)
	}
	m, err := newModel(name, dim, k, n)
	if err != nil {
		t.Fatal(err)
	}
	obj := newObjective(m.evaluator(src, ps, true, 3), ps.labels)
	obj.lambda = 0.01
	// A feature scale other than 1, so the check covers Θ ↦ s·Θ too.
	obj.scale = 0.37
	theta := make([]float64, 1+m.size())
	m.draw(theta[1:], rng, 1)
	for i := range theta[1:] {
		theta[1+i] *= 0.5 + rng.Float64() // break WNN's uniform start
	}
	theta[0] = median(obj.distances(theta[1:]))
	return m, obj, theta
}

// relErr is ‖a − b‖ / max(‖a‖, ‖b‖).
func relErr(a, b []float64) float64 {
	var d, na, nb float64
	for i := range a {
		d += (a[i] - b[i]) * (a[i] - b[i])
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 && nb == 0 {
		return 0
	}
	return math.Sqrt(d / max(na, nb))
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestGradients checks every analytic gradient block, c included, against
// central differences in float64; Monomer also with U's penalty weighted
// (Spec.GatePenalty).
func TestGradients(t *testing.T) {
	tests := []struct {
		model, features string
		gate            float64 // U's penalty weight; 0: unweighted
	}{
		{ModelWNN, "dense", 0}, {ModelWNN, "sparse", 0},
		{ModelLMT, "dense", 0}, {ModelLMT, "sparse", 0},
		{ModelMonomer, "dense", 0}, {ModelMonomer, "sparse", 0},
		{ModelMonomer, "dense", 30}, {ModelMonomer, "sparse", 0.01},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%s/gate=%g", tc.model, tc.features, tc.gate), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 1))
			m, obj, theta := gradProblem(t, tc.model, tc.features, rng)
			if tc.gate > 0 {
				obj.penalty = m.(monomer).penalty(tc.gate)
			}
			grad := make([]float64, len(theta))
			obj.eval(theta, grad)
			fd := make([]float64, len(theta))
			x := slices.Clone(theta)
			for i := range x {
				h := 1e-5 * max(1, math.Abs(x[i]))
				x[i] = theta[i] + h
				fp := obj.eval(x, nil)
				x[i] = theta[i] - h
				fm := obj.eval(x, nil)
				x[i] = theta[i]
				fd[i] = (fp - fm) / (2 * h)
			}
			if e := relErr(grad[:1], fd[:1]); !(e < 1e-6) {
				t.Errorf("c: relative error %.3g (analytic %v, numeric %v)", e, grad[0], fd[0])
			}
			pa, pf := m.params(grad[1:]), m.params(fd[1:])
			for i := range pa {
				e := relErr(pa[i].Data, pf[i].Data)
				if !(e < 1e-6) {
					t.Errorf("%s: relative error %.3g", pa[i].Name, e)
				}
				t.Logf("%s: relative error %.2g, ‖∇‖ %.2g", pa[i].Name, e, math.Sqrt(dot(pa[i].Data, pa[i].Data)))
			}
		})
	}
}

func TestPairLogLik(t *testing.T) {
	tests := []struct {
		name    string
		z       float64
		related bool
		wantLL  float64
		wantDz  float64
	}{
		{name: "related at 0", z: 0, related: true, wantLL: -math.Ln2, wantDz: 0.5},
		{name: "unrelated at 0", z: 0, related: false, wantLL: -math.Ln2, wantDz: -0.5},
		{name: "related far right", z: 800, related: true, wantLL: 0, wantDz: 0},
		{name: "related far left", z: -800, related: true, wantLL: -800, wantDz: 1},
		{name: "unrelated far right", z: 800, related: false, wantLL: -800, wantDz: -1},
		{name: "unrelated far left", z: -800, related: false, wantLL: 0, wantDz: 0},
		{name: "related tail keeps precision", z: 40, related: true, wantLL: -math.Exp(-40), wantDz: math.Exp(-40)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ll, dz := pairLogLik(tc.z, tc.related)
			if math.Abs(ll-tc.wantLL) > 1e-12*max(1, math.Abs(tc.wantLL)) || math.Abs(dz-tc.wantDz) > 1e-12*max(1e-300, math.Abs(tc.wantDz))+1e-300 {
				t.Errorf("pairLogLik(%v, %v) = %v, %v; want %v, %v", tc.z, tc.related, ll, dz, tc.wantLL, tc.wantDz)
			}
		})
	}
}

// TestPairLogLikBits: pairLogLik, which shares one exp between the two
// functions, gives the bits of softplusStable and sigmoidStable called
// apart, over a sweep of z with both signs, zero and NaN (NaN for NaN).
func TestPairLogLikBits(t *testing.T) {
	zs := []float64{0, math.Copysign(0, -1), math.NaN(), 1e-300, 745, -745, 800, -800}
	for z := -60.0; z <= 60; z += 0.0137 {
		zs = append(zs, z)
	}
	for _, z := range zs {
		for _, rel := range []bool{true, false} {
			wantLL, wantDz := -softplusStable(z), -sigmoidStable(z)
			if rel {
				wantLL, wantDz = -softplusStable(-z), sigmoidStable(-z)
			}
			ll, dz := pairLogLik(z, rel)
			same := func(a, b float64) bool {
				return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
			}
			if !same(ll, wantLL) || !same(dz, wantDz) {
				t.Fatalf("pairLogLik(%v, %v) = %v, %v; apart %v, %v", z, rel, ll, dz, wantLL, wantDz)
			}
		}
	}
}

// FuzzPairLogLik: for any finite z the log-likelihood is finite and <= 0,
// its derivative within [-1, 1], and the two labels' probabilities sum to 1.
func FuzzPairLogLik(f *testing.F) {
	for _, z := range []float64{0, 1, -1, 36.7, -745, 710, 1e300} {
		f.Add(z)
	}
	f.Fuzz(func(t *testing.T, z float64) {
		if math.IsNaN(z) || math.IsInf(z, 0) {
			return
		}
		for _, rel := range []bool{true, false} {
			ll, dz := pairLogLik(z, rel)
			if math.IsNaN(ll) || math.IsInf(ll, 0) && math.Abs(z) < 1e300 || ll > 0 || !(math.Abs(dz) <= 1) {
				t.Fatalf("pairLogLik(%v, %v) = %v, %v", z, rel, ll, dz)
			}
		}
		l1, _ := pairLogLik(z, true)
		l0, _ := pairLogLik(z, false)
		if s := math.Exp(l1) + math.Exp(l0); math.Abs(s-1) > 1e-12 {
			t.Fatalf("probabilities at z=%v sum to %v", z, s)
		}
	})
}

func TestItemGroups(t *testing.T) {
	for _, n := range []int{0, 1, rowBlock, rowBlock + 1, 40 * rowBlock, 40*rowBlock + 7, 300 * rowBlock, 412082, 659566} {
		g := itemGroups(n)
		if len(g) > maxItemGroups || len(g) > 16 && n/len(g) < minGroupBlocks*rowBlock {
			t.Fatalf("n=%d: %d groups", n, len(g))
		}
		at := 0
		for _, s := range g {
			if s.lo != at || s.hi <= s.lo || (s.lo%rowBlock) != 0 {
				t.Fatalf("n=%d: groups %v", n, g)
			}
			at = s.hi
		}
		if at != n {
			t.Fatalf("n=%d: groups %v end at %d", n, g, at)
		}
	}
}

// TestItemGroupsManyCores: at Electronics' and Women's sizes the items
// make 64 groups (a task each for up to 64 cores), of whole blocks within
// one block of each other.
func TestItemGroupsManyCores(t *testing.T) {
	for _, n := range []int{412082, 659566} {
		g := itemGroups(n)
		if len(g) != 64 {
			t.Fatalf("n=%d: %d groups, want 64", n, len(g))
		}
		lo, hi := n, 0
		for _, s := range g[:len(g)-1] { // the last one may end in a part block
			lo, hi = min(lo, s.hi-s.lo), max(hi, s.hi-s.lo)
		}
		if hi-lo > rowBlock {
			t.Fatalf("n=%d: groups of %d to %d items", n, lo, hi)
		}
	}
}

// TestEvalSameBitsManyGroups: one evaluation's value and gradient have the
// same bits at each of sameBitsProcs on 64 item groups (the most there
// are), so GOMAXPROCS 64 has a group a worker and 3 or 7 an uneven share;
// dense and sparse rows, LMT, Monomer and WNN.
func TestEvalSameBitsManyGroups(t *testing.T) {
	const items = maxItemGroups * minGroupBlocks * rowBlock
	if g := len(itemGroups(items)); g != maxItemGroups {
		t.Fatalf("%d items make %d groups, want %d", items, g, maxItemGroups)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	feats := map[string]Features{"dense": randDense(rng, items, 16), "sparse": randSparse(rng, items, 40, 5)}
	pairs := randPairs(rng, items, 120000)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range []struct{ model, features string }{
		{ModelLMT, "dense"}, {ModelLMT, "sparse"}, {ModelMonomer, "dense"}, {ModelMonomer, "sparse"}, {ModelWNN, "sparse"},
	} {
		spec := Spec{Model: tc.model, K: 8, N: 3}
		var want []uint64
		for _, procs := range sameBitsProcs {
			runtime.GOMAXPROCS(procs)
			obj, _, theta := startObjective(t, feats[tc.features], feats[tc.features].Dim(), pairs, spec, rand.New(rand.NewPCG(5, 5)))
			grad := make([]float64, len(theta))
			bits := []uint64{math.Float64bits(obj.eval(theta, grad))}
			for _, v := range grad {
				bits = append(bits, math.Float64bits(v))
			}
			if want == nil {
				want = bits
			} else if !slices.Equal(bits, want) {
				t.Fatalf("%s on %s rows: value or gradient differs between GOMAXPROCS 1 and %d", tc.model, tc.features, procs)
			}
		}
	}
}

// TestTrainDeterministic: GOMAXPROCS 1, 2, 3, 7, 16 and 64 give bit-identical parameters,
// on a problem large enough for several item groups, pair chunks and gemm
// blocks.
func TestTrainDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const items = 3000
	// wide: LMT's 600×64 parameters are several tasks of the L-BFGS vector
	// chunks, and 600 feature rows several spans of the gradient reduction.
	feats := map[string]Features{"dense": randDense(rng, items, 24), "sparse": randSparse(rng, items, 40, 5),
		"wide": randDense(rng, items, 600)}
	pairs := randPairs(rng, items, 9000)
	// Learnable labels: related iff the ends share their first coordinate's sign.
	for i, p := range pairs {
		d := feats["dense"].(*denseFeat)
		pairs[i].Label = (d.Row(int(p.X))[0] > 0) == (d.Row(int(p.Y))[0] > 0)
	}
	train, valid := pairs[:8000], pairs[8000:]
	for _, tc := range []struct {
		model, features string
		k               int
	}{
		{ModelMonomer, "dense", 4}, {ModelMonomer, "sparse", 4}, {ModelWNN, "dense", 4}, {ModelWNN, "sparse", 4},
		{ModelLMT, "dense", 4}, {ModelLMT, "wide", 64},
	} {
		t.Run(tc.model+"/"+tc.features, func(t *testing.T) {
			spec := Spec{Model: tc.model, K: tc.k, N: 3, Lambdas: []float64{0, 1e-4}, MaxIter: 8, ValidEvery: 3}
			checkSameAtProcs(t, feats[tc.features], train, valid, spec)
		})
	}
}

// sameBitsProcs are the GOMAXPROCS the same-bits tests compare: odd counts
// catch a split that assumes an even one, 16 and 64 more workers than item
// groups or vector tasks of a small problem (64 as many as the item groups
// of a large one).
var sameBitsProcs = []int{1, 2, 3, 7, 16, 64}

// checkSameAtProcs trains spec at each of sameBitsProcs and fails unless
// the fits (c, λ, best iteration, every parameter, the grid) are
// bit-identical.
func checkSameAtProcs(t *testing.T, feat Features, train, valid []graph.Pair, spec Spec) {
	t.Helper()
	fits := make([]*Fit, len(sameBitsProcs))
	for i, procs := range sameBitsProcs {
		old := runtime.GOMAXPROCS(procs)
		f, err := Train(t.Context(), feat, train, valid, spec, rand.New(rand.NewPCG(7, 7)), nil)
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		fits[i] = f
	}
	a := fits[0]
	for i, b := range fits[1:] {
		p := sameBitsProcs[i+1]
		if a.C != b.C || a.Lambda != b.Lambda || a.BestIteration != b.BestIteration {
			t.Fatalf("GOMAXPROCS 1: c=%v λ=%v iter %d; GOMAXPROCS %d: c=%v λ=%v iter %d", a.C, a.Lambda, a.BestIteration, p, b.C, b.Lambda, b.BestIteration)
		}
		for i := range a.Params {
			if !slices.Equal(a.Params[i].Data, b.Params[i].Data) {
				t.Fatalf("%s differs between GOMAXPROCS 1 and %d", a.Params[i].Name, p)
			}
		}
		if fmt.Sprint(a.Grid) != fmt.Sprint(b.Grid) {
			t.Fatalf("grids differ at GOMAXPROCS 1 and %d:\n%v\n%v", p, a.Grid, b.Grid)
		}
	}
}

// benchSize is one objective-evaluation benchmark problem.
type benchSize struct {
	name         string
	items, pairs int
	dim, nnz     int     // nnz 0: dense features
	relu         float64 // dense rows of this density (ReLU-like), which prepare packs as sparse rows
	medium       bool
	// gaps: the feature matrix has items·10/9 rows and the pairs use a
	// random 90 % of them, as at Women's size, where about 10 % of the
	// rows have no training pair and the blocks of 512 items span more
	// rows than they hold.
	gaps bool
}

// benchSizes: the medium sizes (the 50k items, 200k pairs) take tens
// of seconds per evaluation with pure-Go sgemm, so they run only with
// MONOMER_BENCH=medium in the environment.
var benchSizes = []benchSize{
	{name: "dense-4096/items=5k/pairs=20k", items: 5000, pairs: 20000, dim: 4096},
	{name: "sparse-5000/items=50k/pairs=200k", items: 50000, pairs: 200000, dim: 5000, nnz: 50},
	{name: "relu-4096/items=10k/pairs=40k", items: 10000, pairs: 40000, dim: 4096, relu: 0.14},
	{name: "dense-4096/items=50k/pairs=200k", items: 50000, pairs: 200000, dim: 4096, medium: true},
	{name: "dense-4096/items=50k/pairs=200k/gaps=10%", items: 50000, pairs: 200000, dim: 4096, medium: true, gaps: true},
}

// BenchmarkObjective times one evaluation of the training objective with its
// gradient (float32 kernels, as in production) for LMT (K=100) and Monomer
// (K=20, N=4: the same embedding budget), and WNN beside them (no products:
// each pair reads both rows). GFLOP/s counts the two products X·W and Xᵀ·G,
// 2·F·C flops per dense item each (2·nnz·C sparse), which dominate.
func BenchmarkObjective(b *testing.B) {
	fmt.Printf("blas: %s\n", BLAS()) // the kernel every figure depends on
	for _, sz := range benchSizes {
		if sz.medium && os.Getenv("MONOMER_BENCH") != "medium" {
			continue
		}
		rng := rand.New(rand.NewPCG(1, 1))
		var feat Features
		nnz := float64(sz.items * sz.dim)
		rows := sz.items
		if sz.gaps {
			rows = sz.items * 10 / 9
		}
		switch {
		case sz.relu > 0:
			d := reluDense(rng, rows, sz.dim, sz.relu)
			feat, nnz = d, 0
			for _, v := range d.data {
				if v != 0 {
					nnz++
				}
			}
		case sz.nnz == 0:
			feat = randDense(rng, rows, sz.dim)
		default:
			sf := benchSparse(rng, sz.items, sz.dim, sz.nnz)
			feat = sf
			nnz = 0
			for _, r := range sf.idx {
				nnz += float64(len(r))
			}
		}
		pairs := randPairs(rng, sz.items, sz.pairs)
		if sz.gaps { // pair item i is row used[i]
			used := rng.Perm(rows)[:sz.items]
			for i := range pairs {
				pairs[i].X, pairs[i].Y = int32(used[pairs[i].X]), int32(used[pairs[i].Y])
			}
		}
		for _, spec := range []Spec{{Model: ModelLMT, K: 100}, {Model: ModelMonomer, K: 20, N: 4}, {Model: ModelWNN}} {
			b.Run(spec.Model+"/"+sz.name, func(b *testing.B) {
				spec, _ := spec.resolve()
				obj, ps, theta := startObjective(b, feat, sz.dim, pairs, spec, rng)
				grad := make([]float64, len(theta))
				obj.eval(theta, grad) // allocate buffers outside the timing
				cols := float64(len(theta)-1) / float64(sz.dim)
				// The ceiling: the same two products as raw sgemm on the
				// same blocks and workers, timed in this run.
				rawCPU := math.NaN()
				if sz.nnz == 0 && sz.relu == 0 && spec.Model != ModelWNN {
					rawCPU = rawSgemmCPU(feat.(Dense), ps.items, sz.dim, int(cols))
				}
				cpu0 := cpuSeconds()
				best := math.Inf(1) // the fastest evaluation, like rawSgemmCPU's best of three
				b.ResetTimer()
				for b.Loop() {
					c := cpuSeconds()
					obj.eval(theta, grad)
					best = min(best, cpuSeconds()-c)
				}
				sec := b.Elapsed().Seconds() / float64(b.N)
				b.ReportMetric(sec, "s/eval")
				// On a shared machine the process's CPU time is the steadier figure.
				cpu := (cpuSeconds() - cpu0) / float64(b.N)
				flops := 2 * 2 * nnz * cols
				b.ReportMetric(cpu, "cpu-s/eval")
				if spec.Model != ModelWNN { // WNN has no products: per-pair work only
					b.ReportMetric(flops/sec/1e9, "GFLOP/s")
					b.ReportMetric(flops/cpu/1e9, "GFLOP/cpu-s")
				}
				b.ReportMetric(float64(sz.pairs)/sec, "pairs/s")
				if !math.IsNaN(rawCPU) {
					// The raw sgemm's own rate: the BLAS's, which
					// BENCHMARKS.md, "BLAS kernel costs" compares.
					b.ReportMetric(flops/rawCPU/1e9, "sgemm-GFLOP/cpu-s")
					// ≥ 0.8 is the goal: the evaluation at 80 % of sgemm.
					b.ReportMetric(rawCPU/cpu, "sgemm-ratio")
					// Both sides best of several: less biased by a shared
					// machine's load than the mean evaluation against the
					// best raw sgemm.
					b.ReportMetric(rawCPU/best, "sgemm-ratio-best")
				}
				if sz.gaps {
					b.ReportMetric(copiedBlocks(obj), "copied-blocks")
				}
				// In an OpenBLAS build, the same raw sgemm and one
				// evaluation again with gonum's pure-Go gemm (the pure-Go
				// build's), on this run's data, so what OpenBLAS buys is one
				// run's ratio rather than two builds' runs set side by side.
				// The small size only: pure Go takes seconds there, minutes
				// at the medium ones.
				if withPureGoBLAS != nil && !math.IsNaN(rawCPU) && !sz.medium {
					var goRaw, goEval float64
					withPureGoBLAS(func() {
						goRaw = rawSgemmCPU(feat.(Dense), ps.items, sz.dim, int(cols))
						c := cpuSeconds()
						obj.eval(theta, grad)
						goEval = cpuSeconds() - c
					})
					b.ReportMetric(flops/goRaw/1e9, "gonum-sgemm-GFLOP/cpu-s")
					b.ReportMetric(goRaw/rawCPU, "sgemm-speedup-vs-gonum")
					b.ReportMetric(goEval/best, "eval-speedup-vs-gonum")
				}
			})
		}
	}
}

// withPureGoBLAS runs fn with gonum's pure-Go gemm in place of OpenBLAS's
// and restores it; nil in the pure-Go build, where there is nothing to
// compare with (blas_openblas_test.go sets it).
var withPureGoBLAS func(fn func())

// startObjective builds spec's float32 training objective over pairs and
// its starting point, as Train does (median distance 1, c at it).
func startObjective(tb testing.TB, feat Features, dim int, pairs []graph.Pair, spec Spec, rng *rand.Rand) (*objective, *pairSet, []float64) {
	tb.Helper()
	src, ps, err := prepare(feat, dim, pairs, "train")
	if err != nil {
		tb.Fatal(err)
	}
	m, err := newModel(spec.Model, dim, spec.K, spec.N)
	if err != nil {
		tb.Fatal(err)
	}
	obj := newObjective(m.evaluator(src, ps, false, 0), ps.labels)
	return obj, ps, (&trainer{model: m, train: obj}).init(src, ps, rng)
}

// copiedBlocks is the share of the evaluation's row blocks whose rows it
// copies out of the matrix rather than multiplying in place, by the
// evaluator's own spans (projEval.spans); NaN for an evaluator without
// dense blocks (WNN, sparse features).
func copiedBlocks(obj *objective) float64 {
	e, ok := obj.ev.(*projEval[float32])
	if !ok || len(e.spans) == 0 {
		return math.NaN()
	}
	copied := 0
	for _, b := range e.spans {
		if !b.ok {
			copied++
		}
	}
	return float64(copied) / float64(len(e.spans))
}

// sparseDensity is the share of non-zero values in the rows the
// evaluation multiplies as sparse rows, NaN where it multiplies dense ones.
func sparseDensity(obj *objective) float64 {
	var d float64
	switch e := obj.ev.(type) {
	case *projEval[float32]:
		d = e.src.density(e.ps.items)
	case *wnnEval[float32]:
		d = e.src.density(e.ps.items)
	}
	if d == 0 {
		return math.NaN()
	}
	return d
}

// productsPerPair is the mean count of a WNN evaluator's pair products on
// sparse rows (wnnEval.z), NaN for other evaluators.
func productsPerPair(obj *objective) float64 {
	e, ok := obj.ev.(*wnnEval[float32])
	if !ok || e.z == nil {
		return math.NaN()
	}
	total := 0
	for _, z := range e.z {
		total += len(z.vy)
	}
	return float64(total) / float64(len(e.ps.x))
}

// rawSgemmCPU is the CPU-seconds of the evaluation's two products alone,
// P = X·W and Xᵀ·G, as raw sgemm on the same 512-row blocks (rows copied
// once, outside the timing) over GOMAXPROCS workers: the best the evaluation
// could do. It takes the fastest of three repetitions.
func rawSgemmCPU(d Dense, items []int32, dim, c int) float64 {
	n := len(items)
	x := make([]float32, n*dim)
	denseRows(d, items, dim, x)
	w, p := make([]float32, dim*c), make([]float32, n*c)
	for i := range w {
		w[i] = float32(i%7) * 0.01
	}
	groups := itemGroups(n)
	acc := make([][]float32, len(groups))
	for i := range acc {
		acc[i] = make([]float32, dim*c)
	}
	best := math.Inf(1)
	for range 3 {
		cpu0 := cpuSeconds()
		runChunks(len(groups), 0, func(_, gi int) {
			g := groups[gi]
			for lo := g.lo; lo < g.hi; lo += rowBlock {
				hi := min(lo+rowBlock, g.hi)
				gemm(false, hi-lo, c, dim, x[lo*dim:hi*dim], w, p[lo*c:hi*c])
				gemm(true, dim, c, hi-lo, x[lo*dim:hi*dim], p[lo*c:hi*c], acc[gi])
			}
		})
		best = min(best, cpuSeconds()-cpu0)
	}
	return best
}

// cpuSeconds is the process's user+system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// benchSparse draws exactly nnz distinct columns a row, BoW-like.
func benchSparse(rng *rand.Rand, rows, dim, nnz int) *sparseFeat {
	m := &sparseFeat{dim: dim, idx: make([][]int32, rows), val: make([][]float32, rows)}
	for i := range rows {
		cols := map[int32]bool{}
		for len(cols) < nnz {
			cols[int32(rng.IntN(dim))] = true
		}
		for c := range cols {
			m.idx[i] = append(m.idx[i], c)
		}
		slices.Sort(m.idx[i])
		for range m.idx[i] {
			m.val[i] = append(m.val[i], 1/float32(nnz))
		}
	}
	return m
}

// batchedDense stores rows in batches of batch rows, as a mapped Arrow
// file its record batches: Block is nil across a batch boundary.
type batchedDense struct {
	*denseFeat
	batch int
}

func (m batchedDense) Block(lo, hi int) []float32 {
	if lo/m.batch != (hi-1)/m.batch {
		return nil
	}
	return m.denseFeat.Block(lo, hi)
}

// TestDirectBlocks: multiplying on the mapped rows (whole spans, gap rows
// included) gives what copying the rows gives, for blocks without gaps,
// with a few gaps and with too many (copied), forward and backward; and
// where the rows are stored in batches, a block that crosses batches is
// multiplied in place in segments, not copied.
func TestDirectBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const rows, dim = 4000, 64
	feat := randDense(rng, rows, dim)
	// Items 0..1499 all used; 1500..2999 all but every 10th (spans within
	// maxSpan); 3000..3999 every other one (spans too wide: copied).
	var used []int32
	for i := range int32(rows) {
		if i < 1500 || (i < 3000 && i%10 != 3) || (i >= 3000 && i%2 == 0) {
			used = append(used, i)
		}
	}
	pairs := make([]graph.Pair, 12000)
	for i := range pairs {
		pairs[i] = graph.Pair{X: used[rng.IntN(len(used))], Y: used[rng.IntN(len(used))], Label: rng.IntN(2) == 0}
	}
	for _, model := range []string{ModelLMT, ModelMonomer} {
		t.Run(model, func(t *testing.T) {
			spec, _ := Spec{Model: model, K: 6, N: 3}.resolve()
			eval := func(f Features) (float64, []float64, float64) {
				obj, _, theta := startObjective(t, f, dim, pairs, spec, rand.New(rand.NewPCG(9, 9)))
				grad := make([]float64, len(theta))
				return obj.eval(theta, grad), grad, copiedBlocks(obj)
			}
			fc, gc, _ := eval(plainDense{feat})
			fd, gd, cd := eval(feat)
			// Batches of 300 rows: most blocks of 512 items cross one.
			fb, gb, cb := eval(batchedDense{feat, 300})
			for _, r := range []struct {
				name string
				f    float64
				g    []float64
			}{{"direct", fd, gd}, {"batched", fb, gb}} {
				if e := relErr(r.g, gc); math.Abs(r.f-fc) > 1e-6*math.Abs(fc) || e > 1e-5 {
					t.Errorf("%s vs copied: value %v vs %v, gradient relative error %.2g", r.name, r.f, fc, e)
				}
			}
			if cb != cd || cd == 0 || cd == 1 {
				t.Errorf("copied blocks: %.3f in batches, %.3f in one piece: want the same, some but not all", cb, cd)
			}
		})
	}
}

// TestFlush32: the branch-free float32 flush zeroes exactly what the plain
// comparison |x| < tiny zeroes (±tiny itself and NaN stay, −0 becomes +0),
// in slices of any length.
func TestFlush32(t *testing.T) {
	const tiny = float32(1e-30)
	below := math.Nextafter32(tiny, 0)
	special := []float32{0, float32(math.Copysign(0, -1)), tiny, -tiny, below, -below, 1e-38, -1e-45,
		1, -2.5, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, math.SmallestNonzeroFloat32}
	rng := rand.New(rand.NewPCG(4, 4))
	for range 200 {
		special = append(special, float32(rng.NormFloat64()*math.Pow(10, float64(rng.IntN(80)-60))))
	}
	got := slices.Clone(special)
	flush32(got, tiny)
	for i, x := range special {
		want := x
		if x < tiny && x > -tiny {
			want = 0
		}
		if math.Float32bits(got[i]) != math.Float32bits(want) {
			t.Errorf("flush32(%g) = %g (bits %08x), want %g (bits %08x)", x, got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
		}
	}
}

// TestWNNDistances: the float32 WNN kernel (package wnnkern) gives
// Σ_f w_f² (x_f − y_f)² as computed plainly in float64, at a dimension that
// leaves a remainder after the kernel's 32- and 8-wide loops.
func TestWNNDistances(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const items, dim = 300, 37
	feat := randDense(rng, items, dim)
	pairs := randPairs(rng, items, 1000)
	src, ps, err := prepare(feat, dim, pairs, "train")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := newModel(ModelWNN, dim, 0, 0)
	obj := newObjective(m.evaluator(src, ps, false, 0), ps.labels)
	w := make([]float64, dim)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	got := obj.distances(w)
	for p, pr := range pairs {
		x, y := feat.Row(int(pr.X)), feat.Row(int(pr.Y))
		var want float64
		for f := range dim {
			d := float64(x[f]) - float64(y[f])
			want += w[f] * w[f] * d * d
		}
		if math.Abs(got[p]-want) > 1e-5*want {
			t.Fatalf("pair %d: distance %v, want %v", p, got[p], want)
		}
	}
}

// TestWNNFloat32Gradient: WNN's float32 dense path (wnnkern's kernels, pairs
// in x order, prefetching) gives the value and gradient of the float64
// path, which TestGradients checks against finite differences, to float32
// rounding; at a dimension that runs every loop of the kernels.
func TestWNNFloat32Gradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const items, dim = 200, 45
	feat := randDense(rng, items, dim)
	src, ps, err := prepare(feat, dim, randPairs(rng, items, 3000), "train")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := newModel(ModelWNN, dim, 0, 0)
	theta := make([]float64, 1+dim)
	for i := range theta[1:] {
		theta[1+i] = 0.5 + rng.Float64()
	}
	var vals [2]float64
	var grads [2][]float64
	for i, f64 := range []bool{false, true} {
		obj := newObjective(m.evaluator(src, ps, f64, 0), ps.labels)
		obj.lambda = 0.01
		if i == 0 {
			theta[0] = median(obj.distances(theta[1:]))
		}
		grads[i] = make([]float64, len(theta))
		vals[i] = obj.eval(theta, grads[i])
	}
	if math.Abs(vals[0]-vals[1]) > 1e-6*math.Abs(vals[1]) {
		t.Errorf("float32 value %v, float64 %v", vals[0], vals[1])
	}
	if e := relErr(grads[0], grads[1]); !(e < 1e-5) || dot(grads[1], grads[1]) == 0 {
		t.Errorf("float32 gradient relative error %.3g against float64", e)
	}
}

// BenchmarkBlockCopyVsGaps prices the two ways to multiply a block of
// rowBlock items whose rows have gaps (MONOMER_BENCH=medium: a 30 k-row
// matrix, larger than the caches): "copy" copies the items' rows out twice
// (forward and backward pass), "gemm-R" runs both products over R
// contiguous rows; gemm-R minus gemm-512 is what R−512 gap rows cost in
// place. One op is one block, a different one each time.
func BenchmarkBlockCopyVsGaps(b *testing.B) {
	if os.Getenv("MONOMER_BENCH") != "medium" {
		b.Skip("MONOMER_BENCH=medium")
	}
	const rows, dim, c, stride = 30000, 4096, 100, 768
	rng := rand.New(rand.NewPCG(2, 2))
	d := randDense(rng, rows, dim)
	w := make([]float32, dim*c)
	for i := range w {
		w[i] = float32(rng.NormFloat64())
	}
	buf, p, acc := make([]float32, rowBlock*dim), make([]float32, stride*c), make([]float32, dim*c)
	items := make([]int32, rowBlock)
	run := func(name string, fn func(lo int)) {
		b.Run(name, func(b *testing.B) {
			blk, cpu0 := 0, cpuSeconds()
			for b.Loop() {
				fn(blk * stride)
				blk = (blk + 1) % (rows / stride)
			}
			b.ReportMetric(1e3*(cpuSeconds()-cpu0)/float64(b.N), "cpu-ms/block")
		})
	}
	run("copy", func(lo int) {
		for i := range items { // 512 items over 576 rows
			items[i] = int32(lo + i*(rowBlock+rowBlock/8)/rowBlock)
		}
		denseRows(d, items, dim, buf)
		denseRows(d, items, dim, buf)
	})
	for _, r := range []int{rowBlock, rowBlock + rowBlock/8, rowBlock + rowBlock/4} {
		run(fmt.Sprintf("gemm-%d", r), func(lo int) {
			x := d.data[lo*dim : (lo+r)*dim]
			gemm(false, r, c, dim, x, w, p[:r*c])
			gemm(true, dim, c, r, x, p[:r*c], acc)
		})
	}
}

package models

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"monomer/internal/csrkern"
)

// projShapes are LMT's and Monomer's shapes in the paper: C = 100 and 104,
// and also_viewed's 50 and 54.
var projShapes = []Spec{
	{Model: ModelLMT, K: 100}, {Model: ModelMonomer, K: 20, N: 4},
	{Model: ModelLMT, K: 50}, {Model: ModelMonomer, K: 10, N: 4},
}

// specModel resolves spec and makes its model over dim features.
func specModel(t testing.TB, spec Spec, dim int) (Spec, model) {
	t.Helper()
	spec, err := spec.resolve()
	if err != nil {
		t.Fatal(err)
	}
	m, err := newModel(spec.Model, dim, spec.K, spec.N)
	if err != nil {
		t.Fatal(err)
	}
	return spec, m
}

// TestSparseColsSameBits: the float32 evaluation on sparse rows, with W's
// rows padded to csrkern.Stride and Xᵀ·G through csrkern.Cols, gives the
// bits of the row-by-row kernels it replaced (W's rows C apart, RowAcc
// into each item group's accumulator, each item's row of G by one axpy a
// term instead of csrkern.Combine), objective and gradient, for LMT
// and Monomer at the paper's shapes (C = 100, 104) and the also_viewed ones
// (C = 50, 54), over several item groups. At density 0.05 the blocks of
// Cols are too tall for MulTo to be preferred: lean rows, held by columns
// only, still take it.
func TestSparseColsSameBits(t *testing.T) {
	for _, density := range []float64{0.14, 0.05} {
		testSparseColsSameBits(t, density)
	}
}

func testSparseColsSameBits(t *testing.T, density float64) {
	const items, dim = 1500, 120
	rng := rand.New(rand.NewPCG(7, 7))
	feat := reluDense(rng, items, dim, density)
	pairs := randPairs(rng, items, 4000)
	sp, ps, err := prepare(feat, dim, pairs, "train")
	if err != nil {
		t.Fatal(err)
	}
	if !sp.lean {
		t.Fatalf("prepare kept ReLU features at density %g dense", density)
	}
	preferred := 0
	for _, spec := range projShapes {
		spec, m := specModel(t, spec, dim)
		theta := (&trainer{model: m, train: newObjective(m.evaluator(sp, ps, false, 0), ps.labels)}).init(sp, ps, rand.New(rand.NewPCG(3, 3)))
		var byCols *projEval[float32]
		eval := func(rowByRow bool) (float64, []float64) {
			ev := m.evaluator(sp, ps, false, 0)
			pe := ev.(*projEval[float32])
			if len(pe.groups) < 2 || pe.cols == nil || pe.ws == pe.c || pe.combos == nil {
				t.Fatalf("%s: %d item groups, Cols %v, W stride %d for C = %d: not the path under test", spec.Model, len(pe.groups), pe.cols != nil, pe.ws, pe.c)
			}
			if rowByRow {
				pe.cols, pe.ws, pe.w, pe.combos = nil, pe.c, make([]float32, dim*pe.c), nil
				pe.src = pe.src.packed(ps.items)
			} else {
				byCols = pe
			}
			obj := newObjective(ev, ps.labels)
			obj.lambda = 1e-4
			grad := make([]float64, len(theta))
			return obj.eval(theta, grad), grad
		}
		fc, gc := eval(false)
		for _, c := range byCols.cols {
			if c.PreferMulTo() {
				preferred++
			}
		}
		fr, gr := eval(true)
		if math.Float64bits(fc) != math.Float64bits(fr) {
			t.Errorf("%s K=%d: objective %v by columns, %v row by row", spec.Model, spec.K, fc, fr)
		}
		for i := range gr {
			if math.Float64bits(gc[i]) != math.Float64bits(gr[i]) {
				t.Fatalf("%s K=%d: gradient element %d is %v by columns, %v row by row", spec.Model, spec.K, i, gc[i], gr[i])
			}
		}
	}
	if (density < 0.1) != (preferred == 0) {
		t.Fatalf("density %g: MulTo preferred in %d item groups: not the path under test", density, preferred)
	}
}

// TestSparseKernelPathsSameBits: LMT's and Monomer's objective and
// gradient on image-like rows (ReLU, density 0.14: by columns, Cols.MulTo
// and AddTo) and bag-of-words-like rows (9 a row in 600: row by row,
// RowMul, RowAcc, Combine) have the same bits whichever kernels csrkern
// takes: the widest this CPU has, AVX2 (as on AMD Zen 3, without AVX-512)
// and Go. Not parallel: csrkern.Limit changes the kernels of the whole
// process.
func TestSparseKernelPathsSameBits(t *testing.T) {
	const items = 1500
	rng := rand.New(rand.NewPCG(9, 9))
	for _, kind := range []string{"image", "words"} {
		var feat Features = reluDense(rng, items, 120, 0.14)
		dim := 120
		if kind == "words" {
			dim, feat = 600, randSparse(rng, items, 600, 9)
		}
		pairs := randPairs(rng, items, 4000)
		sp, ps, err := prepare(feat, dim, pairs, "train")
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range projShapes {
			spec, m := specModel(t, spec, dim)
			theta := (&trainer{model: m, train: newObjective(m.evaluator(sp, ps, false, 0), ps.labels)}).init(sp, ps, rand.New(rand.NewPCG(3, 3)))
			eval := func() (float64, []float64) {
				ev := m.evaluator(sp, ps, false, 0)
				if pe := ev.(*projEval[float32]); slices.Contains(pe.byCols, kind == "words") || len(pe.byCols) < 2 {
					t.Fatalf("%s rows, %s: item groups by columns %v: not the path under test", kind, spec.Model, pe.byCols)
				}
				obj := newObjective(ev, ps.labels)
				obj.lambda = 1e-4
				grad := make([]float64, len(theta))
				return obj.eval(theta, grad), grad
			}
			f0, g0 := eval()
			widest := csrkern.Path()
			for _, path := range []string{"avx2", "go"} {
				restore := csrkern.Limit(path)
				f, g := eval()
				got := csrkern.Path()
				restore()
				if math.Float64bits(f) != math.Float64bits(f0) {
					t.Errorf("%s rows, %s K=%d: objective %v with the %s kernels, %v with %s", kind, spec.Model, spec.K, f, got, f0, widest)
				}
				for i := range g {
					if math.Float64bits(g[i]) != math.Float64bits(g0[i]) {
						t.Fatalf("%s rows, %s K=%d: gradient element %d is %v with the %s kernels, %v with %s", kind, spec.Model, spec.K, i, g[i], got, g0[i], widest)
					}
				}
			}
		}
	}
}

// TestObjectiveInPairOrder: the evaluators hand the objective its pairs in
// x order, yet f and ∂f/∂c are the sums in pair order of the pairs' terms
// at their own distances (as before the per-pair arrays followed the x
// order), for every evaluator kind.
func TestObjectiveInPairOrder(t *testing.T) {
	const items, dim = 600, 60
	rng := rand.New(rand.NewPCG(8, 8))
	feat := reluDense(rng, items, dim, 0.14)
	pairs := randPairs(rng, items, 3000)
	sp, ps, err := prepare(feat, dim, pairs, "train")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []Spec{{Model: ModelLMT, K: 8}, {Model: ModelMonomer, K: 4, N: 3}, {Model: ModelWNN}} {
		spec, _ := spec.resolve()
		m, err := newModel(spec.Model, dim, spec.K, spec.N)
		if err != nil {
			t.Fatal(err)
		}
		obj := newObjective(m.evaluator(sp, ps, false, 0), ps.labels)
		theta := (&trainer{model: m, train: obj}).init(sp, ps, rand.New(rand.NewPCG(3, 3)))
		grad := make([]float64, len(theta))
		f := obj.eval(theta, grad)
		d := obj.distances(theta[1:])
		var sum, gc float64
		n := float64(len(d))
		for p, dp := range d {
			ll, dz := pairLogLik(theta[0]-dp, ps.labels[p])
			sum += ll
			gc += dz / n
		}
		if want := -sum / n; math.Float64bits(f) != math.Float64bits(want) {
			t.Errorf("%s: f %v, the pair-order sum %v", spec.Model, f, want)
		}
		if math.Float64bits(grad[0]) != math.Float64bits(-gc) {
			t.Errorf("%s: ∂f/∂c %v, the pair-order sum %v", spec.Model, grad[0], -gc)
		}
	}
}

// TestSparseRowsSameBits: bag-of-words rows (1.5 % dense) are multiplied
// row by row (RowMul, RowAcc into accumulators whose rows are
// csrkern.Stride apart), as csrkern.ByColumns decides; forcing every item
// group through csrkern.Cols instead, or laying W and the accumulators out
// with rows C apart (no padding to map back), gives the same bits,
// objective and gradient, at the paper's shapes and the also_viewed ones.
func TestSparseRowsSameBits(t *testing.T) {
	const items, dim = 1500, 600
	rng := rand.New(rand.NewPCG(9, 9))
	feat := randSparse(rng, items, dim, 9)
	pairs := randPairs(rng, items, 4000)
	sp, ps, err := prepare(feat, dim, pairs, "train")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range projShapes {
		spec, m := specModel(t, spec, dim)
		theta := (&trainer{model: m, train: newObjective(m.evaluator(sp, ps, false, 0), ps.labels)}).init(sp, ps, rand.New(rand.NewPCG(3, 3)))
		const rows, cols, unpadded = 0, 1, 2
		eval := func(layout int) (float64, []float64) {
			ev := m.evaluator(sp, ps, false, 0)
			pe := ev.(*projEval[float32])
			if len(pe.groups) < 2 || pe.src.sparse == nil || pe.ws == pe.c || slices.Contains(pe.byCols, true) {
				t.Fatalf("%s: %d item groups, sparse rows %v, W stride %d for C = %d, by columns %v: not the path under test",
					spec.Model, len(pe.groups), pe.src.sparse != nil, pe.ws, pe.c, pe.byCols)
			}
			switch layout {
			case cols:
				for i := range pe.byCols {
					pe.byCols[i] = true
				}
			case unpadded:
				pe.cols, pe.ws, pe.w = nil, pe.c, make([]float32, dim*pe.c)
			}
			obj := newObjective(ev, ps.labels)
			obj.lambda = 1e-4
			grad := make([]float64, len(theta))
			return obj.eval(theta, grad), grad
		}
		fr, gr := eval(rows)
		for _, layout := range []int{cols, unpadded} {
			name := map[int]string{cols: "by columns", unpadded: "rows C apart"}[layout]
			fc, gc := eval(layout)
			if math.Float64bits(fc) != math.Float64bits(fr) {
				t.Errorf("%s K=%d: objective %v %s, %v row by row", spec.Model, spec.K, fc, name, fr)
			}
			for i := range gr {
				if math.Float64bits(gc[i]) != math.Float64bits(gr[i]) {
					t.Fatalf("%s K=%d: gradient element %d is %v %s, %v row by row", spec.Model, spec.K, i, gc[i], name, gr[i])
				}
			}
		}
	}
}

//go:build openblas

package models

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
)

// TestOpenBLASInUse: the openblas build sends both precisions' gemm to
// OpenBLAS, single-threaded.
func TestOpenBLASInUse(t *testing.T) {
	if _, ok := blas32.Implementation().(openblasGemm); !ok {
		t.Errorf("blas32 implementation is %T, want openblasGemm", blas32.Implementation())
	}
	if _, ok := blas64.Implementation().(openblasGemm); !ok {
		t.Errorf("blas64 implementation is %T, want openblasGemm", blas64.Implementation())
	}
	if n := openblasThreads(); n != 1 {
		t.Errorf("OpenBLAS runs %d threads, want 1", n)
	}
	core := openblasCore()
	t.Logf("OpenBLAS core %s", core)
	// CI runs these tests once per kernel (.ci/run): make sure each run
	// really got the kernel it asked for, not a silent fallback.
	if want := os.Getenv("OPENBLAS_CORETYPE"); want != "" && !strings.EqualFold(core, want) {
		t.Errorf("OPENBLAS_CORETYPE=%s but OpenBLAS runs the %s kernel", want, core)
	}
}

func init() { withPureGoBLAS = withPureGo }

// withPureGo runs fn with gonum's pure-Go BLAS, then restores OpenBLAS.
func withPureGo(fn func()) {
	blas32.Use(gonum.Implementation{})
	blas64.Use(gonum.Implementation{})
	defer func() {
		blas32.Use(openblasGemm{})
		blas64.Use(openblasGemm{})
	}()
	fn()
}

// TestOpenBLASMatchesPureGo: one objective evaluation with its gradient on
// random dense data (several 512-row gemm blocks and item groups) agrees
// with pure-Go gonum up to summation order (bitwise equality is not
// expected). Measured with OpenBLAS 0.3.21, SkylakeX kernel: float32
// gradients 4.6e-7 relative (values 2e-9), float64 9e-16; the bounds leave
// about a factor of ten.
func TestOpenBLASMatchesPureGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const items, dim = 1500, 300
	feat := randDense(rng, items, dim)
	pairs := randPairs(rng, items, 6000)
	tests := []struct {
		spec Spec
		f64  bool
		tol  float64 // bound on the relative error of value and gradient
	}{
		{Spec{Model: ModelLMT, K: 20}, false, 5e-6},
		{Spec{Model: ModelMonomer, K: 5, N: 4}, false, 5e-6},
		{Spec{Model: ModelLMT, K: 20}, true, 1e-13},
		{Spec{Model: ModelMonomer, K: 5, N: 4}, true, 1e-13},
	}
	for _, tc := range tests {
		name := tc.spec.Model + "/float32"
		if tc.f64 {
			name = tc.spec.Model + "/float64"
		}
		t.Run(name, func(t *testing.T) {
			spec, err := tc.spec.resolve()
			if err != nil {
				t.Fatal(err)
			}
			src, ps, err := prepare(feat, dim, pairs, "train")
			if err != nil {
				t.Fatal(err)
			}
			m, err := newModel(spec.Model, dim, spec.K, spec.N)
			if err != nil {
				t.Fatal(err)
			}
			theta := (&trainer{model: m, train: newObjective(m.evaluator(src, ps, tc.f64, 0), ps.labels)}).init(src, ps, rand.New(rand.NewPCG(3, 3)))
			eval := func() (float64, []float64) {
				obj := newObjective(m.evaluator(src, ps, tc.f64, 0), ps.labels)
				obj.lambda = 1e-4
				grad := make([]float64, len(theta))
				return obj.eval(theta, grad), grad
			}
			fBLAS, gBLAS := eval()
			var fGo float64
			var gGo []float64
			withPureGo(func() { fGo, gGo = eval() })
			fErr := math.Abs(fBLAS-fGo) / math.Max(math.Abs(fGo), math.SmallestNonzeroFloat64)
			gErr := relErr(gBLAS, gGo)
			t.Logf("value %.9g vs %.9g: relative error %.2g; gradient relative error %.2g", fBLAS, fGo, fErr, gErr)
			if fErr > tc.tol || gErr > tc.tol {
				t.Errorf("OpenBLAS vs pure Go: value error %.2g, gradient error %.2g, bound %.0g", fErr, gErr, tc.tol)
			}
			if !tc.f64 && gErr == 0 {
				t.Error("float32 gradient bit-identical to pure Go: is OpenBLAS's sgemm being called?")
			}
		})
	}
}

// TestOpenBLASTrainDeterministic: under OpenBLAS, Train gives bit-identical
// fits at GOMAXPROCS 1 and 2 (OpenBLAS single-threaded on fixed row blocks).
func TestOpenBLASTrainDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const items, dim = 2000, 128
	feat := randDense(rng, items, dim)
	pairs := randPairs(rng, items, 6000)
	for i, p := range pairs {
		pairs[i].Label = (feat.Row(int(p.X))[0] > 0) == (feat.Row(int(p.Y))[0] > 0)
	}
	train, valid := pairs[:5000], pairs[5000:]
	for _, model := range []string{ModelLMT, ModelMonomer} {
		t.Run(model, func(t *testing.T) {
			spec := Spec{Model: model, K: 8, N: 3, Lambdas: []float64{0, 1e-4}, MaxIter: 6, ValidEvery: 3}
			checkSameAtProcs(t, feat, train, valid, spec)
		})
	}
}

// TestSparseRowsSameUnderOpenBLAS: features multiplied as sparse rows take
// no BLAS, so a whole fit of each model gives the same bits with OpenBLAS
// (whatever its kernel) as with pure-Go gonum: the README's promise that
// such experiments train identically in either build and under any kernel.
func TestSparseRowsSameUnderOpenBLAS(t *testing.T) {
	const items, dim = 600, 128
	rng := rand.New(rand.NewPCG(12, 12))
	feat := reluDense(rng, items, dim, 0.14)
	train, valid := randPairs(rng, items, 3000), randPairs(rng, items, 600)
	for _, spec := range []Spec{
		{Model: ModelLMT, K: 10, Lambdas: []float64{1e-4}, MaxIter: 15},
		{Model: ModelMonomer, K: 4, N: 3, Lambdas: []float64{1e-4}, MaxIter: 15},
		{Model: ModelWNN, Lambdas: []float64{1e-4}, MaxIter: 15},
	} {
		fit := func() *Fit {
			f, err := Train(t.Context(), feat, train, valid, spec, rand.New(rand.NewPCG(1, 1)), nil)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		ob := fit()
		var pg *Fit
		withPureGo(func() { pg = fit() })
		if ob.SparseDensity == 0 {
			t.Fatalf("%s: trained on dense rows", spec.Model)
		}
		if ob.Iterations == 0 {
			t.Fatalf("%s: no iteration ran", spec.Model)
		}
		if math.Float64bits(ob.C) != math.Float64bits(pg.C) || ob.ValidError != pg.ValidError || ob.Iterations != pg.Iterations {
			t.Errorf("%s: c %v, error %v, %d iterations with OpenBLAS; %v, %v, %d pure Go", spec.Model, ob.C, ob.ValidError, ob.Iterations, pg.C, pg.ValidError, pg.Iterations)
		}
		for i, p := range ob.Params {
			for j, v := range p.Data {
				if math.Float64bits(v) != math.Float64bits(pg.Params[i].Data[j]) {
					t.Fatalf("%s: %s[%d] is %v with OpenBLAS, %v pure Go", spec.Model, p.Name, j, v, pg.Params[i].Data[j])
				}
			}
		}
	}
}

// TestTopKSameBitsAnyBLAS: recommend's lists (items, distances,
// probabilities, spaces) are bit for bit the same under OpenBLAS and pure
// Go, for sparse-enough dense rows (ReLU image features) and for WNN's dense
// scores: nothing of retrieval goes through gemm's kernel-dependent order.
// Dense rows above maxSparseDensity still project through gemm.
func TestTopKSameBitsAnyBLAS(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const items, dim = 700, 96
	feat := randDense(rng, items, dim)
	for i := range feat.data { // ReLU-like: about 80 % zeros
		if rng.Float64() < 0.8 {
			feat.data[i] = 0
		}
	}
	cand := make([]int32, items)
	for i := range cand {
		cand[i] = int32(i)
	}
	for _, model := range []string{ModelWNN, ModelLMT, ModelMonomer} {
		f := randFit(t, rng, model, dim, 10, 3)
		lists := func() [][]Hit {
			r, err := NewRetriever(f, feat, cand)
			if err != nil {
				t.Fatal(err)
			}
			l, err := r.TopK(cand[:150], 20, 2)
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		blas := lists()
		var pure [][]Hit
		withPureGo(func() { pure = lists() })
		for q := range blas {
			for k := range blas[q] {
				a, b := blas[q][k], pure[q][k]
				if a.Item != b.Item || a.Space != b.Space || math.Float64bits(a.Dist) != math.Float64bits(b.Dist) || math.Float64bits(a.Prob) != math.Float64bits(b.Prob) {
					t.Fatalf("%s: query %d rank %d: OpenBLAS %+v, pure Go %+v", model, q, k, a, b)
				}
			}
		}
	}
}

package models

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"monomer/graph"
)

// denseFeat is a row-major float32 matrix.
type denseFeat struct {
	rows, dim int
	data      []float32
}

func (m *denseFeat) Rows() int           { return m.rows }
func (m *denseFeat) Dim() int            { return m.dim }
func (m *denseFeat) Row(i int) []float32 { return m.data[i*m.dim : (i+1)*m.dim] }

// Block makes denseFeat a DenseBlock; rowsOnly hides it (see plainDense).
func (m *denseFeat) Block(lo, hi int) []float32 { return m.data[lo*m.dim : hi*m.dim] }

// plainDense is a Dense without Block: the kernels copy its rows.
type plainDense struct{ *denseFeat }

func (p plainDense) Block() {} // shadows denseFeat.Block: not a DenseBlock

// sparseFeat holds rows as ascending column indices and values.
type sparseFeat struct {
	dim int
	idx [][]int32
	val [][]float32
}

func (m *sparseFeat) Rows() int                            { return len(m.idx) }
func (m *sparseFeat) Dim() int                             { return m.dim }
func (m *sparseFeat) SparseRow(i int) ([]int32, []float32) { return m.idx[i], m.val[i] }

func randDense(rng *rand.Rand, rows, dim int) *denseFeat {
	m := &denseFeat{rows: rows, dim: dim, data: make([]float32, rows*dim)}
	for i := range m.data {
		m.data[i] = float32(rng.NormFloat64())
	}
	return m
}

// randSparse draws about nnz non-zeros a row, normalised to sum 1 like BoW.
func randSparse(rng *rand.Rand, rows, dim, nnz int) *sparseFeat {
	m := &sparseFeat{dim: dim, idx: make([][]int32, rows), val: make([][]float32, rows)}
	for i := range rows {
		var sum float32
		for j := range dim {
			if rng.IntN(dim) < nnz {
				v := float32(rng.IntN(5) + 1)
				m.idx[i] = append(m.idx[i], int32(j))
				m.val[i] = append(m.val[i], v)
				sum += v
			}
		}
		for j := range m.val[i] {
			m.val[i][j] /= sum
		}
	}
	return m
}

func randPairs(rng *rand.Rand, items, n int) []graph.Pair {
	ps := make([]graph.Pair, n)
	for i := range ps {
		x := rng.IntN(items)
		y := (x + 1 + rng.IntN(items-1)) % items
		ps[i] = graph.Pair{X: int32(x), Y: int32(y), Label: rng.IntN(2) == 0}
	}
	return ps
}

func TestSpecResolve(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		wantK   int
		wantN   int
		wantErr bool
	}{
		{name: "lmt defaults", spec: Spec{Model: ModelLMT}, wantK: 100},
		{name: "monomer defaults", spec: Spec{Model: ModelMonomer}, wantK: 20, wantN: 4},
		{name: "wnn ignores K", spec: Spec{Model: ModelWNN, K: 7, N: 3}},
		{name: "unknown model", spec: Spec{Model: "ct"}, wantErr: true},
		{name: "negative K", spec: Spec{Model: ModelLMT, K: -1}, wantErr: true},
		{name: "negative lambda", spec: Spec{Model: ModelLMT, Lambdas: []float64{-1}}, wantErr: true},
		{name: "NaN lambda", spec: Spec{Model: ModelLMT, Lambdas: []float64{math.NaN()}}, wantErr: true},
		{name: "negative MaxIter", spec: Spec{Model: ModelLMT, MaxIter: -3}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.spec.resolve()
			if tc.wantErr {
				if !errors.Is(err, ErrSpec) {
					t.Fatalf("err = %v, want ErrSpec", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.K != tc.wantK || got.N != tc.wantN || got.MaxIter != 200 || got.ValidEvery != 10 || got.Store != 20 || !slices.Equal(got.Lambdas, DefaultLambdas()) {
				t.Errorf("resolved %+v", got)
			}
		})
	}
}

func TestNewFit(t *testing.T) {
	blk := func(name string, r, c int) Param {
		return Param{Name: name, Rows: r, Cols: c, Data: make([]float64, r*c)}
	}
	tests := []struct {
		name    string
		model   string
		params  []Param
		wantK   int
		wantN   int
		wantErr bool
	}{
		{name: "wnn", model: ModelWNN, params: []Param{blk("w", 5, 1)}},
		{name: "lmt", model: ModelLMT, params: []Param{blk("E", 5, 3)}, wantK: 3},
		{name: "monomer any order", model: ModelMonomer, params: []Param{blk("U", 5, 2), blk("E2", 5, 3), blk("E0", 5, 3), blk("E1", 5, 3)}, wantK: 3, wantN: 2},
		{name: "monomer U width", model: ModelMonomer, params: []Param{blk("E0", 5, 3), blk("E1", 5, 3), blk("U", 5, 2)}, wantErr: true},
		{name: "monomer no E1", model: ModelMonomer, params: []Param{blk("E0", 5, 3), blk("U", 5, 1)}, wantErr: true},
		{name: "short data", model: ModelLMT, params: []Param{{Name: "E", Rows: 5, Cols: 3, Data: make([]float64, 14)}}, wantErr: true},
		{name: "rows differ", model: ModelMonomer, params: []Param{blk("E0", 5, 3), blk("E1", 4, 3), blk("U", 5, 1)}, wantErr: true},
		{name: "wrong name", model: ModelLMT, params: []Param{blk("W", 5, 3)}, wantErr: true},
		{name: "unknown model", model: "lda", params: []Param{blk("E", 5, 3)}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewFit(tc.model, 1, tc.params)
			if tc.wantErr {
				if !errors.Is(err, ErrSpec) {
					t.Fatalf("err = %v, want ErrSpec", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Dim != 5 || f.K != tc.wantK || f.N != tc.wantN {
				t.Errorf("Dim, K, N = %d, %d, %d", f.Dim, f.K, f.N)
			}
		})
	}
}

func TestScoreInputErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	f, err := NewFit(ModelLMT, 1, []Param{{Name: "E", Rows: 4, Cols: 2, Data: make([]float64, 8)}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		feat  Features
		pairs []graph.Pair
	}{
		{name: "dimension", feat: randDense(rng, 3, 5), pairs: []graph.Pair{{X: 0, Y: 1}}},
		{name: "item out of range", feat: randDense(rng, 3, 4), pairs: []graph.Pair{{X: 0, Y: 3}}},
		{name: "sparse column out of range", feat: &sparseFeat{dim: 4, idx: [][]int32{{1}, {4}}, val: [][]float32{{1}, {1}}}, pairs: []graph.Pair{{X: 0, Y: 1}}},
		{name: "sparse unsorted", feat: &sparseFeat{dim: 4, idx: [][]int32{{1}, {3, 2}}, val: [][]float32{{1}, {1, 1}}}, pairs: []graph.Pair{{X: 0, Y: 1}}},
		{name: "nil features", feat: nil, pairs: []graph.Pair{{X: 0, Y: 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := f.Score(tc.feat, tc.pairs); !errors.Is(err, ErrInput) {
				t.Fatalf("err = %v, want ErrInput", err)
			}
		})
	}
}

// TestMonomerN1IsLMT: with one non-anchor space tied to the anchor
// (E₁ = E₀ = E) the gate is 1 and Monomer's distance is LMT's in exact
// arithmetic. The two project through gemm calls of different shapes (K
// columns for LMT, 2K+1 for [E₀ | E₁ | U]), and an optimised BLAS picks its
// kernel, and so the summation order of each dot product, by shape and CPU
// (OpenBLAS's Haswell kernel differs from SkylakeX's in the last bits), so
// the distances agree to rounding, not bit for bit; see distTolerance.
func TestMonomerN1IsLMT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const items, dim, k = 700, 9, 4 // > rowBlock items: several gemm blocks
	feats := map[string]Features{"dense": randDense(rng, items, dim), "sparse": randSparse(rng, items, dim, 3)}
	pairs := randPairs(rng, items, 3000)
	e := Param{Name: "E", Rows: dim, Cols: k, Data: make([]float64, dim*k)}
	u := Param{Name: "U", Rows: dim, Cols: 1, Data: make([]float64, dim)}
	for i := range e.Data {
		e.Data[i] = rng.NormFloat64()
	}
	for i := range u.Data {
		u.Data[i] = 10 * rng.NormFloat64()
	}
	l, err := NewFit(ModelLMT, 2, []Param{e})
	if err != nil {
		t.Fatal(err)
	}
	e0, e1 := e, e
	e0.Name, e1.Name = "E0", "E1"
	m, err := NewFit(ModelMonomer, 2, []Param{e0, e1, u})
	if err != nil {
		t.Fatal(err)
	}
	for _, fname := range []string{"dense", "sparse"} {
		for _, f64 := range []bool{false, true} {
			var worst float64 // largest |Δd| / tolerance, logged to show the margin
			l.Float64, m.Float64 = f64, f64
			dl, pl, err := l.Score(feats[fname], pairs)
			if err != nil {
				t.Fatal(err)
			}
			dm, pm, err := m.Score(feats[fname], pairs)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range pairs {
				tol := distTolerance(feats[fname], e, p, f64)
				if tol > 0 { // 0 for two empty rows: both distances are exactly 0
					worst = max(worst, math.Abs(dl[i]-dm[i])/tol)
				}
				// σ is 1/4-Lipschitz; the probability itself is float64.
				if math.Abs(dl[i]-dm[i]) > tol || math.Abs(pl[i]-pm[i]) > tol/4+1e-15 {
					t.Fatalf("%s float64=%v pair %d: LMT d=%v p=%v, Monomer d=%v p=%v (tolerance %.3g)",
						fname, f64, i, dl[i], pl[i], dm[i], pm[i], tol)
				}
			}
			t.Logf("%s float64=%v: largest gap %.2g of the tolerance", fname, f64, worst)
		}
	}
}

// distTolerance bounds |d₁ − d₂| between two evaluations of the same
// projected distance d = Σₖ ((xᵀE)ₖ − (yᵀE)ₖ)² that differ only in
// summation order. By the standard forward error bound of a sum of n
// products (Higham, Accuracy and Stability, §3.1: |error| ≤ γₙ Σ|terms|,
// γₙ ≈ n·u), each projection is off by at most γ_dim·aₖ with
// aₖ = Σⱼ |xⱼ||Eⱼₖ|; the difference, its square and the sum over K add
// γ_{K+2} of the result. With sₖ = a_xₖ + a_yₖ ≥ |tₖ| this gives, for each
// evaluation, |d̂ − d| ≤ (4·dim + K + 3)·u·Σₖ sₖ² to first order; two
// evaluations, twice that. u is the unit roundoff of the kernels' type.
// It is the worst case over summation orders: the largest gap measured
// (OpenBLAS Haswell and Zen kernels, dense float32) is 2% of it, while a
// wrong gate or projection moves d by a fraction of d itself.
func distTolerance(feat Features, e Param, p graph.Pair, f64 bool) float64 {
	u := 0x1p-24
	if f64 {
		u = 0x1p-53
	}
	x, y := denseRow(feat, int(p.X)), denseRow(feat, int(p.Y))
	var s2 float64
	for c := range e.Cols {
		var s float64
		for j := range e.Rows {
			s += (math.Abs(x[j]) + math.Abs(y[j])) * math.Abs(e.Data[j*e.Cols+c])
		}
		s2 += s * s
	}
	return 2 * float64(4*e.Rows+e.Cols+3) * u * s2
}

// denseRow returns row i of a dense or sparse test matrix as float64.
func denseRow(feat Features, i int) []float64 {
	out := make([]float64, feat.Dim())
	switch f := feat.(type) {
	case Dense:
		for j, v := range f.Row(i) {
			out[j] = float64(v)
		}
	case Sparse:
		idx, val := f.SparseRow(i)
		for n, j := range idx {
			out[j] = float64(val[n])
		}
	}
	return out
}

// A Fit is rebuilt from saved parameters and scores pairs: here LMT with
// F = 2, K = 1 projects onto the first feature, so d(x, y) = (x₁ − y₁)².
func ExampleNewFit() {
	fit, err := NewFit(ModelLMT, 5, []Param{{Name: "E", Rows: 2, Cols: 1, Data: []float64{1, 0}}})
	if err != nil {
		panic(err)
	}
	feat := &denseFeat{rows: 3, dim: 2, data: []float32{0, 0, 3, 0, 0, 4}}
	pairs := []graph.Pair{{X: 0, Y: 1}, {X: 0, Y: 2}, {X: 1, Y: 2}}
	dist, prob, err := fit.Score(feat, pairs)
	if err != nil {
		panic(err)
	}
	for i, p := range pairs {
		fmt.Printf("d(%d,%d) = %g, P(related) = %.3f\n", p.X, p.Y, dist[i], prob[i])
	}
	// Output:
	// d(0,1) = 9, P(related) = 0.018
	// d(0,2) = 0, P(related) = 0.993
	// d(1,2) = 9, P(related) = 0.018
}

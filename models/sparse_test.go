package models

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"monomer/graph"
)

// reluDense draws a dense matrix with about density of its values
// non-zero and positive, like ReLU image features.
func reluDense(rng *rand.Rand, rows, dim int, density float64) *denseFeat {
	m := &denseFeat{rows: rows, dim: dim, data: make([]float32, rows*dim)}
	for i := range m.data {
		if rng.Float64() < density {
			m.data[i] = float32(rng.ExpFloat64())
		}
	}
	return m
}

// TestPackSparse: rows of the items come out with exactly their non-zeros
// (NaN and infinities kept, zeros of both signs dropped), and asking for
// another row panics; above maxSparseDensity nothing is packed.
func TestPackSparse(t *testing.T) {
	m := &denseFeat{rows: 5, dim: 5, data: []float32{
		0, 1, 0, 0, 2,
		9, 9, 9, 9, 9,
		float32(math.Copysign(0, -1)), float32(math.NaN()), 0, float32(math.Inf(-1)), 0,
		0, 0, 0, 0, 0,
		0, 0, 0, 0, 0,
	}}
	p := packSparse(m, []int32{0, 2, 3, 4}, 5)
	if p == nil {
		t.Fatal("rows 0, 2-4 are 4/20 non-zero: not packed")
	}
	want := []struct {
		idx []int32
		val []float32
	}{{[]int32{1, 4}, []float32{1, 2}}, {}, {[]int32{1, 3}, []float32{float32(math.NaN()), float32(math.Inf(-1))}}, {}, {}}
	if p.Rows() != 5 || p.Dim() != 5 {
		t.Fatalf("packed %d×%d, want 5×5", p.Rows(), p.Dim())
	}
	for i, w := range want {
		if i == 1 {
			continue // not packed
		}
		idx, val := p.SparseRow(i)
		if len(idx) != len(w.idx) || len(val) != len(w.idx) {
			t.Fatalf("row %d: %v %v, want %v %v", i, idx, val, w.idx, w.val)
		}
		for j := range idx {
			if idx[j] != w.idx[j] || math.Float32bits(val[j]) != math.Float32bits(w.val[j]) {
				t.Fatalf("row %d: %v %v, want %v %v", i, idx, val, w.idx, w.val)
			}
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("row 1, not packed, read as a row")
			}
		}()
		p.SparseRow(1)
	}()
	if p := packSparse(m, []int32{0, 1}, 5); p != nil {
		t.Fatalf("rows 0 and 1 are 7/10 non-zero: packed anyway")
	}
}

// TestPrepareLayout: prepare multiplies features at most maxSparseDensity
// non-zero as sparse rows, denser ones as dense, and sparse input as given.
func TestPrepareLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	pairs := randPairs(rng, 40, 100)
	for _, tc := range []struct {
		name   string
		feat   Features
		sparse bool
	}{
		{"relu 0.14", reluDense(rng, 40, 64, 0.14), true},
		{"relu 0.5", reluDense(rng, 40, 64, 0.5), false},
		{"gaussian", randDense(rng, 40, 64), false},
		{"bag of words", randSparse(rng, 40, 64, 5), true},
	} {
		src, _, err := prepare(tc.feat, 64, pairs, "train")
		if err != nil {
			t.Fatal(err)
		}
		if got := src.sparse != nil || src.lean; got != tc.sparse {
			t.Errorf("%s: sparse %v, want %v", tc.name, got, tc.sparse)
		}
	}
}

// TestSparseMatchesDense: on ReLU-like features, the evaluation through
// the packed sparse rows (what prepare picks) and through the dense rows
// agree in value and gradient, for every model, float32 and float64, to
// within the rounding of the different summation orders.
func TestSparseMatchesDense(t *testing.T) {
	const items, dim = 700, 96
	rng := rand.New(rand.NewPCG(4, 4))
	feat := reluDense(rng, items, dim, 0.14)
	pairs := randPairs(rng, items, 3000)
	for _, tc := range []struct {
		spec Spec
		f64  bool
		tol  float64
	}{
		{Spec{Model: ModelLMT, K: 20}, false, 2e-6},
		{Spec{Model: ModelMonomer, K: 5, N: 4}, false, 2e-6},
		{Spec{Model: ModelWNN}, false, 2e-6},
		{Spec{Model: ModelLMT, K: 20}, true, 1e-12},
		{Spec{Model: ModelMonomer, K: 5, N: 4}, true, 1e-12},
		{Spec{Model: ModelWNN}, true, 1e-12},
	} {
		name := tc.spec.Model + map[bool]string{false: "/float32", true: "/float64"}[tc.f64]
		t.Run(name, func(t *testing.T) {
			spec, err := tc.spec.resolve()
			if err != nil {
				t.Fatal(err)
			}
			sp, ps, err := prepare(feat, dim, pairs, "train")
			if err != nil {
				t.Fatal(err)
			}
			if !sp.lean {
				t.Fatal("prepare kept ReLU features at density 0.14 dense")
			}
			dense, err := newRowSource(feat)
			if err != nil {
				t.Fatal(err)
			}
			m, err := newModel(spec.Model, dim, spec.K, spec.N)
			if err != nil {
				t.Fatal(err)
			}
			theta := (&trainer{model: m, train: newObjective(m.evaluator(dense, ps, true, 0), ps.labels)}).init(dense, ps, rand.New(rand.NewPCG(3, 3)))
			eval := func(src rowSource) (float64, []float64) {
				obj := newObjective(m.evaluator(src, ps, tc.f64, 0), ps.labels)
				obj.lambda = 1e-4
				grad := make([]float64, len(theta))
				return obj.eval(theta, grad), grad
			}
			fs, gs := eval(sp)
			fd, gd := eval(dense)
			if e := math.Abs(fs-fd) / math.Abs(fd); e > tc.tol || math.IsNaN(e) {
				t.Errorf("objective: sparse %.15g, dense %.15g (relative error %.3g > %g)", fs, fd, e, tc.tol)
			}
			if e := relErr(gs, gd); e > tc.tol || math.IsNaN(e) {
				t.Errorf("gradient: relative error %.3g > %g", e, tc.tol)
			}
		})
	}
}

// TestWNNProductsBudget: where the pairs' rows overlap so much that their
// products would pass F/maxProductsShare a pair, WNN runs the pairs on the
// dense rows instead (with the same value and gradient as far as rounding
// goes); below it, on the products.
func TestWNNProductsBudget(t *testing.T) {
	const items, dim = 300, 128
	rng := rand.New(rand.NewPCG(8, 8))
	for _, tc := range []struct {
		name     string
		shared   bool // every row non-zero on the same columns
		viaDense bool
	}{{"independent supports", false, false}, {"one shared support", true, true}} {
		feat := reluDense(rng, items, dim, 0.2)
		if tc.shared {
			for i := range feat.data {
				if i%dim < dim/5 {
					feat.data[i] = 1 + float32(rng.Float64())
				} else {
					feat.data[i] = 0
				}
			}
		}
		pairs := randPairs(rng, items, 2000)
		sp, ps, err := prepare(feat, dim, pairs, "train")
		if err != nil || !sp.lean {
			t.Fatalf("%s: prepare: sparse %v, %v", tc.name, sp.lean, err)
		}
		dense := sp
		dense.lean = false
		theta := make([]float64, dim)
		for i := range theta {
			theta[i] = 0.1 + rng.Float64()
		}
		eval := func(src rowSource) (*wnnEval[float32], float64, []float64) {
			e := newWNNEval[float32](src, ps, 0)
			grad := make([]float64, dim)
			var f float64
			e.eval(theta, func(k int, d float64) float64 { f += d * float64(k%7); return float64(k % 7) }, grad)
			return e, f, grad
		}
		e, fs, gs := eval(sp)
		_, fd, gd := eval(dense)
		if e.viaDense != tc.viaDense {
			t.Errorf("%s: via dense rows %v, want %v", tc.name, e.viaDense, tc.viaDense)
		}
		if math.Abs(fs-fd) > 1e-5*math.Abs(fd) || relErr(gs, gd) > 1e-5 {
			t.Errorf("%s: value %g against dense %g, gradient error %g", tc.name, fs, fd, relErr(gs, gd))
		}
	}
}

// TestValidErrorIsScores: on ReLU features packed as sparse rows, with
// validation pairs whose items the training pairs never touch, the fit's
// validation error is the error Score gives the kept parameters on those
// pairs (each pair set multiplies its own rows; one pair of slack for a
// probability at 0.5 that the scaled and raw parameters round apart).
func TestValidErrorIsScores(t *testing.T) {
	const items, dim = 400, 64
	rng := rand.New(rand.NewPCG(9, 9))
	feat := reluDense(rng, items, dim, 0.14)
	// Related pairs are items close in index: a signal the models can learn.
	draw := func(lo, hi, n int) []graph.Pair {
		ps := make([]graph.Pair, n)
		for i := range ps {
			x := lo + rng.IntN(hi-lo-1)
			y, related := lo+rng.IntN(hi-lo), rng.IntN(2) == 0
			if related {
				y = x + 1
			}
			if y == x {
				y = lo + (x-lo+1)%(hi-lo)
			}
			ps[i] = graph.Pair{X: int32(x), Y: int32(y), Label: related}
		}
		return ps
	}
	train, valid := draw(0, 300, 2000), draw(300, items, 600)
	for _, model := range []string{ModelLMT, ModelMonomer, ModelWNN} {
		spec := Spec{Model: model, K: 5, N: 2, Lambdas: []float64{1e-4}, MaxIter: 20}
		fit, err := Train(t.Context(), feat, train, valid, spec, rand.New(rand.NewPCG(1, 1)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if fit.SparseDensity == 0 {
			t.Fatalf("%s: trained on dense rows", model)
		}
		_, prob, err := fit.Score(feat, valid)
		if err != nil {
			t.Fatal(err)
		}
		wrong := 0
		for i, p := range valid {
			if (prob[i] > 0.5) != p.Label {
				wrong++
			}
		}
		if e := float64(wrong) / float64(len(valid)); math.Abs(e-fit.ValidError) > 1.0/float64(len(valid)) {
			t.Errorf("%s: validation error %v, Score's error on the same pairs %v", model, fit.ValidError, e)
		}
	}
}

// TestWNNProductsSameBits: WNN's pair products, kept as y's values and
// their positions in x's row (16 or 32 bits wide), give every pair the distance of the
// products z = f_x·f_y kept in float64 (summed by weightedSum, as before
// they were compacted), bit for bit, and both column widths, with and
// without rows asked for ahead, the same value and gradient bits.
func TestWNNProductsSameBits(t *testing.T) {
	const items, dim = 500, 200
	rng := rand.New(rand.NewPCG(9, 9))
	feat := reluDense(rng, items, dim, 0.14)
	pairs := randPairs(rng, items, 3*wnnChunk/2) // two chunks
	sp, ps, err := prepare(feat, dim, pairs, "train")
	if err != nil || !sp.lean {
		t.Fatalf("prepare: lean %v, %v", sp.lean, err)
	}
	theta := make([]float64, dim)
	for i := range theta {
		theta[i] = 0.1 + rng.Float64()
	}
	w2 := make([]float64, dim)
	for i, w := range theta {
		w2[i] = w * w
	}
	// The distances from float64 products, pair by pair.
	want := make([]float64, len(pairs))
	for p, pr := range pairs {
		ix, vx := feat.Row(int(pr.X)), feat.Row(int(pr.Y))
		var idx []int32
		var z []float64
		var nx, ny []int32
		var sx, sy []float32
		for c := range dim {
			if ix[c] != 0 {
				nx, sx = append(nx, int32(c)), append(sx, ix[c])
			}
			if vx[c] != 0 {
				ny, sy = append(ny, int32(c)), append(sy, vx[c])
			}
			if ix[c] != 0 && vx[c] != 0 {
				idx, z = append(idx, int32(c)), append(z, float64(ix[c])*float64(vx[c]))
			}
		}
		want[p] = max(weightedSum(w2, nx, sx, true)+weightedSum(w2, ny, sy, true)-2*weightedSum(w2, idx, z, false), 0)
	}
	eval := func() ([]float64, []float64, *wnnEval[float32]) {
		e := newWNNEval[float32](sp, ps, 0)
		d := make([]float64, len(pairs))
		grad := make([]float64, dim)
		// The evaluator hands over x-order positions; byX maps them to pairs.
		e.eval(theta, func(k int, v float64) float64 { p := int(ps.byX[k]); d[p] = v; return float64(p%5) - 2 }, grad)
		return d, grad, e
	}
	d16, g16, e := eval()
	if e.viaDense || e.z[0].pos16 == nil {
		t.Fatalf("via dense rows %v, 16-bit columns %v: not the path under test", e.viaDense, e.z[0].pos16 != nil)
	}
	for p := range want {
		if math.Float64bits(d16[p]) != math.Float64bits(want[p]) {
			t.Fatalf("pair %d: distance %v, from float64 products %v", p, d16[p], want[p])
		}
	}
	// Each chunk's Σ −2 g_p z_p, from the float64 products in x order.
	for ch := range (len(pairs) + wnnChunk - 1) / wnnChunk {
		acc := make([]float64, dim)
		for k := ch * wnnChunk; k < min((ch+1)*wnnChunk, len(pairs)); k++ {
			g := e.dg64[k]
			fx, fy := feat.Row(int(ps.items[ps.xEnd[k]])), feat.Row(int(ps.items[ps.yEnd[k]]))
			for c := range dim {
				if g != 0 && fx[c] != 0 && fy[c] != 0 {
					acc[c] -= 2 * g * (float64(fx[c]) * float64(fy[c]))
				}
			}
		}
		for c := range dim {
			if math.Float64bits(acc[c]) != math.Float64bits(e.acc64[ch][c]) {
				t.Fatalf("chunk %d column %d: products' gradient sum %v, from float64 products %v", ch, c, e.acc64[ch][c], acc[c])
			}
		}
	}
	// Rows asked for ahead (on long rows only in production): a prefetch
	// cannot change a value, so this guards the prefetches' indexing (a row
	// past the group or chunk panics) and that the path runs.
	longRow := wnnLongRow
	defer func() { wnnLongRow = longRow }()
	wnnLongRow = 1
	dp, gp, e := eval()
	if !e.longRows {
		t.Fatal("rows not asked for ahead")
	}
	bits := func(v float64) uint64 { return math.Float64bits(v) }
	same := func(a, b []float64) bool {
		return slices.EqualFunc(a, b, func(x, y float64) bool { return bits(x) == bits(y) })
	}
	if !same(dp, d16) || !same(gp, g16) {
		t.Error("asking for rows ahead changed distances or gradient bits")
	}
	wnnLongRow = longRow
	defer func(l int) { col16Limit = l }(col16Limit)
	col16Limit = dim - 1
	d32, g32, e := eval()
	if e.z[0].pos32 == nil {
		t.Fatal("32-bit positions not used")
	}
	for p := range d16 {
		if math.Float64bits(d16[p]) != math.Float64bits(d32[p]) {
			t.Fatalf("pair %d: distance %v with 16-bit positions, %v with 32", p, d16[p], d32[p])
		}
	}
	for i := range g16 {
		if math.Float64bits(g16[i]) != math.Float64bits(g32[i]) {
			t.Fatalf("gradient %d: %v with 16-bit positions, %v with 32", i, g16[i], g32[i])
		}
	}
}

// TestSharePacked: the train and validation sets' lean rows are packed
// once, every item of either set readable with its non-zeros; where the
// validation items alone are too dense, each set keeps its lean rows.
func TestSharePacked(t *testing.T) {
	const rows, dim = 60, 40
	rng := rand.New(rand.NewPCG(5, 5))
	feat := reluDense(rng, rows, dim, 0.14)
	a, ai := rowSource{dense: feat, dim: dim, rows: rows}, []int32{0, 3, 4, 10, 11, 30, 59}
	b, bi := a, []int32{1, 3, 11, 12, 58}
	a.nnz, a.lean = nonZeros(feat, ai, dim)
	b.nnz, b.lean = nonZeros(feat, bi, dim)
	sh := shareRows(a, ai, b, bi)
	if sh == nil {
		t.Fatal("no shared packing")
	}
	sa, sb := sh.pack(a, b)
	if sa.sparse == nil || sa.sparse != sb.sparse {
		t.Fatalf("not one packing: %v, %v", sa.sparse, sb.sparse)
	}
	p := sa.sparse.(*packedRows)
	if want, _ := nonZeros(feat, []int32{0, 1, 3, 4, 10, 11, 12, 30, 58, 59}, dim); int64(len(p.idx)) != want || cap(p.idx) != len(p.idx) {
		t.Errorf("%d non-zeros packed (capacity %d), want %d", len(p.idx), cap(p.idx), want)
	}
	for _, it := range append(slices.Clone(ai), bi...) {
		idx, val := sa.sparse.SparseRow(int(it))
		n := 0
		for c, v := range feat.Row(int(it)) {
			if v != 0 {
				if n >= len(idx) || idx[n] != int32(c) || val[n] != v {
					t.Fatalf("row %d: %v %v, not its non-zeros", it, idx, val)
				}
				n++
			}
		}
		if n != len(idx) {
			t.Fatalf("row %d: %d non-zeros packed, want %d", it, len(idx), n)
		}
	}
	for c := range dim {
		feat.data[58*dim+c] = 1 // a validation-only row all non-zero
	}
	if shareRows(a, ai, b, bi) != nil {
		t.Error("packed validation-only rows denser than maxSparseDensity")
	}
}

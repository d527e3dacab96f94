package models

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"unsafe"

	"monomer/graph"
	"monomer/internal/csrkern"
	"monomer/internal/hugemem"
	"monomer/internal/par"
	"monomer/internal/prefetch"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// Float is the element type of the compute kernels: float32 in production
// (features are float32, and it halves memory traffic), float64 for the
// finite-difference gradient checks.
type Float interface{ float32 | float64 }

// Fixed work partitions. Every sum whose order could depend on scheduling is
// taken over these units in index order, so results are bit-identical
// whatever GOMAXPROCS or Spec.Workers is.
const (
	// rowBlock is the number of items per gemm call in the dense path: large
	// enough for sgemm to reach its throughput, small enough that one block
	// (rowBlock×F) stays a few MB.
	rowBlock = 512
	// maxItemGroups bounds the item groups; each group owns one gradient
	// accumulator (F rows of C, Stride(C) apart for sparse float32 rows),
	// summed in group order. The projection models' passes over items run
	// a group a task, so the groups bound their parallelism: with 16, a
	// machine of 32 or 64 cores ran them at 16. Their work is near equal
	// (a group's non-zeros and pair ends within 2 % of the mean for
	// Electronics' bags of words, whole blocks of dense rows within 5 %),
	// so 64 groups keep 64 cores 94-96 % busy in a simulation of runChunks'
	// schedule, and 2 to 32 cores 91-99 % (16 groups: 76 % at 7 cores).
	// The accumulators then take 64·F·Stride(C)·4 bytes: 105 MB for
	// Women's images (4096×100), 143 MB for Electronics' bags of words
	// (5000×112).
	maxItemGroups = 64
	// minGroupBlocks is the fewest blocks of a group when there are more
	// than 16: each group costs about 1 ms an evaluation (clearing, filling
	// from memory and summing its 2 MB accumulator), which 64 groups of
	// 3 blocks (98,446 bag-of-words items) showed as 10-17 % more CPU than
	// 16; at 8 blocks or more it is a few per cent.
	minGroupBlocks = 8
	// pairChunk is the number of pairs per parallel task.
	pairChunk = 4096
)

// itemSpan is a half-open index range [lo, hi).
type itemSpan struct{ lo, hi int }

// itemGroups splits n items into contiguous groups of whole rowBlocks: 16
// (fewer below 16 blocks), doubled up to maxItemGroups while each keeps
// minGroupBlocks; 64 from 262,144 items. The split depends on n only.
func itemGroups(n int) []itemSpan {
	blocks := (n + rowBlock - 1) / rowBlock
	g := min(blocks, 16)
	for g > 0 && 2*g <= maxItemGroups && 2*g*minGroupBlocks <= blocks {
		g *= 2
	}
	out := make([]itemSpan, g)
	for i := range g {
		out[i] = itemSpan{lo: i * blocks / g * rowBlock, hi: min((i+1)*blocks/g*rowBlock, n)}
	}
	return out
}

// runChunks runs fn(w, i) for every i in [0, n) on at most workers goroutines
// (0: GOMAXPROCS; see internal/par); w in [0, workers) names the goroutine so
// fn can use per-goroutine scratch. Which goroutine runs which i is
// unspecified: fn's effect must depend on i only.
func runChunks(n, workers int, fn func(w, i int)) { par.For(n, workers, fn) }

// spanItems is the number of items per task of forSpans: a few
// milliseconds of work per row pass at 4096-d, so that the tail of a pass
// (the last tasks while the other workers are idle) stays short.
const spanItems = 256

// forSpans runs fn(lo, hi) over [0, n) in spans of spanItems on at most
// workers goroutines (0: GOMAXPROCS). The spans depend on n only; fn must
// write results indexed by position, never accumulate across spans.
func forSpans(n, workers int, fn func(lo, hi int)) {
	par.Spans(n, spanItems, workers, fn)
}

// gemm computes c = a·b (acc false) or c += aᵀ·b (acc true) through the
// swappable BLAS implementation (blas32.Use / blas64.Use): a is m×k (acc
// false) or k×m (acc true), b is k×n, c is m×n, all row-major and dense.
func gemm[T Float](acc bool, m, n, k int, a, b, c []T) {
	tA, beta := blas.NoTrans, 0.0
	lda := k
	if acc {
		tA, beta, lda = blas.Trans, 1, m
	}
	switch a := any(a).(type) {
	case []float32:
		blas32.Implementation().Sgemm(tA, blas.NoTrans, m, n, k, 1, a, lda, any(b).([]float32), n, float32(beta), any(c).([]float32), n)
	case []float64:
		blas64.Implementation().Dgemm(tA, blas.NoTrans, m, n, k, 1, a, lda, any(b).([]float64), n, beta, any(c).([]float64), n)
	}
}

// tinyFor is the magnitude below which float32 kernels flush values to
// zero. Subnormal float32 operands (below 1.2e-38) make each multiply-add
// about a hundred times slower, and they arise from saturated gates and
// confidently classified pairs (σ(−z) for z ≳ 70); 1e-30 leaves room for a
// further product and changes no result at the precision float32 carries.
// float64 kernels flush nothing.
func tinyFor[T Float]() T {
	var f any = T(0)
	if _, ok := f.(float32); ok {
		return T(1e-30)
	}
	return 0
}

// flushRow zeroes the entries of v smaller than tiny in magnitude. Call it
// on long runs: the conversion to any for the float32 path costs an
// allocation.
func flushRow[T Float](v []T, tiny T) {
	if tiny == 0 {
		return
	}
	if v32, ok := any(v).([]float32); ok {
		flush32(v32, float32(tiny))
		return
	}
	for i, x := range v {
		if x < tiny && x > -tiny {
			v[i] = 0
		}
	}
}

// flush32 is flushRow for float32 without branches, on the bits: four
// times the speed of the compare-and-store loop, whose cost showed at 2 %
// of an evaluation. NaN stays NaN, −0 becomes +0, as there.
func flush32(v []float32, tiny float32) {
	tb := int32(math.Float32bits(tiny))
	for i, x := range v {
		b := int32(math.Float32bits(x))
		m := ((b & 0x7fffffff) - tb) >> 31 // all ones when |x| < tiny
		v[i] = math.Float32frombits(uint32(b &^ m))
	}
}

// axpyFunc returns y += alpha·x for T through the swappable BLAS (SIMD in
// gonum's assembly: twice a plain Go loop at the lengths used here, C ≈ 100).
// It is chosen once per evaluator: converting slices to interfaces per call
// would allocate.
func axpyFunc[T Float]() func(alpha T, x, y []T) {
	var f any
	switch any(T(0)).(type) {
	case float32:
		impl := blas32.Implementation()
		f = func(alpha float32, x, y []float32) { impl.Saxpy(len(x), alpha, x, 1, y, 1) }
	case float64:
		impl := blas64.Implementation()
		f = func(alpha float64, x, y []float64) { impl.Daxpy(len(x), alpha, x, 1, y, 1) }
	}
	return f.(func(T, []T, []T))
}

// dotFunc returns x·y for T through the swappable BLAS (gonum's SIMD
// assembly in either build: only gemm goes to OpenBLAS).
func dotFunc[T Float]() func(x, y []T) T {
	var f any
	switch any(T(0)).(type) {
	case float32:
		impl := blas32.Implementation()
		f = func(x, y []float32) float32 { return impl.Sdot(len(x), x, 1, y, 1) }
	case float64:
		impl := blas64.Implementation()
		f = func(x, y []float64) float64 { return impl.Ddot(len(x), x, 1, y, 1) }
	}
	return f.(func([]T, []T) T)
}

// axpyGo is y += alpha·x in Go, unrolled by four: for short vectors (K ≈ 20
// in Monomer) it beats a BLAS call, whose fixed cost is several times the
// work.
func axpyGo[T Float](alpha T, x, y []T) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		xs, ys := x[i:i+4:i+4], y[i:i+4:i+4]
		ys[0] += alpha * xs[0]
		ys[1] += alpha * xs[1]
		ys[2] += alpha * xs[2]
		ys[3] += alpha * xs[3]
	}
	for ; i < len(x); i++ {
		y[i] += alpha * x[i]
	}
}

// softplusStable is log(1 + e^t) without overflow or loss of precision for large |t|.
func softplusStable(t float64) float64 {
	if t > 0 {
		return t + math.Log1p(math.Exp(-t))
	}
	return math.Log1p(math.Exp(t))
}

// sigmoidStable is 1/(1 + e^-t), computed from the side where e^(-|t|) <= 1.
func sigmoidStable(t float64) float64 {
	if t >= 0 {
		return 1 / (1 + math.Exp(-t))
	}
	e := math.Exp(t)
	return e / (1 + e)
}

// pairLogLik is one pair's log-likelihood under P(related) = σ(c − d) (paper
// §III-C) with z = c − d, and its derivative with respect to z:
// log σ(z) = −softplusStable(−z) for related pairs, log(1 − σ(z)) = −softplusStable(z)
// for unrelated ones.
//
// It is softplusStable and sigmoidStable of t = ∓z with their common
// e^(−|t|) computed once: the same bits for one exp fewer a pair.
func pairLogLik(z float64, related bool) (ll, dz float64) {
	t := z
	if related {
		t = -z
	}
	e := math.Exp(-math.Abs(t))
	sp, sg := math.Log1p(e), e/(1+e)
	if t > 0 {
		sp = t + sp
	}
	if t >= 0 {
		sg = 1 / (1 + e)
	}
	if related {
		return -sp, sg
	}
	return -sp, -sg
}

// sparseMul sets out = Σ_j val_j·W[idx_j], W's rows stride apart: the
// float32 kernels of package csrkern, which hold the sums in registers,
// or one axpy a non-zero (the same bits for float32).
func sparseMul[T Float](out []T, idx []int32, val []float32, w []T, stride int, axpy func(T, []T, []T)) {
	if o, ok := any(out).([]float32); ok {
		csrkern.RowMul(o, idx, val, any(w).([]float32), stride)
		return
	}
	clear(out)
	for j, col := range idx {
		axpy(T(val[j]), w[int(col)*stride:][:len(out)], out)
	}
}

// sparseAcc adds val_j·g to row idx_j of acc (rows stride apart) for
// every j: one row's share of Xᵀ·G, as sparseMul. Float32 rows dense
// enough take csrkern.Cols instead, whose bits are those of this over the
// rows in order (TestSparseColsSameBits).
func sparseAcc[T Float](acc []T, idx []int32, val []float32, g []T, stride int, axpy func(T, []T, []T)) {
	if a, ok := any(acc).([]float32); ok {
		csrkern.RowAcc(a, idx, val, any(g).([]float32), stride)
		return
	}
	c := len(g)
	for j, col := range idx {
		axpy(T(val[j]), g, acc[int(col)*stride:][:c])
	}
}

// rowSource reads item feature rows, dense or sparse. Where both are set
// (dense features packed as sparse rows, see prepare), the kernels take
// the sparse rows.
type rowSource struct {
	dense  Dense
	block  DenseBlock // dense, when it gives contiguous row ranges
	sparse Sparse
	dim    int
	rows   int
	// lean: dense rows with at most maxSparseDensity of their values
	// non-zero over the pair set's items (nnz of them), multiplied as
	// sparse rows. Each evaluator keeps them in the one layout it reads
	// (packed, or csrkern.Cols): at Women's size each copy of the train
	// items' non-zeros is 2.7 GB.
	lean bool
	nnz  int64
}

// packed returns s with the lean dense rows of items packed as sparse rows
// (packSparse), for the kernels that read rows one by one.
func (s rowSource) packed(items []int32) rowSource {
	if s.lean && s.sparse == nil {
		s.sparse = packRows(s.dense, items, s.dim)
	}
	return s
}

// sharedRows are the items of two pair sets whose lean rows are packed
// once for both (the validation items are mostly training items too), and
// their non-zeros.
type sharedRows struct {
	items []int32
	nnz   int64
}

// shareRows plans one packing of the lean rows of the ascending items ai
// (of a) and bi (of b), or returns nil where either is not lean or the
// rows of both are denser than maxSparseDensity together.
func shareRows(a rowSource, ai []int32, b rowSource, bi []int32) *sharedRows {
	if !a.lean || !b.lean || a.sparse != nil || b.sparse != nil {
		return nil
	}
	var items, only []int32 // the union, and bi's items not in ai
	i := 0
	for _, it := range bi {
		for ; i < len(ai) && ai[i] < it; i++ {
			items = append(items, ai[i])
		}
		if i < len(ai) && ai[i] == it {
			continue // taken from ai
		}
		items, only = append(items, it), append(only, it)
	}
	items = append(items, ai[i:]...)
	nnz, ok := nonZeros(a.dense, only, a.dim)
	if !ok || float64(a.nnz+nnz) > maxSparseDensity*float64(len(items))*float64(a.dim) {
		return nil
	}
	return &sharedRows{items: items, nnz: a.nnz + nnz}
}

// pack returns a and b with the rows of sh packed once for both.
func (sh *sharedRows) pack(a, b rowSource) (rowSource, rowSource) {
	p := packRows(a.dense, sh.items, a.dim)
	a.sparse, b.sparse = p, p
	return a, b
}

// nonZeroRow returns row i's non-zeros, columns ascending: the sparse row,
// or a lean dense row's, the latter in idx and val (dim long).
func (s rowSource) nonZeroRow(i int, idx []int32, val []float32) ([]int32, []float32) {
	if s.sparse != nil {
		return s.sparse.SparseRow(i)
	}
	n := 0
	for j, v := range s.dense.Row(i)[:s.dim] {
		if v != 0 {
			idx[n], val[n] = int32(j), v
			n++
		}
	}
	return idx[:n], val[:n]
}

func newRowSource(feat Features) (rowSource, error) {
	if feat == nil {
		return rowSource{}, fmt.Errorf("models: nil features: %w", ErrInput)
	}
	s := rowSource{dim: feat.Dim(), rows: feat.Rows()}
	// Sparse first: a BoW matrix that can also densify rows is far cheaper
	// through its non-zeros.
	if sp, ok := feat.(Sparse); ok {
		s.sparse = sp
	} else if d, ok := feat.(Dense); ok {
		s.dense = d
		s.block, _ = d.(DenseBlock)
	} else {
		return rowSource{}, fmt.Errorf("models: features %T are neither Dense nor Sparse: %w", feat, ErrInput)
	}
	if s.dim <= 0 {
		return rowSource{}, fmt.Errorf("models: features have dimension %d: %w", s.dim, ErrInput)
	}
	return s, nil
}

// check verifies the rows of items once, so the kernels can index W without
// bounds surprises: dense rows at least dim long, sparse indices in [0, dim)
// with one value each, strictly ascending. The items are checked in spans
// on all cores; the error reported is the first bad item's in items'
// order, whatever GOMAXPROCS is.
func (s rowSource) check(items []int32) error {
	const span = 4096
	errs := make([]error, (len(items)+span-1)/span)
	par.Spans(len(items), span, 0, func(lo, hi int) {
		for _, it := range items[lo:hi] {
			if errs[lo/span] = s.checkRow(int(it)); errs[lo/span] != nil {
				return // each span stops at its first bad row; the first span's error wins below
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkRow is check of one item's row.
func (s rowSource) checkRow(i int) error {
	if s.sparse == nil {
		if n := len(s.dense.Row(i)); n < s.dim {
			return fmt.Errorf("models: feature row %d has %d values, want %d: %w", i, n, s.dim, ErrInput)
		}
		return nil
	}
	idx, val := s.sparse.SparseRow(i)
	if len(idx) != len(val) {
		return fmt.Errorf("models: sparse feature row %d has %d indices and %d values: %w", i, len(idx), len(val), ErrInput)
	}
	for k, j := range idx {
		if j < 0 || int(j) >= s.dim {
			return fmt.Errorf("models: sparse feature row %d: column %d out of range [0, %d): %w", i, j, s.dim, ErrInput)
		}
		if k > 0 && j <= idx[k-1] {
			return fmt.Errorf("models: sparse feature row %d: columns not strictly ascending at position %d: %w", i, k, ErrInput)
		}
	}
	return nil
}

// density is the share of non-zero values in the rows of items where they
// are sparse, 0 where they are dense.
func (s rowSource) density(items []int32) float64 {
	if s.lean && s.sparse == nil && len(items) > 0 {
		return float64(s.nnz) / (float64(len(items)) * float64(s.dim))
	}
	if s.sparse == nil || len(items) == 0 {
		return 0
	}
	nnz := 0
	for _, it := range items {
		idx, _ := s.sparse.SparseRow(int(it))
		nnz += len(idx)
	}
	return float64(nnz) / (float64(len(items)) * float64(s.dim))
}

// sqNorm is ‖f_i‖², summed over the non-zeros of sparse and lean rows
// (buf holds a lean row's, dim long).
func (s rowSource) sqNorm(i int, buf []float32) float64 {
	var v []float32
	switch {
	case s.sparse != nil:
		_, v = s.sparse.SparseRow(i)
	case s.lean:
		v = buf[:0]
		for _, x := range s.dense.Row(i)[:s.dim] {
			if x != 0 {
				v = append(v, x)
			}
		}
	default:
		v = s.dense.Row(i)
	}
	// Float64 accumulation in gonum's SIMD assembly: this pass reads every
	// train row once per Train, as much memory as one projection.
	return blas32.Implementation().Dsdot(len(v), v, 1, v, 1)
}

// denseRows copies the rows of items into buf (len(items)×dim, row-major).
// The float32 path is a plain copy (memmove): at Women's size the element
// loop cost as much CPU as the OpenBLAS gemm it feeds.
func denseRows[T Float](d Dense, items []int32, dim int, buf []T) {
	if b32, ok := any(buf).([]float32); ok {
		for r, it := range items {
			copy(b32[r*dim:(r+1)*dim], d.Row(int(it))[:dim])
		}
		return
	}
	for r, it := range items {
		row := d.Row(int(it))[:dim]
		dst := buf[r*dim : (r+1)*dim]
		for j, v := range row {
			dst[j] = T(v)
		}
	}
}

// pairSet is a set of labelled pairs over the distinct items they touch. Each
// item gets a local index (items ascending), so every item is projected once
// per evaluation however many pairs it is in.
type pairSet struct {
	items  []int32 // global item index of each local item, ascending
	x, y   []int32 // local indices of each pair's ends
	labels []bool
	// byX[xOff[i]:xOff[i+1]] are the pairs whose x is local item i, in pair
	// order; byY likewise for y. They fix the order in which an item's
	// gradient terms are added.
	xOff, byX []int32
	yOff, byY []int32
	// Position k of "x order" is pair byX[k]; xEnd[k] and yEnd[k] are its
	// ends (xEnd ascending). Evaluators keep per-pair state by x-order
	// position, and for byY[j] yPos[j] is the pair's position and yOther[j]
	// its x. The passes over items and pairs then read these arrays
	// sequentially, and every scattered read (a row of P, a pair's state) has
	// its address at hand early, so the CPU overlaps the cache misses instead
	// of chasing pair index → end → row one miss after another.
	xEnd, yEnd   []int32
	yPos, yOther []int32
}

// newPairSet indexes pairs over rows items; what names the pair set in errors.
func newPairSet(pairs []graph.Pair, rows int, what string) (*pairSet, error) {
	local := make([]int32, rows)
	for i, p := range pairs {
		for _, v := range [2]int32{p.X, p.Y} {
			if v < 0 || int(v) >= rows {
				return nil, fmt.Errorf("models: %s pair %d: item %d out of range [0, %d): %w", what, i, v, rows, ErrInput)
			}
			local[v] = 1
		}
	}
	ps := &pairSet{}
	for g, used := range local {
		if used != 0 {
			local[g] = int32(len(ps.items))
			ps.items = append(ps.items, int32(g))
		}
	}
	// The loops below write each index once, so they run in spans on all
	// cores; the two counting sorts run side by side.
	n := len(pairs)
	each := func(fn func(lo, hi int)) { par.Spans(n, pairChunk, 0, fn) }
	ps.x, ps.y, ps.labels = make([]int32, n), make([]int32, n), make([]bool, n)
	each(func(lo, hi int) {
		for i, p := range pairs[lo:hi] {
			ps.x[lo+i], ps.y[lo+i], ps.labels[lo+i] = local[p.X], local[p.Y], p.Label
		}
	})
	runChunks(2, 0, func(_, e int) {
		if e == 0 {
			ps.xOff, ps.byX = incidence(ps.x, len(ps.items))
		} else {
			ps.yOff, ps.byY = incidence(ps.y, len(ps.items))
		}
	})
	ps.xEnd, ps.yEnd = make([]int32, n), make([]int32, n)
	pos := make([]int32, n)
	each(func(lo, hi int) {
		for k, q := range ps.byX[lo:hi] {
			ps.xEnd[lo+k], ps.yEnd[lo+k], pos[q] = ps.x[q], ps.y[q], int32(lo+k)
		}
	})
	ps.yPos, ps.yOther = make([]int32, n), make([]int32, n)
	each(func(lo, hi int) {
		for j, q := range ps.byY[lo:hi] {
			ps.yPos[lo+j], ps.yOther[lo+j] = pos[q], ps.x[q]
		}
	})
	return ps, nil
}

// incidence groups pair indices by end (a counting sort, stable in pair order).
func incidence(end []int32, items int) (off, by []int32) {
	off = make([]int32, items+1)
	for _, e := range end {
		off[e+1]++
	}
	for i := range items {
		off[i+1] += off[i]
	}
	by = make([]int32, len(end))
	pos := append([]int32(nil), off[:items]...)
	for p, e := range end {
		by[pos[e]] = int32(p)
		pos[e]++
	}
	return off, by
}

// pairKernel is the per-pair part of a projection model: given the projected
// rows P[x] and P[y] (C columns each, see projEval) it computes the distance
// in O(C); st is the pair's saved state (stateLen values) written by dist.
// In the backward pass itemGrad forms item i's row of G = ∂f/∂P from the
// pairs that have i as an end: gr += Σ_q g_q·∂d_q/∂P[i], pr = P[i], the pairs
// taken in the fixed order ps.byX then ps.byY (g_q and the state are in x
// order: e.dg[k] for x-order position k, see pairSet). It is per item,
// not per pair, so a model can factor the sum over the item's pairs into a
// few axpys and order its reads of the other ends' rows so their cache
// misses overlap (the rows are scattered: at 50 k items and more, most are
// misses, and they, not the arithmetic, set the cost).
//
// What depends on one item only (Monomer's gate) is computed once an item by
// item, from its row of P right after the product (itemLen values, is), and
// dist gets the x end's values (isx) instead of recomputing them a pair.
type pairKernel[T Float] interface {
	cols() int
	stateLen() int
	itemLen() int
	item(pr, is []T)
	dist(px, py, isx, st []T) T
	itemGrad(e *projEval[T], i int, pr, gr []T, sc *combo)
}

// combo is an item group's scratch for csrkern.Combine: the terms of an
// item's row of G as offsets of rows of P and their coefficients. With
// float32 kernels the models form G_i by one Combine per block of G_i (its
// sums in registers, one read of each row of P) instead of an axpy a pair
// into memory: the same terms in the same order, so the same bits.
type combo struct {
	off  []int32
	coef []float32
}

// add appends the term coef·P[off:].
func (sc *combo) add(off int, coef float32) {
	sc.off, sc.coef = append(sc.off, int32(off)), append(sc.coef, coef)
}

// combine sets out to the sum of the terms, in order, and empties sc.
func (sc *combo) combine(out, p []float32) {
	csrkern.Combine(out, sc.off, sc.coef, p)
	sc.off, sc.coef = sc.off[:0], sc.coef[:0]
}

// projEval evaluates a projection model (LMT, Monomer). One evaluation:
//
//  1. P = X·W for the distinct items X of the pair set, W the F×C parameter
//     matrix (the concatenation [E₀ | E₁ … E_N | U] for Monomer): one gemm per
//     rowBlock of dense rows, or CSR rows times W for sparse features;
//  2. every pair's distance from its two rows of P, O(C) per pair;
//  3. with a gradient: G = ∂f/∂P item by item over the item's pairs, then
//     ∂f/∂W = Xᵀ·G, one gemm per block accumulated per item group and the
//     groups summed in order.
type projEval[T Float] struct {
	kern    pairKernel[T]
	src     rowSource
	ps      *pairSet
	workers int
	f, c    int
	groups  []itemSpan

	axpy    func(alpha T, x, y []T)
	tiny    T
	w, p, g []T            // W (F×C, rows ws apart), P and G (items×C)
	is      []T            // per item state (items×kern.itemLen())
	acc     [][]T          // per item group F rows, ws apart
	scratch [][]T          // per worker rowBlock×F dense rows
	spanBuf [][]T          // per worker maxSpan×C rows of P or G over a direct span
	spans   []blockSpan[T] // per rowBlock of items (item groups are whole blocks)
	st      []T            // per pair state, in x order (see pairSet)
	dg      []T            // per pair ∂f/∂d, in x order

	// Float32 kernels with P's offsets within int32: P and G as float32
	// (for Combine), and a combo per item group; nil otherwise.
	p32, g32 []float32
	combos   []combo
	// The columns of a row of P the kernel reads at a pair's y end and at
	// its x end, for the prefetches (rowParts; all of them by default).
	yPart, xPart [2]int

	// Sparse float32 rows: W's and the accumulators' rows a whole number of
	// cache lines apart (ws = csrkern.Stride(c), else c), and per item group
	// where byCols its rows by columns for X·W and Xᵀ·G, built by the first
	// pass that needs them (other groups go row by row).
	ws     int
	cols   []*csrkern.Cols
	byCols []bool // per item group: csrkern.ByColumns, else row by row
}

func newProjEval[T Float](kern pairKernel[T], src rowSource, ps *pairSet, workers int) *projEval[T] {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	c, n := kern.cols(), len(ps.items)
	e := &projEval[T]{
		kern: kern, src: src, ps: ps, workers: workers,
		f: src.dim, c: c, ws: c, groups: itemGroups(n), axpy: axpyFunc[T](), tiny: tinyFor[T](),
		p:       hugemem.Slice[T](n * c),
		is:      make([]T, n*kern.itemLen()),
		scratch: make([][]T, workers),
		spanBuf: make([][]T, workers),
		st:      hugemem.Slice[T](len(ps.x) * kern.stateLen()),
		dg:      hugemem.Slice[T](len(ps.x)),
	}
	_, f32 := any(T(0)).(float32)
	if !f32 {
		// Float64 kernels read the lean rows one by one.
		src = src.packed(ps.items)
		e.src = src
	}
	if f32 && (src.sparse != nil || src.lean) {
		e.ws = csrkern.Stride(c)
		e.w = any(csrkern.Floats(src.dim * e.ws)).([]T)
		e.cols = make([]*csrkern.Cols, len(e.groups))
		e.byCols = byColumns(src, ps.items, e.groups, c)
	} else {
		e.w = make([]T, src.dim*c)
	}
	e.yPart, e.xPart = [2]int{0, c}, [2]int{0, c}
	if rp, ok := kern.(rowParts); ok {
		e.yPart, e.xPart = rp.parts()
	}
	if p32, ok := any(e.p).([]float32); ok && len(p32) < math.MaxInt32 {
		e.p32, e.combos = p32, make([]combo, len(e.groups))
	}
	// Where each block's rows lie depends on the items only: found once,
	// read by every forward and backward pass.
	if src.sparse == nil && !src.lean {
		e.spans = make([]blockSpan[T], (n+rowBlock-1)/rowBlock)
		for b := range e.spans {
			e.spans[b].span, e.spans[b].ok = e.direct(ps.items[b*rowBlock : min((b+1)*rowBlock, n)])
		}
	}
	return e
}

// byColumns decides per item group whether its rows are multiplied by
// columns (csrkern.Cols) or row by row. Lean rows are kept by columns
// only.
func byColumns(src rowSource, items []int32, groups []itemSpan, c int) []bool {
	by := make([]bool, len(groups))
	for gi, g := range groups {
		nnz := int64(0)
		if src.sparse != nil {
			nnz = sparseNNZ(src.sparse, items[g.lo:g.hi])
		}
		by[gi] = groupByColumns(src, g.hi-g.lo, c, nnz)
	}
	return by
}

// groupByColumns is byColumns for one item group of rows rows holding nnz
// non-zeros (sparse rows; lean rows are by columns whatever nnz says).
func groupByColumns(src rowSource, rows, c int, nnz int64) bool {
	return src.sparse == nil || csrkern.ByColumns(rows, src.dim, c, int(min(nnz, math.MaxInt32)))
}

func (e *projEval[T]) order() []int32 { return e.ps.byX }

func (e *projEval[T]) eval(theta []float64, loss func(k int, d float64) float64, grad []float64) {
	if e.ws == e.c {
		for i, v := range theta {
			e.w[i] = T(v)
		}
	} else {
		for r := range e.f {
			row := e.w[r*e.ws : r*e.ws+e.c]
			for k, v := range theta[r*e.c : (r+1)*e.c] {
				row[k] = T(v)
			}
		}
	}
	flushRow(e.w, e.tiny)
	e.project()
	e.pairs(loss)
	if grad != nil {
		e.gradient(grad)
	}
}

// gradient runs the backward pass on the state of the last eval.
func (e *projEval[T]) gradient(grad []float64) {
	e.backward()
	// Fixed-order reduction of the item groups' accumulators (rows ws
	// apart): each element summed over the groups in group order, spans of
	// rows in parallel (serial, 16 accumulators of F×C were 1 % of an LMT
	// fit, all of it time no second core shortened).
	forSpans(e.f, e.workers, func(lo, hi int) {
		clear(grad[lo*e.c : hi*e.c])
		for _, a := range e.acc {
			for r := lo; r < hi; r++ {
				gr := grad[r*e.c : (r+1)*e.c]
				for k, v := range a[r*e.ws : r*e.ws+e.c] {
					gr[k] += float64(v)
				}
			}
		}
	})
}

func (e *projEval[T]) denseScratch(w int) []T {
	if e.scratch[w] == nil {
		e.scratch[w] = make([]T, rowBlock*e.f)
	}
	return e.scratch[w]
}

// maxSpan bounds the global rows a direct block may span: a block of
// rowBlock items whose ids have gaps is multiplied over the whole range,
// gap rows included, when that adds at most 1/4 to its gemms. Copying a
// block's 512 rows of 4096 floats (forward and backward) measured 23-40 %
// of its two gemms, 64 gap rows 4-18 %, 128 gap rows 16-27 %
// (BenchmarkBlockCopyVsGaps, docs/notes/2026-11-23-blas-kernels-sgemm.md).
// With 1/8, where about 10 %
// of rows have no training pair (Women's size), one block in seven or eight
// was copied.
const maxSpan = rowBlock + rowBlock/4

// span is a block's rows in place: the global rows items[0]..items[last]
// of the matrix, gap rows included, as one contiguous segment or as a few
// where they cross boundaries of the matrix's storage (record batches of
// the mapped file). At Women's size one block in eight crossed a batch and
// was copied out; multiplying its segments in place instead leaves no block
// copied and no 8 MB copy on the heap, though the evaluation's CPU did not
// change measurably on AMD Zen 4 (docs/notes/2026-11-21-paper-full-scale.md).
type span[T Float] struct {
	seg  [maxSegments][]T
	rows int // rows of all segments
}

// blockSpan is a block's span, ok false where its rows are copied instead.
type blockSpan[T Float] struct {
	span[T]
	ok bool
}

// maxSegments bounds the storage segments of a span multiplied in place:
// 2 suffice for a mapped feature file, whose record batches (4096 rows)
// are longer than maxSpan; 4 also take shorter batches (the tests' 300).
const maxSegments = 4

// mul computes out = X·W over the span's rows (out is rows×C).
func (s span[T]) mul(w, out []T, f, c int) {
	r := 0
	for _, x := range s.seg {
		if n := len(x) / f; n > 0 {
			gemm(false, n, c, f, x, w, out[r*c:(r+n)*c])
			r += n
		}
	}
}

// acc adds Xᵀ·G over the span's rows to acc (g is rows×C).
func (s span[T]) acc(g, acc []T, f, c int) {
	r := 0
	for _, x := range s.seg {
		if n := len(x) / f; n > 0 {
			gemm(true, f, c, n, x, g[r*c:(r+n)*c], acc)
			r += n
		}
	}
}

// direct returns the rows of items in place when the features allow it
// and they span at most maxSpan global rows in at most maxSegments storage
// segments; ok is false otherwise (float64 kernels always copy).
func (e *projEval[T]) direct(items []int32) (s span[T], ok bool) {
	if _, f32 := any(e.w).([]float32); !f32 || e.src.block == nil {
		return s, false
	}
	lo, hi := int(items[0]), int(items[len(items)-1])+1
	if hi-lo > maxSpan {
		return s, false
	}
	block := func(a, b int) []T {
		x, _ := any(e.src.block.Block(a, b)).([]T)
		if len(x) < (b-a)*e.f {
			return nil
		}
		return x
	}
	s.rows = hi - lo
	for i, a := 0, lo; a < hi; i++ {
		if i == maxSegments {
			return s, false
		}
		// The longest contiguous run of rows from a: all of them, as a rule.
		n := hi - a
		if block(a, hi) == nil {
			n = sort.Search(hi-a, func(j int) bool { return block(a, a+j+1) == nil })
		}
		if n == 0 {
			return s, false
		}
		s.seg[i] = block(a, a+n)
		a += n
	}
	return s, true
}

func (e *projEval[T]) spanScratch(w int) []T {
	if e.spanBuf[w] == nil {
		e.spanBuf[w] = make([]T, maxSpan*e.c)
	}
	return e.spanBuf[w]
}

// project fills P = X·W and the per-item state.
func (e *projEval[T]) project() {
	f, c, il := e.f, e.c, e.kern.itemLen()
	// itemState fills the per-item state of items lo..hi-1, while their
	// rows of P are in cache.
	itemState := func(lo, hi int) {
		if il == 0 {
			return
		}
		for i := lo; i < hi; i++ {
			e.kern.item(e.p[i*c:(i+1)*c], e.is[i*il:(i+1)*il])
		}
	}
	runChunks(len(e.groups), e.workers, func(w, gi int) {
		grp := e.groups[gi]
		// By columns (image rows, and lean rows, held that way only):
		// MulTo, whose bits are RowMul's.
		if e.cols != nil && e.byCols[gi] {
			e.colsOf(gi).MulTo(any(e.p[grp.lo*c:grp.hi*c]).([]float32), any(e.w).([]float32), c, e.ws)
			itemState(grp.lo, grp.hi)
			return
		}
		if e.src.sparse != nil {
			for i := grp.lo; i < grp.hi; i++ {
				idx, val := e.src.sparse.SparseRow(int(e.ps.items[i]))
				sparseMul(e.p[i*c:(i+1)*c], idx, val, e.w, e.ws, e.axpy)
				itemState(i, i+1)
			}
			return
		}
		for lo := grp.lo; lo < grp.hi; lo += rowBlock {
			hi := min(lo+rowBlock, grp.hi)
			items := e.ps.items[lo:hi]
			sp := e.spans[lo/rowBlock]
			switch {
			case !sp.ok:
				buf := e.denseScratch(w)
				denseRows(e.src.dense, items, f, buf)
				gemm(false, hi-lo, c, f, buf[:(hi-lo)*f], e.w, e.p[lo*c:hi*c])
			case sp.rows == hi-lo: // no gaps: straight into P
				sp.mul(e.w, e.p[lo*c:hi*c], f, c)
			default: // P of the whole span, then the items' rows
				pb := e.spanScratch(w)[:sp.rows*c]
				sp.mul(e.w, pb, f, c)
				for r, it := range items {
					o := int(it-items[0]) * c
					copy(e.p[(lo+r)*c:(lo+r+1)*c], pb[o:o+c])
				}
			}
			itemState(lo, hi)
		}
	})
}

// colsOf returns item group gi's sparse rows by columns, built the first
// time: the items and their features are fixed for the fit.
func (e *projEval[T]) colsOf(gi int) *csrkern.Cols {
	if e.cols[gi] == nil {
		grp := e.groups[gi]
		var idx []int32
		var val []float32
		if e.src.sparse == nil {
			idx, val = make([]int32, e.f), make([]float32, e.f)
		}
		e.cols[gi] = csrkern.NewCols(grp.hi-grp.lo, e.f, e.c, func(i int) ([]int32, []float32) {
			return e.src.nonZeroRow(int(e.ps.items[grp.lo+i]), idx, val)
		})
	}
	return e.cols[gi]
}

// Prefetch distances, measured at 50 k items
// (docs/notes/2026-11-23-blas-kernels-sgemm.md; twice these did the same): the pair pass asks for the y end's row of P pfPairs pairs
// ahead, the item gradients for what the item pfItems ahead reads.
const pfPairs, pfItems = 8, 2

// rowParts is a pairKernel that reads only parts of the other end's row of
// P: y is the columns it reads of a pair's y end, x of its x end, each
// [lo, hi). Monomer reads a y end's N spaces and an x end's anchor
// space (its first K columns), so loading the whole row (7 cache lines at
// C = 104) for the latter fetched 5 lines in vain for every pair.
type rowParts interface {
	parts() (y, x [2]int)
}

// prefetchPart starts loading columns part of row i of P.
func (e *projEval[T]) prefetchPart(i int, part [2]int) {
	prefetch.Span(unsafe.Pointer(&e.p[i*e.c+part[0]]), (part[1]-part[0])*int(unsafe.Sizeof(e.p[0])))
}

// prefetchItem starts loading what itemGrad reads for item i besides its
// own row: the other ends' rows of P, and for the pairs where i is the y
// end their state and ∂f/∂d (scattered in x order).
func (e *projEval[T]) prefetchItem(i int) {
	ps, sl := e.ps, e.kern.stateLen()
	for k := ps.xOff[i]; k < ps.xOff[i+1]; k++ {
		e.prefetchPart(int(ps.yEnd[k]), e.yPart)
	}
	for j := ps.yOff[i]; j < ps.yOff[i+1]; j++ {
		e.prefetchPart(int(ps.yOther[j]), e.xPart)
		kx := int(ps.yPos[j])
		prefetch.Span(unsafe.Pointer(&e.dg[kx]), 1)
		if sl > 0 {
			prefetch.Span(unsafe.Pointer(&e.st[kx*sl]), sl*int(unsafe.Sizeof(e.st[0])))
		}
	}
}

// pairs computes every pair's distance and stores loss's ∂f/∂d, in x order:
// the x rows of P are read in sequence, the y rows at addresses known ahead.
func (e *projEval[T]) pairs(loss func(k int, d float64) float64) {
	ps, n, c, sl, il := e.ps, len(e.ps.x), e.c, e.kern.stateLen(), e.kern.itemLen()
	runChunks((n+pairChunk-1)/pairChunk, e.workers, func(_, ch int) {
		hi := min((ch+1)*pairChunk, n)
		for k := ch * pairChunk; k < hi; k++ {
			if k+pfPairs < hi {
				e.prefetchPart(int(ps.yEnd[k+pfPairs]), e.yPart)
			}
			x, y := int(ps.xEnd[k]), int(ps.yEnd[k])
			d := e.kern.dist(e.p[x*c:(x+1)*c], e.p[y*c:(y+1)*c], e.is[x*il:(x+1)*il], e.st[k*sl:(k+1)*sl])
			g := T(loss(k, float64(d)))
			if g < e.tiny && g > -e.tiny {
				g = 0
			}
			e.dg[k] = g
		}
	})
}

// backward forms G = ∂f/∂P and accumulates Xᵀ·G per item group.
func (e *projEval[T]) backward() {
	f, c := e.f, e.c
	ps := e.ps
	if e.g == nil {
		e.g = hugemem.Slice[T](len(e.p))
		if e.p32 != nil {
			e.g32 = any(e.g).([]float32)
		}
		// Rows ws floats apart, aligned to cache lines as W's, where the
		// rows are sparse float32.
		e.acc = make([][]T, len(e.groups))
		for i := range e.acc {
			if e.ws != c {
				e.acc[i] = any(csrkern.Floats(f * e.ws)).([]T)
			} else {
				e.acc[i] = make([]T, f*c)
			}
		}
	}
	runChunks(len(e.groups), e.workers, func(w, gi int) {
		grp := e.groups[gi]
		// Each item's row of G is written by this group only, its terms
		// added in a fixed order.
		for i := grp.lo; i < grp.hi; i++ {
			if i+pfItems < grp.hi {
				e.prefetchItem(i + pfItems)
			}
			gr := e.g[i*c : (i+1)*c]
			clear(gr)
			var sc *combo
			if e.combos != nil {
				sc = &e.combos[gi]
			}
			e.kern.itemGrad(e, i, e.p[i*c:(i+1)*c], gr, sc)
		}
		flushRow(e.g[grp.lo*c:grp.hi*c], e.tiny)
		acc := e.acc[gi]
		clear(acc)
		if e.cols != nil && e.byCols[gi] {
			e.colsOf(gi).AddTo(any(acc).([]float32), any(e.g[grp.lo*c:grp.hi*c]).([]float32), c, e.ws)
			return
		}
		if e.src.sparse != nil {
			for i := grp.lo; i < grp.hi; i++ {
				idx, val := e.src.sparse.SparseRow(int(ps.items[i]))
				sparseAcc(acc, idx, val, e.g[i*c:(i+1)*c], e.ws, e.axpy)
			}
			return
		}
		for lo := grp.lo; lo < grp.hi; lo += rowBlock {
			hi := min(lo+rowBlock, grp.hi)
			items := ps.items[lo:hi]
			sp := e.spans[lo/rowBlock]
			switch {
			case !sp.ok:
				buf := e.denseScratch(w)
				denseRows(e.src.dense, items, f, buf)
				gemm(true, f, c, hi-lo, buf[:(hi-lo)*f], e.g[lo*c:hi*c], acc)
			case sp.rows == hi-lo:
				sp.acc(e.g[lo*c:hi*c], acc, f, c)
			default: // G over the whole span, zero on the gap rows
				gb := e.spanScratch(w)[:sp.rows*c]
				clear(gb)
				for r, it := range items {
					o := int(it-items[0]) * c
					copy(gb[o:o+c], e.g[(lo+r)*c:(lo+r+1)*c])
				}
				sp.acc(gb, acc, f, c)
			}
		}
	})
}

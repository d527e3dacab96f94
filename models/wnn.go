package models

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"

	"monomer/internal/prefetch"
	"monomer/internal/wnnkern"
)

// wnn is the weighted nearest neighbour baseline (paper §IV-B):
// d(x, y) = ‖w ∘ (f_x − f_y)‖² = Σ_f w_f² (f_x,f − f_y,f)², θ = w.
type wnn struct{ f int }

func (m wnn) size() int { return m.f }

// draw starts from plain Euclidean distance, w = 1 (Train rescales it so the
// median initial distance is 1); w = 0 would be a saddle point of w ↦ w².
func (m wnn) draw(theta []float64, _ *rand.Rand, _ float64) {
	for i := range theta {
		theta[i] = 1
	}
}

func (m wnn) scale(theta []float64, s float64) {
	for i := range theta {
		theta[i] *= s
	}
}

func (m wnn) layout() []blockLayout {
	return []blockLayout{{name: "w", rows: m.f, cols: 1, stride: 1}}
}

func (m wnn) params(theta []float64) []Param { return unpackBlocks(theta, m.layout()) }

func (m wnn) pack(params []Param) ([]float64, error) {
	theta := make([]float64, m.size())
	return theta, packBlocks(params, theta, m.layout())
}

func (m wnn) evaluator(src rowSource, ps *pairSet, f64 bool, workers int) evaluator {
	if f64 {
		return newWNNEval[float64](src, ps, workers)
	}
	return newWNNEval[float32](src, ps, workers)
}

// wnnChunk is the pairs per WNN task (a run of x-order positions); each
// chunk owns an F-vector of gradient sums, added in chunk order.
const wnnChunk = 8192

// wnnAhead is how many pairs ahead the sparse pass prefetches a y end's
// Σ w² f².
const wnnAhead = 16

// Dense rows of at most wnnShortRow values (LDA's 100 topics where more
// than a quarter of them are non-zero; at Electronics' size they are 11 %
// non-zero and go sparse) take too little time a pair for Dist's prefetch
// of the next pair's y row to hide a read from DRAM: their y rows are also
// asked for wnnDenseAhead pairs ahead. BenchmarkWNNTopics on the Zen 5, CPU-s a pass: 100 values
// 0.36 → 0.25, 1024 0.64-0.71 → 0.57-0.62; at 4096 the extra prefetch
// cost 11 % (2.40 → 2.66), hence the bound.
const wnnDenseAhead, wnnShortRow = 8, 1024

// wnnEval has no projection to share: each pair costs O(F) dense or
// O(nnz_x + nnz_y) sparse. With q_f = (f_x,f − f_y,f)², d = Σ w_f² q_f and
// ∂d/∂w_f = 2 w_f q_f.
type wnnEval[T Float] struct {
	src     rowSource
	ps      *pairSet
	workers int
	axpy    func(alpha T, x, y []T)
	dot     func(x, y []T) T
	tiny    T
	w2      []T   // w²
	acc     [][]T // per chunk Σ_p g_p q_p
	q       [][]T // per worker q of the current pair (float64 dense rows)
	// Sparse rows (sparseEval): w² and per chunk sums in float64, and per
	// worker the current x's row spread out.
	w2s   []float64
	sq    []float64 // per local item Σ_f w²_f f²
	dg64  []float64 // per pair ∂f/∂d, in x order
	acc64 [][]float64
	z     []pairProducts // per chunk, built at the first evaluation
	// viaDense: the products would exceed their budget, so the pairs run
	// on the dense rows.
	viaDense bool
	longRows bool // rows of at least wnnLongRow non-zeros on average: sparseEval asks for them ahead
}

func newWNNEval[T Float](src rowSource, ps *pairSet, workers int) *wnnEval[T] {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &wnnEval[T]{
		src: src.packed(ps.items), ps: ps, workers: workers, axpy: axpyFunc[T](), dot: dotFunc[T](), tiny: tinyFor[T](),
		w2: make([]T, src.dim),
		q:  make([][]T, workers),
	}
}

func (e *wnnEval[T]) order() []int32 { return e.ps.byX }

func (e *wnnEval[T]) eval(theta []float64, loss func(k int, d float64) float64, grad []float64) {
	if e.src.sparse != nil && !e.viaDense {
		if e.z == nil {
			// Beyond their budget (maxProductsShare) the products would
			// take more memory than their speed is worth: dense rows,
			// where the features have them, run the pairs instead.
			budget := math.MaxInt
			if e.src.dense != nil {
				budget = len(e.ps.x) * max(e.src.dim/maxProductsShare, 1)
			}
			e.z = e.productsOf(budget)
			e.viaDense = e.z == nil
			e.longRows = sparseNNZ(e.src.sparse, e.ps.items) >= wnnLongRow*int64(len(e.ps.items))
		}
		if !e.viaDense {
			e.sparseEval(theta, loss, grad)
			return
		}
	}
	for i, w := range theta {
		e.w2[i] = T(w * w)
	}
	flushRow(e.w2, e.tiny)
	n, f := len(e.ps.x), e.src.dim
	chunks := (n + wnnChunk - 1) / wnnChunk
	if grad != nil && len(e.acc) != chunks {
		e.acc = make([][]T, chunks)
		for i := range e.acc {
			e.acc[i] = make([]T, f)
		}
	}
	// Float32 dense rows take the assembly kernels of package wnnkern.
	w2f32, fast := any(e.w2).([]float32)
	fast = fast && e.src.dense != nil
	ps := e.ps
	runChunks(chunks, e.workers, func(w, ch int) {
		var acc []T
		if grad != nil {
			acc = e.acc[ch]
			clear(acc)
		}
		// Chunks are runs of x-order positions (see pairSet): a pair's x
		// row is usually the previous pair's, still in cache.
		lo, hi := ch*wnnChunk, min((ch+1)*wnnChunk, n)
		if fast {
			e.denseChunk(w2f32, any(acc).([]float32), lo, hi, loss)
			return
		}
		if e.q[w] == nil {
			e.q[w] = make([]T, f)
		}
		for k := lo; k < hi; k++ {
			x, y := int(ps.items[ps.xEnd[k]]), int(ps.items[ps.yEnd[k]])
			q := e.diff(x, y, e.q[w])
			g := T(loss(k, float64(e.dot(e.w2, q))))
			if acc == nil || (g < e.tiny && g > -e.tiny) {
				continue
			}
			e.axpy(g, q, acc)
		}
	})
	if grad != nil {
		sumSquaredGrad(grad, e.acc, theta, e.workers)
	}
}

// sumSquaredGrad sets grad to 2w ∘ Σ acc (∂f/∂w from the sums over w²),
// each element summed over acc in order, spans of elements in parallel:
// the bits of a serial sum at any number of workers.
func sumSquaredGrad[T Float](grad []float64, acc [][]T, theta []float64, workers int) {
	forSpans(len(grad), workers, func(lo, hi int) {
		g := grad[lo:hi]
		clear(g)
		for _, a := range acc {
			for j, v := range a[lo:hi] {
				g[j] += float64(v)
			}
		}
		for j, w := range theta[lo:hi] {
			g[j] *= 2 * w
		}
	})
}

// denseChunk runs x-order positions [lo, hi) on float32 dense rows: one
// pass over both rows for the distance, and for the gradient a second pass
// that finds them in cache; no per-pair buffer is written.
func (e *wnnEval[T]) denseChunk(w2, acc []float32, lo, hi int, loss func(k int, d float64) float64) {
	ps, rows, f := e.ps, e.src.dense, e.src.dim
	tiny := float32(e.tiny)
	row := func(local int32) []float32 { return rows.Row(int(ps.items[local]))[:f] }
	var fx, fy, next []float32
	last := int32(-1)
	short := f <= wnnShortRow
	if lo < hi {
		next = row(ps.yEnd[lo])
	}
	for k := lo; k < hi; k++ {
		if x := ps.xEnd[k]; x != last {
			fx, last = row(x), x
		}
		// The next pair's y row is prefetched during this one (its x is
		// usually this x; prefetching the x rows too measured no faster).
		fy = next
		if k+1 < hi {
			next = row(ps.yEnd[k+1])
		}
		if short && k+wnnDenseAhead < hi {
			prefetch.Span(unsafe.Pointer(&row(ps.yEnd[k+wnnDenseAhead])[0]), 4*f)
		}
		g := float32(loss(k, float64(wnnkern.Dist(w2, fx, fy, next))))
		if acc == nil || (g < tiny && g > -tiny) {
			continue
		}
		wnnkern.Grad(acc, g, fx, fy)
	}
}

// diff returns q = (f_x − f_y)² over all F columns of dense rows.
func (e *wnnEval[T]) diff(x, y int, qBuf []T) []T {
	fx, fy := e.src.dense.Row(x)[:e.src.dim], e.src.dense.Row(y)[:e.src.dim]
	q := qBuf[:len(fx)]
	squaredDiff(q, fx, fy)
	return q
}

// sparseEval is eval on sparse rows. With s_i = Σ_f w²_f f²_i,f an item
// and the pair's products z = f_x ∘ f_y on supp x ∩ supp y,
//
//	d = s_x + s_y − 2 Σ_f w²_f z_f
//	Σ_p g_p (f_x − f_y)² = Σ_i h_i f_i² − 2 Σ_p g_p z_p
//
// with h_i = Σ_p g_p over item i's pairs. The z do not depend on w: built
// once (productsOf), they make an evaluation three sequential passes, over
// the items, the products and the items again, instead of fetching two
// scattered rows a pair. For ReLU features, 14 % non-zero at Women's size,
// a pair has 180 products where its two rows have about 1,000 non-zeros
// (and 8,192 values).
// The sums cancel where y is close to x: z is exact in float64 (a product
// of two float32) and summed in float64, so d's error stays near 1e-16 of
// s_x + s_y (z rounded to float32 put it at 1e-7: Score's probabilities
// and the Retriever's float64 ones then differed by up to 3e-9, past
// TestTopKMatchesBruteForce's 1e-9). So the products are kept as y's
// value and the position of the column in x's row (6 bytes, 12 as a
// float64 and an int32: 4.3 GB at Women's size, 180 products a pair), and
// z is formed again from x's row, read in x order: the same bits. d is
// clamped at 0.
func (e *wnnEval[T]) sparseEval(theta []float64, loss func(k int, d float64) float64, grad []float64) {
	ps, f := e.ps, e.src.dim
	n := len(ps.x)
	groups := itemGroups(len(ps.items))
	chunks := (n + wnnChunk - 1) / wnnChunk
	if e.w2s == nil {
		e.w2s = make([]float64, f)
		e.sq = make([]float64, len(ps.items))
		e.dg64 = make([]float64, n)
	}
	for i, w := range theta {
		e.w2s[i] = w * w
	}
	w2 := e.w2s
	row := func(i int) ([]int32, []float32) { return e.src.sparse.SparseRow(int(ps.items[i])) }
	// The item passes stream the rows in item order, but the hardware's
	// prefetch alone runs too little ahead of loops that also gather.
	long := e.longRows
	ahead := func(i, hi int) {
		if a := i + wnnRowAhead; long && a < hi {
			prefetchRow(row(a))
		}
	}
	runChunks(len(groups), e.workers, func(_, gi int) {
		for i := groups[gi].lo; i < groups[gi].hi; i++ {
			ahead(i, groups[gi].hi)
			idx, val := row(i)
			e.sq[i] = weightedSum(w2, idx, val, true)
		}
	})
	if grad != nil && len(e.acc64) != chunks+len(groups) {
		e.acc64 = make([][]float64, chunks+len(groups))
		for i := range e.acc64 {
			e.acc64[i] = make([]float64, f)
		}
	}
	runChunks(chunks, e.workers, func(w, ch int) {
		var acc []float64
		if grad != nil {
			acc = e.acc64[ch]
			clear(acc)
		}
		z := &e.z[ch]
		lo, hi := ch*wnnChunk, min((ch+1)*wnnChunk, n)
		var ix []int32
		var vx []float32
		last := int32(-1)
		for k := lo; k < hi; k++ {
			if k+wnnAhead < hi {
				// sq of a y end is a random read that the products
				// streaming through the caches have evicted.
				prefetch.Span(unsafe.Pointer(&e.sq[ps.yEnd[k+wnnAhead]]), 8)
			}
			if a := k + wnnXAhead; long && a < hi && ps.xEnd[a] != ps.xEnd[a-1] {
				// A new x end's row: its products' positions read it
				// all over, in no order the hardware follows.
				prefetchRow(row(int(ps.xEnd[a])))
			}
			if x := ps.xEnd[k]; x != last {
				ix, vx = row(int(x))
				last = x
			}
			a, b := z.off[k-lo], z.off[k-lo+1]
			var cross float64
			if z.pos16 != nil {
				cross = crossSum(w2, ix, vx, z.pos16[a:b], z.vy[a:b])
			} else {
				cross = crossSum(w2, ix, vx, z.pos32[a:b], z.vy[a:b])
			}
			g := loss(k, max(e.sq[ps.xEnd[k]]+e.sq[ps.yEnd[k]]-2*cross, 0))
			if acc == nil || (g < float64(e.tiny) && g > -float64(e.tiny)) {
				e.dg64[k] = 0
				continue
			}
			e.dg64[k] = g
			if z.pos16 != nil {
				subProducts(acc, g, ix, vx, z.pos16[a:b], z.vy[a:b])
			} else {
				subProducts(acc, g, ix, vx, z.pos32[a:b], z.vy[a:b])
			}
		}
	})
	if grad == nil {
		return
	}
	// Σ_i h_i f_i², one accumulator per item group.
	runChunks(len(groups), e.workers, func(_, gi int) {
		acc := e.acc64[chunks+gi]
		clear(acc)
		for i := groups[gi].lo; i < groups[gi].hi; i++ {
			if a := i + 2; a < groups[gi].hi {
				// ∂f/∂d of the pairs where item a is the y end: scattered
				// over the x order.
				for j := ps.yOff[a]; j < ps.yOff[a+1]; j++ {
					prefetch.Span(unsafe.Pointer(&e.dg64[ps.yPos[j]]), 8)
				}
			}
			var h float64
			for k := ps.xOff[i]; k < ps.xOff[i+1]; k++ {
				h += e.dg64[k]
			}
			for j := ps.yOff[i]; j < ps.yOff[i+1]; j++ {
				h += e.dg64[ps.yPos[j]]
			}
			ahead(i, groups[gi].hi)
			if h == 0 {
				continue
			}
			idx, val := row(i)
			addSquares(acc, h, idx, val)
		}
	})
	sumSquaredGrad(grad, e.acc64, theta, e.workers)
}

// pairProducts holds, for the pairs of one chunk (x-order positions lo..),
// z = f_x ∘ f_y on supp x ∩ supp y as positions in x's sparse row and f_y
// there: pair lo+k's positions are pos16 (features of at most 2¹⁶
// columns) or pos32 [off[k]:off[k+1]], ascending, f_y's values vy
// likewise.
type pairProducts struct {
	off   []int
	pos16 []uint16
	pos32 []int32
	vy    []float32
}

// The loops over a pair's products and an item's row below index through
// unsafe pointers: with Go's bounds checks on the two levels of
// indirection (position, column) crossSum took 1.6 ns a product, without
// them 0.86, as fast as the same loop in assembly or C
// (docs/notes/2026-11-27-bow-rows-gather-ceiling.md). Every index is
// in range: prepare checks once that every row an evaluator reads has its
// columns in [0, dim), ascending (rowSource.check; rows do not change, see
// Sparse), and a product's positions, found by productsOf in x's row,
// ascend within it. checkProducts and checkRow test on every call what
// lies at hand: the lengths, and a pair's first and last positions.
// Testing a row's last column again there read the row's far end before
// its start: a miss from DRAM a row, 0.11 CPU-s of a Women-size pass.

// crossSum is Σ_j w2[c_j] z_j with c_j = ix[pos_j], z_j = vx[pos_j]·vy_j,
// as weightedSum sums the products z (the same bits).
func crossSum[I uint16 | int32](w2 []float64, ix []int32, vx []float32, pos []I, vy []float32) float64 {
	n := checkProducts(ix, vx, pos, vy)
	if n == 0 {
		return 0
	}
	at, w := productAt(ix, vx, pos, vy), unsafe.Pointer(&w2[0])
	term := func(k uintptr) float64 {
		c, z := at(k)
		return *(*float64)(unsafe.Add(w, c*8)) * z
	}
	var s0, s1, s2, s3 float64
	k, m := uintptr(0), uintptr(n&^3)
	for ; k < m; k += 4 {
		s0 += term(k)
		s1 += term(k + 1)
		s2 += term(k + 2)
		s3 += term(k + 3)
	}
	for ; k < uintptr(n); k++ {
		s0 += term(k)
	}
	return (s0 + s1) + (s2 + s3)
}

// productAt returns product k's column c_k and z_k; the caller has
// checked the slices with checkProducts (n > 0).
func productAt[I uint16 | int32](ix []int32, vx []float32, pos []I, vy []float32) func(k uintptr) (uintptr, float64) {
	i, x := unsafe.Pointer(&ix[0]), unsafe.Pointer(&vx[0])
	pp, yp := unsafe.Pointer(&pos[0]), unsafe.Pointer(&vy[0])
	size := unsafe.Sizeof(pos[0])
	return func(k uintptr) (uintptr, float64) {
		p := uintptr(*(*I)(unsafe.Add(pp, k*size)))
		z := float64(*(*float32)(unsafe.Add(x, p*4))) * float64(*(*float32)(unsafe.Add(yp, k*4)))
		return uintptr(*(*int32)(unsafe.Add(i, p*4))), z
	}
}

// checkProducts panics where a pair's products could index outside x's
// row (for positions ascending, as built), and returns their count. x's
// columns are in range of w2 (rowSource.check).
func checkProducts[I uint16 | int32](ix []int32, vx []float32, pos []I, vy []float32) int {
	n := len(pos)
	if len(vy) != n || len(vx) != len(ix) {
		panic("models: WNN products and rows of different lengths")
	}
	if n > 0 && (pos[0] < 0 || int(pos[n-1]) >= len(ix)) {
		panic("models: WNN product outside its row")
	}
	return n
}

// subProducts subtracts 2·g·z_j from acc[c_j], c_j = ix[pos_j], z_j =
// vx[pos_j]·vy_j.
func subProducts[I uint16 | int32](acc []float64, g float64, ix []int32, vx []float32, pos []I, vy []float32) {
	n := checkProducts(ix, vx, pos, vy)
	if n == 0 {
		return
	}
	at, a := productAt(ix, vx, pos, vy), unsafe.Pointer(&acc[0])
	for k := range uintptr(n) {
		c, z := at(k)
		// 2g is formed again for every product: hoisting it out of the
		// loop measured 7 % slower over the whole pass
		// (docs/notes/2026-11-27-wnn-prefetch.md), not understood.
		*(*float64)(unsafe.Add(a, c*8)) -= 2 * g * z
	}
}

// wnnRowAhead is how many items ahead the item passes ask for a row, and
// wnnXAhead how many pairs ahead the pair pass asks for a new x end's row:
// on Women's rows (560 non-zeros) the two took WNN's pass from 1.25 to
// 1.15 CPU-s on the Zen 5. Odd item distances measured 0.05-0.08 slower
// than even ones, not understood (docs/notes/2026-11-27-wnn-prefetch.md).
const wnnRowAhead, wnnXAhead = 2, 4

// wnnLongRow is the average of non-zeros a row from which WNN asks for rows
// ahead: on Electronics' words (87) the prefetches cost 1.5 %, the
// hardware keeping up with short rows alone. A variable for the tests.
var wnnLongRow int64 = 256

// prefetchRow asks for the cache lines of a sparse row.
func prefetchRow(idx []int32, val []float32) {
	if len(idx) > 0 && len(val) > 0 {
		prefetch.Span(unsafe.Pointer(&idx[0]), 4*len(idx))
		prefetch.Span(unsafe.Pointer(&val[0]), 4*len(val))
	}
}

// col16Limit is the feature dimension up to which products keep their
// positions as uint16 (a variable for the tests of the int32 path).
var col16Limit = 1 << 16

// maxProductsShare bounds the pair products WNN keeps: at most F /
// maxProductsShare a pair on average (256 at F = 4096, 3 KB, against the
// 32 KB of a pair's two dense rows). Women's size has 180.
const maxProductsShare = 16

// productsOf computes every chunk's pair products, or returns nil once
// more than budget of them are counted (a chunk adds its count when
// done; the sum only grows, so the outcome does not depend on timing).
// x's row is spread into a dense buffer once for its run of pairs; each y
// row is read once.
func (e *wnnEval[T]) productsOf(budget int) []pairProducts {
	ps, n, f := e.ps, len(e.ps.x), e.src.dim
	chunks := (n + wnnChunk - 1) / wnnChunk
	out := make([]pairProducts, chunks)
	xps := make([][]int32, e.workers) // per worker 1 + x's position of each column, or 0
	// Per worker growing lists, copied out exactly sized at each chunk's
	// end: appending into each chunk's own lists left up to half of 4.3 GB
	// as garbage at Women's size, which the collector let the heap keep.
	type lists struct {
		pos []int32
		vy  []float32
	}
	scratch := make([]lists, e.workers)
	var total atomic.Int64
	runChunks(chunks, e.workers, func(w, ch int) {
		if total.Load() > int64(budget) {
			return
		}
		if xps[w] == nil {
			xps[w] = make([]int32, f)
		}
		xp := xps[w]
		lo, hi := ch*wnnChunk, min((ch+1)*wnnChunk, n)
		z := pairProducts{off: make([]int, 1, hi-lo+1)}
		zl := &scratch[w]
		zl.pos, zl.vy = zl.pos[:0], zl.vy[:0]
		var ix []int32
		last := int32(-1)
		for k := lo; k < hi; k++ {
			if x := ps.xEnd[k]; x != last {
				for _, c := range ix {
					xp[c] = 0
				}
				ix, _ = e.src.sparse.SparseRow(int(ps.items[x]))
				for j, c := range ix {
					xp[c] = int32(j + 1)
				}
				last = x
			}
			iy, vy := e.src.sparse.SparseRow(int(ps.items[ps.yEnd[k]]))
			for j, c := range iy {
				if p := xp[c]; p != 0 {
					zl.pos = append(zl.pos, p-1)
					zl.vy = append(zl.vy, vy[j])
				}
			}
			z.off = append(z.off, len(zl.pos))
		}
		for _, c := range ix {
			xp[c] = 0
		}
		if f <= col16Limit {
			z.pos16 = make([]uint16, len(zl.pos))
			for j, p := range zl.pos {
				z.pos16[j] = uint16(p)
			}
		} else {
			z.pos32 = slices.Clone(zl.pos)
		}
		z.vy = slices.Clone(zl.vy)
		out[ch] = z
		total.Add(int64(len(z.vy)))
	})
	if total.Load() > int64(budget) {
		return nil
	}
	return out
}

// weightedSum is Σ_j w2[idx_j] val_j, or with square Σ_j w2[idx_j] val_j²
// (as (w2·v)·v), in four interleaved sums: one sum would wait on each
// addition's latency.
func weightedSum[V float32 | float64](w2 []float64, idx []int32, val []V, square bool) float64 {
	n := checkRow(idx, val)
	if n == 0 {
		return 0
	}
	w, ip, vp := unsafe.Pointer(&w2[0]), unsafe.Pointer(&idx[0]), unsafe.Pointer(&val[0])
	size := unsafe.Sizeof(val[0])
	term := func(k uintptr) float64 {
		v := float64(*(*V)(unsafe.Add(vp, k*size)))
		t := *(*float64)(unsafe.Add(w, uintptr(*(*int32)(unsafe.Add(ip, k*4)))*8)) * v
		if square {
			t *= v
		}
		return t
	}
	var s0, s1, s2, s3 float64
	k, m := uintptr(0), uintptr(n&^3)
	for ; k < m; k += 4 {
		s0 += term(k)
		s1 += term(k + 1)
		s2 += term(k + 2)
		s3 += term(k + 3)
	}
	for ; k < uintptr(n); k++ {
		s0 += term(k)
	}
	return (s0 + s1) + (s2 + s3)
}

// checkRow panics where a sparse row's values do not match its columns,
// and returns its length. The columns are in range of a dim-long vector
// (rowSource.check).
func checkRow[V float32 | float64](idx []int32, val []V) int {
	n := len(idx)
	if len(val) != n {
		panic("models: sparse row's indices and values of different lengths")
	}
	return n
}

// addSquares adds h·v_j² to acc[c_j] for the row (c, v), four at a time
// (2 % off Women's pass against the plain loop,
// docs/notes/2026-11-27-wnn-prefetch.md): the plain loop's additions in its order, so the same
// bits.
func addSquares(acc []float64, h float64, idx []int32, val []float32) {
	n := checkRow(idx, val)
	if n == 0 {
		return
	}
	a, ip, vp := unsafe.Pointer(&acc[0]), unsafe.Pointer(&idx[0]), unsafe.Pointer(&val[0])
	add := func(k uintptr) {
		v := float64(*(*float32)(unsafe.Add(vp, k*4)))
		c := (*float64)(unsafe.Add(a, uintptr(*(*int32)(unsafe.Add(ip, k*4)))*8))
		*c += h * v * v
	}
	k, m := uintptr(0), uintptr(n&^3)
	for ; k < m; k += 4 {
		add(k)
		add(k + 1)
		add(k + 2)
		add(k + 3)
	}
	for ; k < uintptr(n); k++ {
		add(k)
	}
}

// squaredDiff sets q = (a − b)² elementwise, four at a time: the iterations
// are independent, and the unrolled body with its bounds checks hoisted runs
// about twice as fast as the plain loop.
func squaredDiff[T Float](q []T, a, b []float32) {
	n := len(q)
	a, b = a[:n], b[:n]
	j := 0
	for ; j+4 <= n; j += 4 {
		qq, aa, bb := q[j:j+4:j+4], a[j:j+4:j+4], b[j:j+4:j+4]
		t0, t1 := T(aa[0])-T(bb[0]), T(aa[1])-T(bb[1])
		t2, t3 := T(aa[2])-T(bb[2]), T(aa[3])-T(bb[3])
		qq[0], qq[1], qq[2], qq[3] = t0*t0, t1*t1, t2*t2, t3*t3
	}
	for ; j < n; j++ {
		t := T(a[j]) - T(b[j])
		q[j] = t * t
	}
}

package models

import (
	"math/rand/v2"
	"runtime"

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
	idx     [][]int32
	q       [][]T // per worker q of the current pair (float64 or sparse)
}

func newWNNEval[T Float](src rowSource, ps *pairSet, workers int) *wnnEval[T] {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &wnnEval[T]{
		src: src, ps: ps, workers: workers, axpy: axpyFunc[T](), dot: dotFunc[T](), tiny: tinyFor[T](),
		w2:  make([]T, src.dim),
		idx: make([][]int32, workers),
		q:   make([][]T, workers),
	}
}

func (e *wnnEval[T]) eval(theta []float64, loss func(p int, d float64) float64, grad []float64) {
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
			e.q[w], e.idx[w] = make([]T, 2*f), make([]int32, 2*f)
		}
		for k := lo; k < hi; k++ {
			x, y := int(ps.items[ps.xEnd[k]]), int(ps.items[ps.yEnd[k]])
			idx, q := e.diff(x, y, e.idx[w], e.q[w])
			var d T
			if idx == nil {
				d = e.dot(e.w2, q)
			} else {
				for j, v := range q {
					d += e.w2[idx[j]] * v
				}
			}
			g := T(loss(int(ps.byX[k]), float64(d)))
			if acc == nil || (g < e.tiny && g > -e.tiny) {
				continue
			}
			if idx == nil {
				e.axpy(g, q, acc)
			} else {
				for j, v := range q {
					acc[idx[j]] += g * v
				}
			}
		}
	})
	if grad == nil {
		return
	}
	clear(grad)
	for _, a := range e.acc {
		for j, v := range a {
			grad[j] += float64(v)
		}
	}
	for j, w := range theta {
		grad[j] *= 2 * w
	}
}

// denseChunk runs x-order positions [lo, hi) on float32 dense rows: one
// pass over both rows for the distance, and for the gradient a second pass
// that finds them in cache; no per-pair buffer is written.
func (e *wnnEval[T]) denseChunk(w2, acc []float32, lo, hi int, loss func(p int, d float64) float64) {
	ps, rows, f := e.ps, e.src.dense, e.src.dim
	tiny := float32(e.tiny)
	row := func(local int32) []float32 { return rows.Row(int(ps.items[local]))[:f] }
	var fx, fy, next []float32
	last := int32(-1)
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
		g := float32(loss(int(ps.byX[k]), float64(wnnkern.Dist(w2, fx, fy, next))))
		if acc == nil || (g < tiny && g > -tiny) {
			continue
		}
		wnnkern.Grad(acc, g, fx, fy)
	}
}

// diff returns q = (f_x − f_y)² over all F columns (idx nil) for dense
// features, or over the union of the two sparse supports with its column
// indices.
func (e *wnnEval[T]) diff(x, y int, idxBuf []int32, qBuf []T) ([]int32, []T) {
	if e.src.dense != nil {
		fx, fy := e.src.dense.Row(x)[:e.src.dim], e.src.dense.Row(y)[:e.src.dim]
		q := qBuf[:len(fx)]
		squaredDiff(q, fx, fy)
		return nil, q
	}
	ix, vx := e.src.sparse.SparseRow(x)
	iy, vy := e.src.sparse.SparseRow(y)
	n := 0
	put := func(j int32, t T) {
		idxBuf[n], qBuf[n] = j, t*t
		n++
	}
	a, b := 0, 0
	for a < len(ix) || b < len(iy) {
		switch {
		case b == len(iy) || (a < len(ix) && ix[a] < iy[b]):
			put(ix[a], T(vx[a]))
			a++
		case a == len(ix) || iy[b] < ix[a]:
			put(iy[b], -T(vy[b]))
			b++
		default:
			put(ix[a], T(vx[a])-T(vy[b]))
			a++
			b++
		}
	}
	return idxBuf[:n], qBuf[:n]
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

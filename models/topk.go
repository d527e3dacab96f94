package models

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"monomer/internal/dotkern"
)

// Projection holds items' positions f·W in float64, W being a fitted LMT's
// or Monomer's parameter blocks side by side in Params order ([E] or
// [E0 | E1 … EN | U]). Row r belongs to item Items[r].
type Projection struct {
	Items []int32
	Cols  int
	Data  []float64
	names []string
	offs  []int // column offset of each block; offs[len(names)] = Cols
}

// Row is item Items[r]'s projection, all blocks.
func (p *Projection) Row(r int) []float64 { return p.Data[r*p.Cols : (r+1)*p.Cols : (r+1)*p.Cols] }

// Block returns the columns of the named block ("E", "E0".."EN", "U") in a
// row, or nil if there is no such block.
func (p *Projection) Block(r int, name string) []float64 {
	i := slices.Index(p.names, name)
	if i < 0 {
		return nil
	}
	row := p.Row(r)
	return row[p.offs[i]:p.offs[i+1]:p.offs[i+1]]
}

// Gate is Monomer's P(k|x) = softmax(Uᵀf_x) (Eq. 5) of row r; nil for LMT.
func (p *Projection) Gate(r int) []float64 {
	z := p.Block(r, "U")
	if z == nil {
		return nil
	}
	return softmax(z, make([]float64, len(z)))
}

func softmax(z, out []float64) []float64 {
	mx := math.Inf(-1)
	for _, v := range z {
		mx = max(mx, v)
	}
	var sum float64
	for i, v := range z {
		out[i] = math.Exp(v - mx)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// Project computes the projection of items (indices into feat) for a fitted
// LMT or Monomer. The result depends on the inputs only.
func (f *Fit) Project(feat Features, items []int32) (*Projection, error) {
	if f.Model != ModelLMT && f.Model != ModelMonomer {
		return nil, fmt.Errorf("models: project: %s has no embedding: %w", f.Model, ErrSpec)
	}
	src, err := newRowSource(feat)
	if err != nil {
		return nil, err
	}
	if src.dim != f.Dim {
		return nil, fmt.Errorf("models: features have dimension %d, model %d: %w", src.dim, f.Dim, ErrInput)
	}
	for _, it := range items {
		if it < 0 || int(it) >= src.rows {
			return nil, fmt.Errorf("models: project: item %d out of range [0, %d): %w", it, src.rows, ErrInput)
		}
	}
	if err := src.check(items); err != nil {
		return nil, err
	}
	p := &Projection{Items: slices.Clone(items)}
	for _, b := range f.Params {
		p.names = append(p.names, b.Name)
		p.offs = append(p.offs, p.Cols)
		p.Cols += b.Cols
	}
	p.offs = append(p.offs, p.Cols)
	// W is F×C row-major: row j holds feature j's weights in every block.
	w := make([]float64, f.Dim*p.Cols)
	for bi, b := range f.Params {
		for j := range f.Dim {
			copy(w[j*p.Cols+p.offs[bi]:], b.Data[j*b.Cols:(j+1)*b.Cols])
		}
	}
	p.Data = make([]float64, len(items)*p.Cols)
	// Each non-zero value adds its row of W, in column order: Go arithmetic,
	// the same bits in every build. Dense rows mostly zeros (ReLU image
	// features) go this way too, as in training (maxSparseDensity), so a
	// recommendation list does not depend on the BLAS kernel.
	addRow := func(out []float64, j int, v float32) {
		for c, wv := range w[j*p.Cols : (j+1)*p.Cols] {
			out[c] += float64(float64(v) * wv)
		}
	}
	// Rows in parallel, each computed alone: the same bits at any
	// GOMAXPROCS. Serial, this was half the CPU of recommend and report at
	// the medium world's Women's size, all of it on one core.
	if src.sparse != nil {
		forSpans(len(items), 0, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				out := p.Row(r)
				idx, val := src.sparse.SparseRow(int(items[r]))
				for n, j := range idx {
					addRow(out, int(j), val[n])
				}
			}
		})
		return p, nil
	}
	if _, ok := nonZeros(src.dense, items, f.Dim); ok {
		forSpans(len(items), 0, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				out := p.Row(r)
				for j, v := range src.dense.Row(int(items[r]))[:f.Dim] {
					if v != 0 {
						addRow(out, j, v)
					}
				}
			}
		})
		return p, nil
	}
	// Dense: one gemm per fixed block of rows, so every value is computed
	// by the same call shape whatever the number of items around it; the
	// blocks in parallel, a buffer per worker: 16 MB at 4096-d, so at most
	// maxDenseWorkers of them, that the footprint does not grow with the
	// cores.
	blocks := (len(items) + rowBlock - 1) / rowBlock
	bufs := make([][]float64, min(blocks, runtime.GOMAXPROCS(0), maxDenseWorkers))
	runChunks(blocks, len(bufs), func(wk, b int) {
		if bufs[wk] == nil {
			bufs[wk] = make([]float64, rowBlock*f.Dim)
		}
		buf := bufs[wk]
		lo, hi := b*rowBlock, min((b+1)*rowBlock, len(items))
		denseRows(src.dense, items[lo:hi], f.Dim, buf)
		blas64.Implementation().Dgemm(blas.NoTrans, blas.NoTrans, hi-lo, p.Cols, f.Dim, 1,
			buf, f.Dim, w, p.Cols, 0, p.Data[lo*p.Cols:hi*p.Cols], p.Cols)
	})
	return p, nil
}

// ProjectPath names the arithmetic Project uses for items of feat:
// "sparse" (rows of W added in Go, per row), "go" (dense rows mostly zeros,
// the same) or "blas" (one gemm per block of rowBlock items, rounded as
// the BLAS in use rounds). Only "blas" depends on the build: monomer score
// says whether its BLAS is the run's.
func (f *Fit) ProjectPath(feat Features, items []int32) (string, error) {
	src, err := newRowSource(feat)
	if err != nil {
		return "", err
	}
	if src.sparse != nil {
		return "sparse", nil
	}
	if _, ok := nonZeros(src.dense, items, f.Dim); ok {
		return "go", nil
	}
	return "blas", nil
}

// maxDenseWorkers bounds the workers of Project's dense path.
const maxDenseWorkers = 4

// Hit is one recommended item.
type Hit struct {
	Item int32
	// Dist is d(x, y) and Prob P(related) = σ(c − d).
	Dist, Prob float64
	// Space is, for Monomer, the space k in 1..N whose term
	// p_k(2a·e_k(y) − ‖e_k(y)‖²) contributed most to y's score: which notion
	// of relatedness put y in the list. 0 for LMT and WNN.
	Space int
}

// Retriever answers exact top-k queries over a fixed candidate set.
//
// Every model's distance is rewritten as d(x, y) = c_x − q_x·v_y, a
// maximum-inner-product search over item vectors v_y:
//
//	Monomer: d = ‖a‖² − Σ_k p_k (2a·e_k(y) − ‖e_k(y)‖²), a = E₀ᵀf_x,
//	         e_k(y) = E_kᵀf_y, p = softmax(Uᵀf_x) (Eqs. 4-6), so
//	         v_y = [e_1(y) … e_N(y), −‖e_1(y)‖² … −‖e_N(y)‖²],
//	         q_x = [2p_1 a … 2p_N a, p_1 … p_N], c_x = ‖a‖²;
//	LMT:     the same with N = 1, p = 1 and E₀ = E₁ = E (Eq. 3);
//	WNN:     v_y = [f_y, −‖w∘f_y‖²], q_x = [2w²∘f_x, 1], c_x = ‖w∘f_x‖².
//
// Scores of a block of queries against a block of items come from
// internal/dotkern, whose fixed arithmetic gives the same bits on every
// machine and build (dgemm's order differed between BLAS kernels); each
// query keeps a bounded heap of its best items. Ties in distance go to the
// lower item index, so results are unique and independent of scheduling.
// LMT's and Monomer's pairs are screened by float32 scores first and only
// those that may enter a heap are scored in float64 (see topKLists): the
// same lists, 5-10 times faster.
type Retriever struct {
	fit   *Fit
	cand  []int32
	src   rowSource
	dim   int         // length of q and v
	items *Projection // LMT and Monomer: the candidates' projection
	vecs  []float64   // LMT and Monomer: v of every candidate, row-major
	wsq   []float64   // WNN: w², and ‖w∘f_y‖² of every candidate
	norms []float64
	// LMT and Monomer: vecs rounded to float32 in dotkern's panels, and
	// each candidate's dotkern.Norm32, for the float32 candidate scores
	// (see TopKLists); nil where Bound32 does not cover d.
	pan []float32
	vn  []float64
	// block, when positive, replaces retrieveBlock's size: tests use it to
	// have many candidate blocks in a small world.
	block int
}

// NewRetriever prepares the candidates (indices into feat, e.g. every item
// with features) of a fitted WNN, LMT or Monomer. It holds len(cand) item
// vectors of d = N(K+1) values for Monomer, K+1 for LMT, none for WNN
// (which reads feat's rows as it goes): 12·d + 8 bytes a candidate, the
// vector in float64 and float32 and its norm (Women's 659,566 items at
// Monomer's K = 20, N = 4: 670 MB; LMT at K = 100: 804 MB).
func NewRetriever(f *Fit, feat Features, cand []int32) (*Retriever, error) {
	return NewRetrieverParts(f, feat, cand)
}

// NewRetrieverParts is NewRetriever over the candidates of parts in order,
// each part projected by its own Fit.Project call: a part's vectors are
// then the bits its Project alone gives (the dense path is chosen per
// call), so a run's catalogue keeps its bits with new items beside it
// (monomer score, stages/score.go).
func NewRetrieverParts(f *Fit, feat Features, parts ...[]int32) (*Retriever, error) {
	cand := slices.Concat(parts...)
	src, err := newRowSource(feat)
	if err != nil {
		return nil, err
	}
	if src.dim != f.Dim {
		return nil, fmt.Errorf("models: features have dimension %d, model %d: %w", src.dim, f.Dim, ErrInput)
	}
	r := &Retriever{fit: f, cand: slices.Clone(cand), src: src}
	switch f.Model {
	case ModelWNN:
		for _, it := range cand {
			if it < 0 || int(it) >= src.rows {
				return nil, fmt.Errorf("models: retriever: item %d out of range [0, %d): %w", it, src.rows, ErrInput)
			}
		}
		if err := src.check(cand); err != nil {
			return nil, err
		}
		r.dim = f.Dim + 1
		r.wsq = make([]float64, f.Dim)
		for j, w := range f.Params[0].Data {
			r.wsq[j] = w * w
		}
		r.norms = make([]float64, len(cand))
		for i, it := range cand {
			r.norms[i] = r.wnnNorm(int(it))
		}
	case ModelLMT, ModelMonomer:
		var p *Projection
		for _, part := range parts {
			pp, err := f.Project(feat, part)
			if err != nil {
				return nil, err
			}
			if p == nil {
				p = pp
				continue
			}
			p.Items = append(p.Items, pp.Items...)
			p.Data = append(p.Data, pp.Data...)
		}
		if p == nil {
			if p, err = f.Project(feat, nil); err != nil {
				return nil, err
			}
		}
		r.items = p
		r.dim = f.InnerDim()
		if r.vecs, err = f.ItemVectors(p); err != nil {
			return nil, err
		}
		if r.dim <= dotkern.MaxBound32 {
			r.pan = make([]float32, dotkern.Panels(len(cand))*r.dim*dotkern.Panel)
			dotkern.Pack32(r.pan, r.vecs, len(cand), r.dim)
			r.vn = make([]float64, len(cand))
			for i := range cand {
				r.vn[i] = dotkern.Norm32(r.vecs[i*r.dim : (i+1)*r.dim])
			}
		}
	default:
		return nil, fmt.Errorf("models: retriever: model %q: %w", f.Model, ErrSpec)
	}
	return r, nil
}

func (r *Retriever) space(p *Projection, i, k int) []float64 { return r.fit.space(p, i, k) }

func (r *Retriever) anchor(p *Projection, i int) []float64 { return r.fit.anchor(p, i) }

// wnnNorm is ‖w∘f_i‖².
func (r *Retriever) wnnNorm(i int) float64 {
	var t float64
	if r.src.sparse != nil {
		idx, val := r.src.sparse.SparseRow(i)
		for n, j := range idx {
			v := float64(val[n])
			t += r.wsq[j] * v * v
		}
		return t
	}
	for j, v := range r.src.dense.Row(i)[:r.fit.Dim] {
		t += r.wsq[j] * float64(v) * float64(v)
	}
	return t
}

// Candidates is the number of candidate items.
func (r *Retriever) Candidates() int { return len(r.cand) }

// retrieveBlock is the number of candidates scored per block: as many as
// keep WNN's dense block of candidate vectors (a worker's) within 2 MB, at
// most 2048. Scores do not depend on it (internal/dotkern computes each
// alone).
func (r *Retriever) retrieveBlock() int {
	if r.block > 0 {
		return r.block
	}
	return max(64, min(2048, (1<<18)/r.dim))
}

// scoreQueries is the number of queries scored against a candidate block
// at once (dotkern's own query block), which bounds a worker's scores.
const scoreQueries = 32

// heapBudget bounds the bytes of a worker's heaps; the queries are taken
// in groups that fit in it (see queryGroup).
const heapBudget = 1 << 20

// maxWorkerScratch is what a worker of TopKLists holds at most: its
// candidate vectors (2 MB, retrieveBlock), scores (scoreQueries × 2048)
// and heaps (heapBudget, or one scoreQueries group of them). Its P copies
// are all of TopKLists' memory that grows with the cores.
const maxWorkerScratch = 2<<20 + 8*scoreQueries*2048 + heapBudget

// queryGroup is the number of queries whose heaps a worker keeps at once:
// all nq if they fit in heapBudget, else a multiple of scoreQueries that
// does (at least one). Each group is a pass over the candidates, so WNN
// builds its candidate vectors once per group.
func (r *Retriever) queryGroup(nq, kk, filters int) int {
	per := max(1, filters*kk) * int(unsafe.Sizeof(scored{}))
	if nq*per <= heapBudget {
		return nq
	}
	return max(1, heapBudget/(per*scoreQueries)) * scoreQueries
}

// TopK returns, for each query (an index into the features, which need not
// be a candidate), the k candidates with the smallest d(x, y), nearest first,
// the query itself excluded. workers bounds the goroutines (0: GOMAXPROCS);
// results do not depend on it.
func (r *Retriever) TopK(queries []int32, k, workers int) ([][]Hit, error) {
	return r.TopKExcept(queries, k, workers, nil)
}

// TopKExcept is TopK with the candidates y for which skip(x, y) is true left
// out of query x's list as well (see TopKLists).
func (r *Retriever) TopKExcept(queries []int32, k, workers int, skip func(x, y int32) bool) ([][]Hit, error) {
	lists, err := r.TopKLists(queries, k, workers, skip)
	if err != nil {
		return nil, err
	}
	return lists[0], nil
}

// TopKLists returns one set of TopK lists per filter, from one scoring pass:
// lists[f][qi] leaves out of query x's list the candidates y for which
// skips[f](x, y) is true (x and y are indices into the features; a nil
// filter leaves out nothing more), so each list is still exact and k long
// when enough candidates remain. E.g. skip = same subcategory gives the
// cross-category lists of the paper's section V, the taxonomy filter LMT
// needs at test time. The filters are called from several goroutines at
// once, and only for pairs that may enter a list.
func (r *Retriever) TopKLists(queries []int32, k, workers int, skips ...func(x, y int32) bool) ([][][]Hit, error) {
	out, _, err := r.topKLists(queries, k, workers, false, skips)
	return out, err
}

// topKStats is what a topKLists pass did: the (query, candidate) pairs it
// scored and those it scored exactly in float64 (all of them when exact).
type topKStats struct{ pairs, rescored int64 }

// topKLists is TopKLists. With exact, or without r.pan (WNN, or d past
// dotkern's bound), every pair is scored by dotkern.Dots in float64 and
// offered to the heaps: the reference the fast path is tested against.
//
// Otherwise LMT's and Monomer's pairs are first scored in float32
// (dotkern.Scores32, at gemm speed), and a pair is scored exactly, by the
// same float64 dot, only when its float32 score s32 plus the bound ε of
// dotkern.Bound32 reaches the lowest of its query's heaps' worst exact
// scores (or a heap is not full). A pair below that cannot enter any heap:
// its exact score is at most s32 + ε, below every heap's worst, and offer
// would refuse it. So every heap receives the same offers as on the exact
// path, less ones it refuses, and ends the same: the lists are identical,
// bit for bit. "Reaches" is ≥ (a tie in score is decided by item id) and
// written so that a NaN bound or threshold rescores.
func (r *Retriever) topKLists(queries []int32, k, workers int, exact bool, skips []func(x, y int32) bool) ([][][]Hit, topKStats, error) {
	var st topKStats
	if k <= 0 {
		return nil, st, fmt.Errorf("models: top-k: k=%d must be positive: %w", k, ErrSpec)
	}
	for _, q := range queries {
		if q < 0 || int(q) >= r.src.rows {
			return nil, st, fmt.Errorf("models: top-k: query item %d out of range [0, %d): %w", q, r.src.rows, ErrInput)
		}
	}
	if err := r.src.check(queries); err != nil {
		return nil, st, err
	}
	nq, d := len(queries), r.dim
	var qv, cx []float64
	var qp *Projection
	if r.fit.Model == ModelWNN {
		qv, cx = make([]float64, nq*d), make([]float64, nq)
		for i, q := range queries {
			r.wnnQuery(int(q), qv[i*d:(i+1)*d])
			cx[i] = r.wnnNorm(int(q))
		}
	} else {
		var err error
		if qp, err = r.fit.Project(featOf(r.src), queries); err != nil {
			return nil, st, err
		}
		if qv, cx, err = r.fit.QueryVectors(qp); err != nil {
			return nil, st, err
		}
	}
	fast := !exact && r.pan != nil
	// The fast path's queries in float32, padded with zero rows to whole
	// score blocks (Scores32's row tiles), and each one's share of ε.
	var q32 []float32
	var qe []float64
	if fast {
		q32 = make([]float32, (nq+scoreQueries-1)/scoreQueries*scoreQueries*d)
		for i, x := range qv {
			q32[i] = float32(x)
		}
		qe = make([]float64, nq)
		for i := range nq {
			qe[i] = dotkern.Bound32(d) * dotkern.Norm32(qv[i*d:(i+1)*d])
		}
	}

	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	bs := r.retrieveBlock()
	if fast {
		bs = max(dotkern.Panel, bs&^(dotkern.Panel-1)) // blocks of whole panels
	}
	blocks := (len(r.cand) + bs - 1) / bs
	workers = max(1, min(workers, blocks))
	// The workers split the candidate blocks (so WNN's candidate vectors
	// are built once per query group) and each keeps its own heaps; the top
	// k under a total order is unique, so merging them in any order gives
	// the same lists. A worker's scratch is bounded whatever the queries
	// and P (maxWorkerScratch): its candidate vectors by retrieveBlock,
	// scores by scoreQueries rows at a time, heaps by the query group.
	kk := min(k, len(r.cand))
	group := r.queryGroup(nq, kk, len(skips))
	type scratch struct {
		vbuf, sbuf []float64
		s32        []float32
		store      []scored    // backs heaps: group × filters × kk
		heaps      [][]hitHeap // [filter][query in group]
		st         topKStats
	}
	scr := make([]scratch, workers)
	for w := range scr {
		if r.vecs == nil {
			scr[w].vbuf = make([]float64, bs*d)
		}
		if fast {
			scr[w].s32 = make([]float32, scoreQueries*bs)
		} else {
			scr[w].sbuf = make([]float64, min(scoreQueries, nq)*bs)
		}
		scr[w].store = make([]scored, group*len(skips)*kk)
		scr[w].heaps = make([][]hitHeap, len(skips))
		for f := range skips {
			scr[w].heaps[f] = make([]hitHeap, group)
		}
	}
	out := make([][][]Hit, len(skips))
	for f := range skips {
		out[f] = make([][]Hit, nq)
	}
	for g0 := 0; g0 < nq; g0 += group {
		g1 := min(g0+group, nq)
		for w := range scr {
			for f := range skips {
				for i := range g1 - g0 {
					o := (f*group + i) * kk
					scr[w].heaps[f][i] = scr[w].store[o : o : o+kk]
				}
			}
		}
		runChunks(blocks, workers, func(w, b int) {
			sc := &scr[w]
			lo, hi := b*bs, min((b+1)*bs, len(r.cand))
			nv := hi - lo
			if fast {
				r.scanBlock32(sc.s32, sc.heaps, &sc.st, queries, qv, q32, qe, g0, g1, lo, hi, k, skips)
				return
			}
			v := r.vectors(lo, hi, sc.vbuf)
			for c0 := g0; c0 < g1; c0 += scoreQueries {
				c1 := min(c0+scoreQueries, g1)
				s := sc.sbuf[:(c1-c0)*nv]
				// Each score's bits do not depend on the rows around it
				// (internal/dotkern), so neither on this split.
				dotkern.Dots(s, nv, qv[c0*d:c1*d], c1-c0, v, nv, d)
				for qi := c0; qi < c1; qi++ {
					q := queries[qi]
					row := s[(qi-c0)*nv : (qi-c0+1)*nv]
					for c, x := range row {
						it := r.cand[lo+c]
						if it == q {
							continue
						}
						for f, skip := range skips {
							if skip == nil || !skip(q, it) {
								sc.heaps[f][qi-g0].offer(scored{score: x, item: it, cand: int32(lo + c)}, k)
							}
						}
					}
				}
			}
			sc.st.pairs += int64((g1 - g0) * nv)
			sc.st.rescored += int64((g1 - g0) * nv)
		})
		all := make([]scored, 0, workers*kk)
		for f := range skips {
			for qi := g0; qi < g1; qi++ {
				all = all[:0]
				for w := range scr {
					all = append(all, scr[w].heaps[f][qi-g0]...)
				}
				out[f][qi] = r.hits(all, k, cx[qi], qp, qi)
			}
		}
	}
	for w := range scr {
		st.pairs += scr[w].st.pairs
		st.rescored += scr[w].st.rescored
	}
	return out, st, nil
}

// scanBlock32 is topKLists' fast path for candidates [lo, hi) and queries
// [g0, g1): float32 scores of scoreQueries queries at a time into s32, then
// the exact float64 score, the filters and the heaps for the pairs whose
// bound reaches the threshold (see topKLists).
func (r *Retriever) scanBlock32(s32 []float32, heaps [][]hitHeap, st *topKStats, queries []int32, qv []float64, q32 []float32, qe []float64, g0, g1, lo, hi, k int, skips []func(x, y int32) bool) {
	d, nv := r.dim, hi-lo
	np := dotkern.Panels(nv)
	ls := np * dotkern.Panel
	pan := r.pan[lo*d : (lo+np*dotkern.Panel)*d] // lo is a whole panel
	vn := r.vn[lo:hi]
	var rescored int64
	for c0 := g0; c0 < g1; c0 += scoreQueries {
		c1 := min(c0+scoreQueries, g1)
		// Whole row tiles: the rows past c1 are zero padding or the next
		// queries, scored and not read.
		rows := min((c1-c0+15)&^15, len(q32)/d-c0)
		dotkern.Scores32(s32[:rows*ls], ls, q32[c0*d:(c0+rows)*d], rows, pan, np, d)
		for qi := c0; qi < c1; qi++ {
			q, eq := queries[qi], qe[qi]
			qrow := qv[qi*d : (qi+1)*d]
			hs := qi - g0
			thr := threshold(heaps, hs, k)
			row := s32[(qi-c0)*ls : (qi-c0)*ls+nv]
			for c := 0; ; c++ {
				if c = dotkern.Screen(row, vn, c, eq, thr); c == nv {
					break
				}
				it := r.cand[lo+c]
				if it == q {
					continue
				}
				rescored++
				ci := lo + c
				sc := scored{score: dotkern.Dot(qrow, r.vecs[ci*d:(ci+1)*d]), item: it, cand: int32(ci)}
				for f, skip := range skips {
					h := &heaps[f][hs]
					if len(*h) >= k && !better(sc, (*h)[0]) {
						continue // offer would refuse it: skip need not be asked
					}
					if skip == nil || !skip(q, it) {
						h.offer(sc, k)
					}
				}
				thr = threshold(heaps, hs, k)
			}
		}
	}
	st.pairs += int64((g1 - g0) * nv)
	st.rescored += rescored
}

// threshold is the lowest worst exact score of query hs's heaps, −Inf while
// one holds fewer than k, NaN if one's worst is NaN (min keeps NaN): a pair
// whose bound is below it enters none of them.
func threshold(heaps [][]hitHeap, hs, k int) float64 {
	t := math.Inf(1)
	for f := range heaps {
		h := heaps[f][hs]
		if len(h) < k {
			return math.Inf(-1)
		}
		t = min(t, h[0].score)
	}
	return t
}

// hits is the k best of all as Hits, nearest first, for query qi with
// ‖a‖² (or WNN's constant) cx.
func (r *Retriever) hits(all []scored, k int, cx float64, qp *Projection, qi int) []Hit {
	slices.SortFunc(all, func(a, b scored) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	all = all[:min(k, len(all))]
	hits := make([]Hit, len(all))
	for j, s := range all {
		dist := cx - s.score
		hits[j] = Hit{Item: s.item, Dist: dist, Prob: sigmoidStable(r.fit.C - dist)}
		if r.fit.Model == ModelMonomer {
			hits[j].Space = r.bestSpace(qp, qi, int(s.cand))
		}
	}
	return hits
}

// bestSpace is the k maximising p_k(2a·e_k(y) − ‖e_k(y)‖²), 1-based; the
// lower k on a tie.
func (r *Retriever) bestSpace(qp *Projection, qi, ci int) int {
	a, p := r.anchor(qp, qi), qp.Gate(qi)
	best, bestV := 0, math.Inf(-1)
	for s := range r.fit.N {
		e := r.space(r.items, ci, s+1)
		var dot, sq float64
		for j, x := range e {
			dot += a[j] * x
			sq += x * x
		}
		if v := p[s] * (2*dot - sq); v > bestV {
			best, bestV = s+1, v
		}
	}
	return best
}

// vectors returns v of candidates [lo, hi), filling buf for WNN.
func (r *Retriever) vectors(lo, hi int, buf []float64) []float64 {
	d := r.dim
	if r.vecs != nil {
		return r.vecs[lo*d : hi*d]
	}
	buf = buf[:(hi-lo)*d]
	clear(buf)
	for c := lo; c < hi; c++ {
		v := buf[(c-lo)*d : (c-lo+1)*d]
		it := int(r.cand[c])
		if r.src.sparse != nil {
			idx, val := r.src.sparse.SparseRow(it)
			for n, j := range idx {
				v[j] = float64(val[n])
			}
		} else {
			for j, x := range r.src.dense.Row(it)[:r.fit.Dim] {
				v[j] = float64(x)
			}
		}
		v[d-1] = -r.norms[c]
	}
	return buf
}

// wnnQuery fills q = [2w²∘f_x, 1].
func (r *Retriever) wnnQuery(i int, q []float64) {
	clear(q)
	if r.src.sparse != nil {
		idx, val := r.src.sparse.SparseRow(i)
		for n, j := range idx {
			q[j] = 2 * r.wsq[j] * float64(val[n])
		}
	} else {
		for j, x := range r.src.dense.Row(i)[:r.fit.Dim] {
			q[j] = 2 * r.wsq[j] * float64(x)
		}
	}
	q[len(q)-1] = 1
}

// featOf gives back the Features a rowSource wraps.
func featOf(s rowSource) Features {
	if s.sparse != nil {
		return s.sparse
	}
	return s.dense
}

// scored is a candidate's inner product with a query.
type scored struct {
	score      float64
	item, cand int32
}

// better orders by score descending, then item ascending: a total order.
func better(a, b scored) bool {
	return a.score > b.score || (a.score == b.score && a.item < b.item)
}

// hitHeap is a min-heap under better: the worst kept item on top.
type hitHeap []scored

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// offer keeps s if it is among the k best seen.
func (h *hitHeap) offer(s scored, k int) {
	if len(*h) < k {
		heap.Push(h, s)
		return
	}
	if better(s, (*h)[0]) {
		(*h)[0] = s
		heap.Fix(h, 0)
	}
}

// SampleItems draws n of items (all of them if fewer), returned ascending:
// the query items the recommend stage answers and the items the report
// projects and maps.
func SampleItems(rng *rand.Rand, items []int32, n int) []int32 {
	if len(items) <= n {
		return slices.Clone(items)
	}
	p := rng.Perm(len(items))[:n]
	out := make([]int32, n)
	for i, j := range p {
		out[i] = items[j]
	}
	slices.Sort(out)
	return out
}

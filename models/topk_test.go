package models

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"monomer/graph"
)

// randFit draws a model's parameters with NewFit's shapes.
func randFit(t testing.TB, rng *rand.Rand, model string, dim, k, n int) *Fit {
	t.Helper()
	block := func(name string, cols int, sd float64) Param {
		p := Param{Name: name, Rows: dim, Cols: cols, Data: make([]float64, dim*cols)}
		for i := range p.Data {
			p.Data[i] = sd * rng.NormFloat64()
		}
		return p
	}
	var ps []Param
	switch model {
	case ModelWNN:
		ps = []Param{block("w", 1, 1)}
	case ModelLMT:
		ps = []Param{block("E", k, 0.3)}
	case ModelMonomer:
		for s := range n + 1 {
			ps = append(ps, block(fmt.Sprintf("E%d", s), k, 0.3))
		}
		ps = append(ps, block("U", n, 1))
	}
	f, err := NewFit(model, 1.5, ps)
	if err != nil {
		t.Fatal(err)
	}
	f.Float64 = true
	return f
}

// row densifies feature row i in float64.
func row(feat Features, i int) []float64 {
	out := make([]float64, feat.Dim())
	if sp, ok := feat.(Sparse); ok {
		idx, val := sp.SparseRow(i)
		for n, j := range idx {
			out[j] = float64(val[n])
		}
		return out
	}
	for j, v := range feat.(Dense).Row(i)[:feat.Dim()] {
		out[j] = float64(v)
	}
	return out
}

// naiveProj is Bᵀf for one block, by plain loops.
func naiveProj(p Param, f []float64) []float64 {
	out := make([]float64, p.Cols)
	for j, v := range f {
		for c := range p.Cols {
			out[c] += v * p.Data[j*p.Cols+c]
		}
	}
	return out
}

func sqDist(a, b []float64) float64 {
	var t float64
	for i := range a {
		t += (a[i] - b[i]) * (a[i] - b[i])
	}
	return t
}

// bruteDist is d(x, y) straight from the paper's definitions.
func bruteDist(f *Fit, feat Features, x, y int) float64 {
	fx, fy := row(feat, x), row(feat, y)
	switch f.Model {
	case ModelWNN:
		var d float64
		for j, w := range f.Params[0].Data {
			d += w * w * (fx[j] - fy[j]) * (fx[j] - fy[j])
		}
		return d
	case ModelLMT:
		return sqDist(naiveProj(f.Params[0], fx), naiveProj(f.Params[0], fy))
	}
	a := naiveProj(f.Params[0], fx)
	p := softmax(naiveProj(f.Params[f.N+1], fx), make([]float64, f.N))
	var d float64
	for k := 1; k <= f.N; k++ {
		d += p[k-1] * sqDist(a, naiveProj(f.Params[k], fy))
	}
	return d
}

func TestTopKMatchesBruteForce(t *testing.T) {
	const items, dim, topK = 700, 24, 10
	for _, model := range []string{ModelWNN, ModelLMT, ModelMonomer} {
		for _, kind := range []string{"dense", "sparse"} {
			t.Run(model+"/"+kind, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(7, uint64(len(model)+len(kind))))
				var feat Features = randDense(rng, items, dim)
				if kind == "sparse" {
					feat = randSparse(rng, items, dim, 6)
				}
				f := randFit(t, rng, model, dim, 5, 3)
				// Candidates: every item but a few, so a query outside
				// the candidates is covered too.
				var cand []int32
				for i := range items {
					if i%50 != 3 {
						cand = append(cand, int32(i))
					}
				}
				r, err := NewRetriever(f, feat, cand)
				if err != nil {
					t.Fatal(err)
				}
				queries := []int32{0, 3, 53, 699}
				for range 8 {
					queries = append(queries, int32(rng.IntN(items)))
				}
				// Plain lists, and lists leaving out the query's group (as
				// the query's subcategory is for cross-category lists), from
				// one pass; each the same as from a pass of its own.
				group := func(i int32) int32 { return i % 7 }
				sameGroup := func(x, y int32) bool { return group(x) == group(y) }
				lists, err := r.TopKLists(queries, topK, 3, nil, sameGroup)
				if err != nil {
					t.Fatal(err)
				}
				for ti, tc := range []struct {
					name string
					skip func(x, y int32) bool
				}{{"all", nil}, {"other groups", sameGroup}} {
					skip, got := tc.skip, lists[ti]
					if alone, err := r.TopKExcept(queries, topK, 1, skip); err != nil || !reflect.DeepEqual(alone, got) {
						t.Fatalf("%s: lists from a pass of their own differ from the shared pass (err %v)", tc.name, err)
					}
					for qi, q := range queries {
						type cd struct {
							item int32
							d    float64
						}
						var all []cd
						for _, c := range cand {
							if c != q && (skip == nil || group(c) != group(q)) {
								all = append(all, cd{c, bruteDist(f, feat, int(q), int(c))})
							}
						}
						slices.SortStableFunc(all, func(a, b cd) int {
							if a.d < b.d {
								return -1
							} else if a.d > b.d {
								return 1
							}
							return 0
						})
						if len(got[qi]) != topK {
							t.Fatalf("%s: query %d: %d hits, want %d", tc.name, q, len(got[qi]), topK)
						}
						pairs := make([]graph.Pair, topK)
						for rank, h := range got[qi] {
							want := all[rank]
							tol := 1e-9 * (1 + math.Abs(want.d))
							if math.Abs(h.Dist-want.d) > tol {
								t.Errorf("%s: query %d rank %d: dist %.12g, brute force %.12g", tc.name, q, rank, h.Dist, want.d)
							}
							// Items must match unless brute force has a near tie there.
							near := (rank > 0 && all[rank-1].d > want.d-tol) || (rank+1 < len(all) && all[rank+1].d < want.d+tol)
							if h.Item != want.item && !near {
								t.Errorf("%s: query %d rank %d: item %d, brute force %d", tc.name, q, rank, h.Item, want.item)
							}
							if model == ModelMonomer && (h.Space < 1 || h.Space > f.N) {
								t.Errorf("query %d rank %d: space %d not in 1..%d", q, rank, h.Space, f.N)
							}
							if model != ModelMonomer && h.Space != 0 {
								t.Errorf("query %d rank %d: space %d for %s", q, rank, h.Space, model)
							}
							pairs[rank] = graph.Pair{X: q, Y: h.Item}
						}
						// The probabilities are the model's own.
						_, prob, err := f.Score(feat, pairs)
						if err != nil {
							t.Fatal(err)
						}
						for rank, h := range got[qi] {
							if math.Abs(h.Prob-prob[rank]) > 1e-9 {
								t.Errorf("query %d rank %d: prob %.12g, Score %.12g", q, rank, h.Prob, prob[rank])
							}
						}
					}
				}
			})
		}
	}
}

// The lists do not depend on the number of workers, and k larger than the
// candidates returns them all.
func TestTopKWorkersAndSmallCatalog(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	feat := randDense(rng, 5000, 8)
	f := randFit(t, rng, ModelMonomer, 8, 4, 2)
	cand := make([]int32, 5000)
	for i := range cand {
		cand[i] = int32(i)
	}
	r, err := NewRetriever(f, feat, cand)
	if err != nil {
		t.Fatal(err)
	}
	qs := []int32{1, 2, 3, 4999}
	a, err := r.TopK(qs, 20, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.TopK(qs, 20, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Fatalf("query %d: 1 worker %v, 4 workers %v", qs[i], a[i], b[i])
		}
	}
	small, err := NewRetriever(f, feat, cand[:4])
	if err != nil {
		t.Fatal(err)
	}
	got, err := small.TopK([]int32{0}, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got[0]) != 3 {
		t.Fatalf("4 candidates, query among them: %d hits, want 3", len(got[0]))
	}
	if _, err := small.TopK([]int32{0}, 0, 0); err == nil {
		t.Fatal("k=0 accepted")
	}
	if _, err := small.TopK([]int32{5000}, 1, 0); err == nil {
		t.Fatal("out-of-range query accepted")
	}
}

// TestTopKListsAnyGOMAXPROCS: the lists (items, bits of every distance and
// probability, spaces) are the same at GOMAXPROCS 1, 2, 3, 7 and 16, with
// more candidate blocks than workers, a query count that leaves a part of a
// score block, and a k whose heaps need several query groups.
func TestTopKListsAnyGOMAXPROCS(t *testing.T) {
	const items, dim = 33_000, 8
	rng := rand.New(rand.NewPCG(11, 5))
	feat := randDense(rng, items, dim)
	cand := make([]int32, 0, items)
	for i := range items {
		if i%97 != 5 {
			cand = append(cand, int32(i))
		}
	}
	var queries []int32
	for range 75 {
		queries = append(queries, int32(rng.IntN(items)))
	}
	sameGroup := func(x, y int32) bool { return x%5 == y%5 }
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, model := range []string{ModelWNN, ModelLMT, ModelMonomer} {
		r, err := NewRetriever(randFit(t, rng, model, dim, 4, 2), feat, cand)
		if err != nil {
			t.Fatal(err)
		}
		if b := (len(cand) + r.retrieveBlock() - 1) / r.retrieveBlock(); b < 16 {
			t.Fatalf("%s: %d candidate blocks, the test needs 16", model, b)
		}
		for _, k := range []int{10, 500} {
			if g := r.queryGroup(len(queries), k, 2); k == 500 && g >= len(queries) {
				t.Fatalf("k=500: one query group of %d, the test needs several", g)
			}
			var want [][][]Hit
			for _, p := range []int{1, 2, 3, 7, 16} {
				runtime.GOMAXPROCS(p)
				got, err := r.TopKLists(queries, k, 0, nil, sameGroup)
				if err != nil {
					t.Fatal(err)
				}
				if want == nil {
					want = got
					continue
				}
				for f := range want {
					for qi := range want[f] {
						if !sameHits(got[f][qi], want[f][qi]) {
							t.Fatalf("%s k=%d filter %d query %d: GOMAXPROCS %d gives %v, 1 gives %v", model, k, f, queries[qi], p, got[f][qi], want[f][qi])
						}
					}
				}
			}
		}
	}
}

func sameHits(a, b []Hit) bool {
	return slices.EqualFunc(a, b, func(x, y Hit) bool {
		return x.Item == y.Item && x.Space == y.Space &&
			math.Float64bits(x.Dist) == math.Float64bits(y.Dist) && math.Float64bits(x.Prob) == math.Float64bits(y.Prob)
	})
}

// TestTopKWorkerScratch: what TopKLists allocates for each worker beyond
// the first stays within maxWorkerScratch however many queries there are,
// so the footprint does not multiply with the cores (issue 40). A worker
// used to hold a score row per query for a whole block (8 MB here) and a
// heap per query.
func TestTopKWorkerScratch(t *testing.T) {
	const items, dim, nq, workers = 8192, 64, 512, 4
	rng := rand.New(rand.NewPCG(2, 9))
	feat := randDense(rng, items, dim)
	cand := make([]int32, items)
	for i := range cand {
		cand[i] = int32(i)
	}
	r, err := NewRetriever(randFit(t, rng, ModelWNN, dim, 0, 0), feat, cand)
	if err != nil {
		t.Fatal(err)
	}
	if b := (items + r.retrieveBlock() - 1) / r.retrieveBlock(); b < workers {
		t.Fatalf("%d candidate blocks, the test needs %d", b, workers)
	}
	alloc := func(w int) uint64 {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		if _, err := r.TopKLists(cand[:nq], 10, w, nil); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		return m1.TotalAlloc - m0.TotalAlloc
	}
	one, many := alloc(1), alloc(workers)
	if per := (int64(many) - int64(one)) / (workers - 1); per > maxWorkerScratch {
		t.Fatalf("%d bytes a worker (1 worker %d, %d workers %d), bound %d", per, one, workers, many, maxWorkerScratch)
	}
}

// topKShape is a retrieval shape of the paper's models on Women's
// catalogue (issue 52): LMT at K = 100 (d = 101), Monomer at K = 20, N = 4
// (d = 84), 5,000 queries, top-20.
type topKShape struct {
	model string
	k, n  int
	items int
}

func (s topKShape) String() string {
	return fmt.Sprintf("%s-K%d/items=%d", s.model, s.k, s.items)
}

const topKQueries, topKTop, topKFeat = 5000, 20, 64

var topKShapes = []topKShape{
	{ModelLMT, 100, 0, 100_000}, {ModelMonomer, 20, 4, 100_000},
	{ModelLMT, 100, 0, 659_566}, {ModelMonomer, 20, 4, 659_566},
}

// topKRetriever is the retriever of a benchmark shape over random rows and
// a random fit (seeded: the same vectors in the benchmark and in the files
// TestTopKWriteNpy writes for faiss), and its queries.
func topKRetriever(tb testing.TB, s topKShape) (*Retriever, []int32) {
	rng := rand.New(rand.NewPCG(1, uint64(s.items)))
	feat := randDense(rng, s.items, topKFeat)
	f := randFit(tb, rng, s.model, topKFeat, s.k, s.n)
	cand := make([]int32, s.items)
	for i := range cand {
		cand[i] = int32(i)
	}
	r, err := NewRetriever(f, feat, cand)
	if err != nil {
		tb.Fatal(err)
	}
	// Queries spread over the catalogue.
	qs := make([]int32, topKQueries)
	for i := range qs {
		qs[i] = int32(i * (s.items / topKQueries))
	}
	return r, qs
}

// BenchmarkTopK: top-20 of 5,000 queries over every item at the shapes of
// topKShapes, on the float32 screen and (at 100,000 items) on the exact
// float64 path that was TopKLists before it. Reports (query, item) pairs
// per second of wall and per CPU-second (the machines are shared), and the
// share of pairs the screen rescored in float64. `make bench-topk` puts
// the same figures next to faiss-cpu's on the same vectors.
func BenchmarkTopK(b *testing.B) {
	for _, s := range topKShapes {
		for _, exact := range []bool{false, true} {
			if exact && s.items > 100_000 {
				continue
			}
			path := "screen"
			if exact {
				path = "exact"
			}
			b.Run(s.String()+"/"+path, func(b *testing.B) {
				r, qs := topKRetriever(b, s)
				var st topKStats
				cpu0 := cpuSeconds()
				b.ResetTimer()
				for b.Loop() {
					var err error
					if _, st, err = r.topKLists(qs, topKTop, 0, exact, []func(x, y int32) bool{nil}); err != nil {
						b.Fatal(err)
					}
				}
				cpu := cpuSeconds() - cpu0
				pairs := float64(len(qs)*s.items) * float64(b.N)
				b.ReportMetric(pairs/b.Elapsed().Seconds(), "pairs/s")
				b.ReportMetric(pairs/cpu, "pairs/cpu-s")
				b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
				b.ReportMetric(float64(st.rescored)/float64(st.pairs), "rescored")
			})
		}
	}
}

var topKNpy = flag.String("topk.npy", "", "directory TestTopKWriteNpy writes BenchmarkTopK's vectors to, as .npy for faiss")

// TestTopKWriteNpy writes, with -topk.npy DIR, the float32 query and item
// vectors of BenchmarkTopK's shapes at 659,566 items (the inner products
// the screen scores, d(x, y) = c_x − q_x·v_y) as <shape>-queries.npy and
// <shape>-items.npy, and the exact lists' items as <shape>-lists.npy
// (int32, 5,000 × 20), for models/testdata/faiss_topk.py.
func TestTopKWriteNpy(t *testing.T) {
	if *topKNpy == "" {
		t.Skip("no -topk.npy directory")
	}
	for _, s := range topKShapes {
		if s.items < 659_566 {
			continue
		}
		r, qs := topKRetriever(t, s)
		lists, err := r.TopK(qs, topKTop, 0)
		if err != nil {
			t.Fatal(err)
		}
		d := r.dim
		// The queries' q rows, as topKLists builds them.
		qv := make([]float32, 0, len(qs)*d)
		qp, err := r.fit.Project(featOf(r.src), qs)
		if err != nil {
			t.Fatal(err)
		}
		n, kk := max(r.fit.N, 1), r.fit.K
		for i := range qs {
			a, p := r.anchor(qp, i), []float64{1}
			if r.fit.Model == ModelMonomer {
				p = qp.Gate(i)
			}
			row := make([]float32, d)
			for sp := range n {
				for j, x := range a {
					row[sp*kk+j] = float32(2 * p[sp] * x)
				}
				row[n*kk+sp] = float32(p[sp])
			}
			qv = append(qv, row...)
		}
		iv := make([]float32, len(r.vecs))
		for i, x := range r.vecs {
			iv[i] = float32(x)
		}
		ids := make([]int32, 0, len(qs)*topKTop)
		for _, l := range lists {
			for j := range topKTop {
				id := int32(-1)
				if j < len(l) {
					id = l[j].Item
				}
				ids = append(ids, id)
			}
		}
		name := filepath.Join(*topKNpy, fmt.Sprintf("%s-K%d", s.model, s.k))
		writeNpy(t, name+"-queries.npy", "<f4", len(qs), d, qv)
		writeNpy(t, name+"-items.npy", "<f4", s.items, d, iv)
		writeNpy(t, name+"-lists.npy", "<i4", len(qs), topKTop, ids)
	}
}

// writeNpy writes a rows × cols little-endian matrix in NumPy's .npy
// format, version 1.0.
func writeNpy[T float32 | int32](t *testing.T, path, descr string, rows, cols int, data []T) {
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }", descr, rows, cols)
	// Magic, version, length, header padded so the data start at a
	// multiple of 64, ending in a newline.
	pad := 64 - (10+len(header)+1)%64
	header += strings.Repeat(" ", pad%64) + "\n"
	var buf bytes.Buffer
	buf.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&buf, binary.LittleEndian, uint16(len(header)))
	buf.WriteString(header)
	binary.Write(&buf, binary.LittleEndian, data)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestProjectSameAtProcs: Project's rows are the same bits at every
// GOMAXPROCS of sameBitsProcs, on dense rows (gemm blocks), lean ones (90 %
// zeros, by non-zeros) and sparse ones, over several spans and blocks.
func TestProjectSameAtProcs(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const items, dim, k = 1500, 48, 5
	lean := randDense(rng, items, dim)
	for i := range lean.data {
		if rng.IntN(10) != 0 {
			lean.data[i] = 0
		}
	}
	feats := map[string]Features{"dense": randDense(rng, items, dim), "lean": lean, "sparse": randSparse(rng, items, dim, 6)}
	e := make([]float64, dim*k)
	for i := range e {
		e[i] = rng.NormFloat64()
	}
	fit := &Fit{Model: ModelLMT, Dim: dim, K: k, Params: []Param{{Name: "E", Rows: dim, Cols: k, Data: e}}}
	sel := make([]int32, 0, items)
	for i := range int32(items) {
		if i%7 != 3 {
			sel = append(sel, i)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for name, feat := range feats {
		var ref []float64
		for _, procs := range sameBitsProcs {
			runtime.GOMAXPROCS(procs)
			p, err := fit.Project(feat, sel)
			if err != nil {
				t.Fatal(err)
			}
			if ref == nil {
				ref = p.Data
			} else if !slices.Equal(ref, p.Data) {
				t.Fatalf("%s: projection differs between GOMAXPROCS 1 and %d", name, procs)
			}
		}
	}
}

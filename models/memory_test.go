package models

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestDataMemory: dataMemory is within 10 % of the heap Train's data
// really holds once both pair sets' evaluators have run an evaluation
// (rows in their layouts, pair sets, per-pair state, WNN's products), for
// each model on lean image rows and on bags of words (sparse rows, no
// csrkern.Cols), and for LMT in float64 (rows packed once for both sets). The parameters' share (W, the item groups' accumulators) is
// left out as dataMemory leaves it out.
func TestDataMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates about 100 MB a case")
	}
	const items, dim = 20000, 512
	rng := rand.New(rand.NewPCG(11, 11))
	t.Run("image", func(t *testing.T) { testDataMemory(t, reluDense(rng, items, dim, 0.14), dim, rng) })
	// Bags of words (1.5 % dense), multiplied row by row: no csrkern.Cols.
	t.Run("words", func(t *testing.T) { testDataMemory(t, randSparse(rng, items, 2000, 30), 2000, rng) })
}

func testDataMemory(t *testing.T, feat Features, dim int, rng *rand.Rand) {
	items := feat.Rows()
	train, valid := randPairs(rng, items, 150000), randPairs(rng, items/2, 30000)
	for _, spec := range []Spec{{Model: ModelLMT, K: 20}, {Model: ModelMonomer, K: 5, N: 4}, {Model: ModelWNN}, {Model: ModelLMT, K: 20, Float64: true}} {
		spec, m := specModel(t, spec, dim)
		theta := make([]float64, m.size())
		for i := range theta {
			theta[i] = 0.01 * rng.NormFloat64()
		}
		base := liveHeap()
		src, ts, err := prepare(feat, dim, train, "train")
		if err != nil {
			t.Fatal(err)
		}
		vsrc, vs, err := prepare(feat, dim, valid, "valid")
		if err != nil {
			t.Fatal(err)
		}
		var shared *sharedRows
		if rowByRow(m, spec) {
			if shared = shareRows(src, ts.items, vsrc, vs.items); shared == nil && src.lean {
				t.Fatal("rows not shared")
			}
		}
		want := dataMemory(m, spec, src, ts, vsrc, vs, shared)
		if shared != nil {
			src, vsrc = shared.pack(src, vsrc)
		}
		to, vo := newObjective(m.evaluator(src, ts, spec.Float64, 0), ts.labels), newObjective(m.evaluator(vsrc, vs, spec.Float64, 0), vs.labels)
		grad := make([]float64, len(theta))
		loss := func(p int, d float64) float64 { return 0.5 - float64(p%2) }
		to.ev.eval(theta, loss, grad)
		vo.ev.eval(theta, loss, nil)
		// What grows with the parameters: W (padded rows) per evaluator
		// and the train evaluator's per-group accumulators.
		params := int64(0)
		if pe, ok := to.ev.(*projEval[float32]); ok {
			params = int64(len(pe.w)+len(vo.ev.(*projEval[float32]).w)+len(pe.acc)*len(pe.acc[0])) * 4
		}
		if pe, ok := to.ev.(*projEval[float64]); ok {
			params = int64(len(pe.w)+len(vo.ev.(*projEval[float64]).w)+len(pe.acc)*len(pe.acc[0])) * 8
		}
		got := liveHeap() - base - params
		runtime.KeepAlive(to)
		runtime.KeepAlive(vo)
		t.Logf("%s float64 %v: estimate %d, held %d", spec.Model, spec.Float64, want, got)
		if r := float64(want) / float64(got); math.Abs(r-1) > 0.1 {
			t.Errorf("%s float64 %v: estimate %d bytes, held %d (ratio %.3f)", spec.Model, spec.Float64, want, got, r)
		}
	}
}

// liveHeap is the bytes of live heap objects after a collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestDataMemoryIndexes: on dense rows, where WNN keeps nothing that grows
// with the data, dataMemory is the bytes of the pair set's and the
// objective's slices (to the items+1 of xOff and yOff).
func TestDataMemoryIndexes(t *testing.T) {
	const items, dim = 300, 16
	rng := rand.New(rand.NewPCG(12, 12))
	src, ps, err := prepare(reluDense(rng, items, dim, 0.9), dim, randPairs(rng, items, 2000), "train")
	if err != nil || src.lean || src.sparse != nil {
		t.Fatalf("prepare: lean %v, %v", src.lean, err)
	}
	m := wnn{f: dim}
	o := newObjective(m.evaluator(src, ps, false, 0), ps.labels)
	var got int64
	for _, s := range [][]int32{ps.items, ps.x, ps.y, ps.xOff, ps.byX, ps.yOff, ps.byY, ps.xEnd, ps.yEnd, ps.yPos, ps.yOther, o.pos} {
		got += 4 * int64(len(s))
	}
	got += int64(len(ps.labels)+len(o.labelsX)) + 8*int64(len(o.ll)+len(o.g))
	if want := dataMemory(m, Spec{Model: ModelWNN}, src, ps, rowSource{}, nil, nil); got-want != 8 {
		t.Fatalf("dataMemory %d bytes, the slices hold %d", want, got)
	}
}

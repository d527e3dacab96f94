package models

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"monomer/schema"
)

// printBits prints the bits of an evaluation's value and gradient, to
// compare builds: a change that must not alter results prints the same
// line.
func printBits(spec Spec, f float64, grad []float64) {
	h := fnv.New64a()
	for _, v := range append([]float64{f}, grad...) {
		h.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(v)))
	}
	fmt.Printf("%s: f %.17g, bits of f and gradient %016x\n", spec.Model, f, h.Sum64())
}

// BenchmarkObjectiveFullScaleBow times one objective+gradient evaluation of
// LMT (K=100), Monomer (K=20, N=4) and WNN (benchSpecs: also_viewed's
// sizes with MONOMER_BENCH_GRAPH=also_viewed) on a real run's bag-of-words
// features and training pairs (the paper's Electronics size: 412,082 items,
// 5000 terms, about 87 non-zeros a row, 2 M pairs), as Train evaluates
// them. It runs only with MONOMER_BENCH_BOW_RUN set to the directory of a
// bag-of-words experiment (…/ingest/items.parquet, …/features/bow.parquet
// and vocabulary.parquet, …/split/pairs.parquet); one evaluation is a few
// CPU-seconds, so use -benchtime 3x or so.
//
// The timed evaluations run under the pprof label phase=eval, so a
// -test.cpuprofile can be cut to them (go tool pprof -tagfocus phase=eval).
func BenchmarkObjectiveFullScaleBow(b *testing.B) {
	run := os.Getenv("MONOMER_BENCH_BOW_RUN")
	if run == "" {
		b.Skip("MONOMER_BENCH_BOW_RUN=<run dir of a bag-of-words experiment>")
	}
	feat, err := benchReadBow(run)
	if err != nil {
		b.Fatal(err)
	}
	train, err := benchTrainPairs(filepath.Join(run, "split", "pairs.parquet"))
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("blas: %s\nbow: %d × %d, %d non-zeros, train pairs: %d\n", BLAS(), feat.Rows(), feat.Dim(), len(feat.idx), len(train))
	for _, spec := range benchSpecs(b) {
		b.Run(spec.Model, func(b *testing.B) {
			spec, _ := spec.resolve()
			obj, ps, theta := startObjective(b, feat, feat.Dim(), train, spec, rand.New(rand.NewPCG(1, 1)))
			grad := make([]float64, len(theta))
			printBits(spec, obj.eval(theta, grad), grad) // buffers, and csrkern.Cols built
			_, best := timeEvals(b, obj, theta, grad)
			b.ReportMetric(best, "best-cpu-s/eval")
			b.ReportMetric(float64(len(ps.items)), "items")
			b.ReportMetric(sparseDensity(obj), "sparse-density")
			b.ReportMetric(productsPerPair(obj), "products/pair")
		})
	}
}

// benchBow is a bag-of-words matrix in CSR form, as the train stage reads
// bow.parquet (items without a vector have empty rows).
type benchBow struct {
	dim int
	ptr []int64
	idx []int32
	val []float32
}

func (m *benchBow) Rows() int { return len(m.ptr) - 1 }
func (m *benchBow) Dim() int  { return m.dim }
func (m *benchBow) SparseRow(i int) ([]int32, []float32) {
	lo, hi := m.ptr[i], m.ptr[i+1]
	return m.idx[lo:hi:hi], m.val[lo:hi:hi]
}

// benchReadBow reads the run's weights rows over all its items.
func benchReadBow(run string) (*benchBow, error) {
	items, err := schema.NumRows(filepath.Join(run, "ingest", "items.parquet"))
	if err != nil {
		return nil, err
	}
	dim, err := schema.NumRows(filepath.Join(run, "features", "vocabulary.parquet"))
	if err != nil {
		return nil, err
	}
	var c schema.BowCols
	if err := schema.ReadFields(context.Background(), filepath.Join(run, "features", "bow.parquet"), &c, &c.ItemIdx, &c.TermIDs, &c.Weights); err != nil {
		return nil, err
	}
	m := &benchBow{dim: int(dim), ptr: make([]int64, items+1)}
	r := 0
	for i := range int(items) {
		for r < len(c.ItemIdx) && int(c.ItemIdx[r]) == i {
			m.idx = append(m.idx, c.TermIDs[r]...)
			m.val = append(m.val, c.Weights[r]...)
			r++
		}
		m.ptr[i+1] = int64(len(m.idx))
	}
	if r != len(c.ItemIdx) {
		return nil, fmt.Errorf("%s: item_idx not ascending below %d items", run, items)
	}
	return m, nil
}

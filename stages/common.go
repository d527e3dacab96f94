package stages

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"monomer/graph"
	"monomer/imagefeat"
	"monomer/internal/par"
	"monomer/models"
	"monomer/pipeline"
	"monomer/schema"
)

// Experiment lists the per-experiment stages in DAG order, each bound to
// its parameters' type. Stages not built yet are absent, never faked.
func Experiment() []Stage {
	return []Stage{
		Each[ingestParams](Ingest{}),
		Sharded[bowShardParams](BowShard{}),
		Each[featuresParams](Features{}),
		Each[negativesParams](Negatives{}),
		Each[splitParams](Split{}),
		Parted[trainParams](Train{}),
		Each[evaluateParams](Evaluate{}),
		Each[recommendParams](Recommend{}),
		Each[publishParams](Publish{}),
		Each[sectionParams](ReportSection{}),
	}
}

// Job lists the job-level stages, run after every experiment.
func Job() []Stage {
	return []Stage{JobLevel[reportParams](Report{})}
}

// inputs gives the directory of an upstream stage of one experiment:
// env.InDir, which serves only the stage's declared inputs; for a job-level
// stage, expInputs; outside the runner, runInputs.
type inputs func(stage string) (string, error)

// file is the path of name in stage's directory.
func (in inputs) file(stage, name string) (string, error) {
	dir, err := in(stage)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// expInputs is what a job-level stage reads of experiment exp: the stages
// its env serves, of that experiment.
func expInputs(env *pipeline.Env, exp string) inputs {
	return func(stage string) (string, error) { return env.StageDir(exp, stage) }
}

// runInputs reads experiment exp of a finished run directory, outside the
// runner (monomer recommend, tests).
func runInputs(runDir, exp string) inputs {
	return func(stage string) (string, error) { return filepath.Join(runDir, exp, stage), nil }
}

// items is the part of an experiment's items table later stages use.
type items struct {
	asin    []string
	sub     []int32  // subcategory id of each item
	subName []string // subcategory names, by id (sorted)
}

// sameSub reports whether items x and y share a subcategory: the filter of
// the paper's cross-category lists (models.Retriever.TopKLists).
func (it *items) sameSub(x, y int32) bool { return it.sub[x] == it.sub[y] }

// rows maps each ASIN to its item index: the first, for an id given twice
// (score's new copy of an item of the run comes after the run's copy, and
// the run's is the candidate an exclude table names).
func (it *items) rows() map[string]int32 {
	m := make(map[string]int32, len(it.asin))
	for i, a := range it.asin {
		if _, ok := m[a]; !ok {
			m[a] = int32(i)
		}
	}
	return m
}

// readItems reads the items table. The report shares this read and those
// it leads to (fits, features, titles) with the stages, without a context
// of its own until issue 25 moves its assembly to package report: until
// then they read under context.TODO.
func readItems(ctx context.Context, in inputs) (*items, error) {
	path, err := in.file("ingest", "items.parquet")
	if err != nil {
		return nil, err
	}
	var c schema.ItemsCols
	if err := schema.ReadFields(ctx, path, &c, &c.ASIN, &c.Subcategory); err != nil {
		return nil, err
	}
	asin, subs := c.ASIN, c.Subcategory
	names := slices.Clone(subs)
	slices.Sort(names)
	names = slices.Compact(names)
	id := make(map[string]int32, len(names))
	for i, s := range names {
		id[s] = int32(i)
	}
	it := &items{asin: asin, sub: make([]int32, len(asin)), subName: names}
	for i, s := range subs {
		it.sub[i] = id[s]
	}
	return it, nil
}

// readEdges reads the item indices of stage's edges-schema table name.
func readEdges(ctx context.Context, in inputs, stage, name string) ([]graph.Edge, error) {
	path, err := in.file(stage, name)
	if err != nil {
		return nil, err
	}
	var c schema.EdgesCols
	if err := schema.ReadFields(ctx, path, &c, &c.SrcIdx, &c.DstIdx); err != nil {
		return nil, err
	}
	out := make([]graph.Edge, len(c.SrcIdx))
	for i := range out {
		out[i] = graph.Edge{Src: c.SrcIdx[i], Dst: c.DstIdx[i]}
	}
	return out, nil
}

// writeEdges writes edges by item index with their ASINs.
func writeEdges(path string, it *items, g string, edges []graph.Edge) (int64, error) {
	n := len(edges)
	src, dst, gs := make([]string, n), make([]string, n), make([]string, n)
	si, di := make([]int32, n), make([]int32, n)
	par.Spans(n, 1<<16, 0, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			e := edges[k]
			src[k], dst[k], gs[k], si[k], di[k] = it.asin[e.Src], it.asin[e.Dst], g, e.Src, e.Dst
		}
	})
	return schema.Write(path, schema.EdgesCols{Src: src, Dst: dst, Graph: gs, SrcIdx: si, DstIdx: di})
}

// readFeatureItems reads which items the features stage kept.
func readFeatureItems(ctx context.Context, in inputs, n int) ([]bool, error) {
	path, err := in.file("features", "feature_items.parquet")
	if err != nil {
		return nil, err
	}
	var c schema.FeatureItemsCols
	if err := schema.ReadFields(ctx, path, &c, &c.ItemIdx); err != nil {
		return nil, err
	}
	keep := make([]bool, n)
	for _, i := range c.ItemIdx {
		if int(i) >= n || i < 0 {
			return nil, fmt.Errorf("stages: %s: item_idx %d out of range", path, i)
		}
		keep[i] = true
	}
	return keep, nil
}

// readPairs reads the split stage's pairs as training needs them.
func readPairs(ctx context.Context, in inputs) ([]graph.Pair, error) {
	path, err := in.file("split", "pairs.parquet")
	if err != nil {
		return nil, err
	}
	var c schema.PairsCols
	if err := schema.ReadFieldsSideBySide(ctx, path, &c, &c.XIdx, &c.YIdx, &c.Label, &c.Split); err != nil {
		return nil, err
	}
	out := make([]graph.Pair, len(c.XIdx))
	for i := range out {
		s, err := graph.ParseSplit(c.Split[i])
		if err != nil {
			return nil, fmt.Errorf("stages: %s row %d: %w", path, i, err)
		}
		out[i] = graph.Pair{X: c.XIdx[i], Y: c.YIdx[i], Label: c.Label[i] == 1, Split: s}
	}
	return out, nil
}

// splitPairs returns the pairs of the train, validation and test splits,
// each in pair order and sized by a count first: grown by appends, they
// took a serial 0.4 CPU-s at Electronics' 2.5 M pairs.
func splitPairs(pairs []graph.Pair) [graph.Test + 1][]graph.Pair {
	var n [graph.Test + 1]int
	for _, q := range pairs {
		if q.Split >= 0 && q.Split <= graph.Test {
			n[q.Split]++
		}
	}
	var out [graph.Test + 1][]graph.Pair
	for s, c := range n {
		out[s] = make([]graph.Pair, 0, c)
	}
	for _, q := range pairs {
		if q.Split >= 0 && q.Split <= graph.Test {
			out[q.Split] = append(out[q.Split], q)
		}
	}
	return out
}

// csr is a bag-of-words matrix read back from bow.parquet: one row per item
// (empty for items without a vector), normalised weights and raw counts.
type csr struct {
	dim int
	ptr []int64
	idx []int32
	val []float32
	cnt []int32
}

func (m *csr) Rows() int { return len(m.ptr) - 1 }
func (m *csr) Dim() int  { return m.dim }
func (m *csr) SparseRow(i int) ([]int32, []float32) {
	lo, hi := m.ptr[i], m.ptr[i+1]
	return m.idx[lo:hi:hi], m.val[lo:hi:hi]
}
func (m *csr) Counts(i int) ([]int32, []int32) {
	lo, hi := m.ptr[i], m.ptr[i+1]
	return m.idx[lo:hi:hi], m.cnt[lo:hi:hi]
}
func (m *csr) empty(i int) bool { return m.ptr[i] == m.ptr[i+1] }

var (
	_ models.Sparse    = (*csr)(nil)
	_ models.CountRows = (*csr)(nil)
)

// readBow reads bow.parquet as one CSR row per item, with the raw counts
// only when withCounts (LDA reads them, the other models never do: they are
// a third of the table). The row offsets are one pass over the rows; the
// values are then copied into arrays of their exact size on all cores.
func readBow(ctx context.Context, dir string, nItems int, withCounts bool) (*csr, error) {
	dim, err := schema.NumRows(filepath.Join(dir, "vocabulary.parquet"))
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "bow.parquet")
	var c schema.BowCols
	fields := []any{&c.ItemIdx, &c.TermIDs, &c.Weights}
	if withCounts {
		fields = append(fields, &c.Counts)
	}
	if err := schema.ReadFieldsSideBySide(ctx, path, &c, fields...); err != nil {
		return nil, err
	}
	m := &csr{dim: int(dim), ptr: make([]int64, nItems+1)}
	at := make([]int64, len(c.ItemIdx)+1) // where row r's values start
	r := 0
	for i := range nItems {
		for r < len(c.ItemIdx) && int(c.ItemIdx[r]) == i {
			n := len(c.TermIDs[r])
			if len(c.Weights[r]) != n || withCounts && len(c.Counts[r]) != n {
				return nil, fmt.Errorf("stages: %s: row %d: term_ids, weights and counts differ in length", path, r)
			}
			at[r+1] = at[r] + int64(n)
			r++
		}
		m.ptr[i+1] = at[r]
	}
	if r != len(c.ItemIdx) {
		return nil, fmt.Errorf("stages: %s: item_idx not ascending below %d items", path, nItems)
	}
	nnz := at[r]
	m.idx, m.val = make([]int32, nnz), make([]float32, nnz)
	if withCounts {
		m.cnt = make([]int32, nnz)
	}
	par.Spans(r, 8192, 0, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			copy(m.idx[at[k]:], c.TermIDs[k])
			copy(m.val[at[k]:], c.Weights[k])
			if withCounts {
				copy(m.cnt[at[k]:], c.Counts[k])
			}
		}
	})
	return m, nil
}

// dense is a row-major float32 matrix (LDA topic proportions read back).
type dense struct {
	rows, dim int
	data      []float32
}

func (m *dense) Rows() int           { return m.rows }
func (m *dense) Dim() int            { return m.dim }
func (m *dense) Row(i int) []float32 { return m.data[i*m.dim : (i+1)*m.dim : (i+1)*m.dim] }

// readTopics reads the topic proportions node train.<model> wrote (a
// models.Model.Topics model).
func readTopics(ctx context.Context, in inputs, model string, nItems int) (*dense, error) {
	dir, err := trainDir(in, model)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "topics.parquet")
	c, err := schema.ReadAll[schema.TopicsCols](ctx, path)
	if err != nil {
		return nil, err
	}
	props := c.Proportions
	if len(props) == 0 {
		return nil, fmt.Errorf("stages: %s: no rows", path)
	}
	m := &dense{rows: nItems, dim: len(props[0]), data: make([]float32, nItems*len(props[0]))}
	seen := make([]bool, nItems)
	for r, i := range c.ItemIdx {
		if i < 0 || int(i) >= nItems || seen[i] || len(props[r]) != m.dim {
			return nil, fmt.Errorf("stages: %s row %d: item_idx %d (of %d items, once each) with %d proportions (want %d)", path, r, i, nItems, len(props[r]), m.dim)
		}
		seen[i] = true
	}
	// Rows to their items on all cores: 0.1 s of evaluate's serial path at
	// Electronics' size, the copy's page faults included.
	par.Spans(len(c.ItemIdx), 8192, 0, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			copy(m.Row(int(c.ItemIdx[r])), props[r])
		}
	})
	return m, nil
}

// loadFeatures opens the experiment's feature matrix of kind (image,
// embeddings or bow): the memory-mapped matrix, or the bag-of-words rows,
// also returned as counts when withCounts (for LDA; nil otherwise).
func loadFeatures(ctx context.Context, in inputs, kind string, withCounts bool) (models.Features, *csr, func(), error) {
	items, err := in.file("ingest", "items.parquet")
	if err != nil {
		return nil, nil, nil, err
	}
	rows, err := schema.NumRows(items)
	if err != nil {
		return nil, nil, nil, err
	}
	n := int(rows)
	dir, err := in("features")
	if err != nil {
		return nil, nil, nil, err
	}
	if kind != "bow" {
		m, err := imagefeat.OpenMatrix(filepath.Join(dir, imageMatrixFile))
		if err != nil {
			return nil, nil, nil, err
		}
		if m.Rows() != n {
			m.Close()
			return nil, nil, nil, fmt.Errorf("stages: %s: %d rows for %d items", imageMatrixFile, m.Rows(), n)
		}
		return m, nil, func() { m.Close() }, nil
	}
	b, err := readBow(ctx, dir, n, withCounts)
	if err != nil {
		return nil, nil, nil, err
	}
	if !withCounts {
		return b, nil, func() {}, nil
	}
	return b, b, func() {}, nil
}

// writeAtomic writes a file through a temporary name and renames it.
func writeAtomic(path string, write func(tmp string) error) error {
	tmp := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
	err := write(tmp)
	if err == nil {
		err = syncFile(tmp)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

package stages

import (
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"monomer/schema"
)

func writeBowTables(t *testing.T, dir string, b schema.BowCols) {
	t.Helper()
	v := schema.VocabularyCols{TermID: []int32{0, 1, 2, 3}, Term: []string{"a", "b", "c", "d"}, Kind: []string{"w", "w", "w", "w"},
		Count: []int64{1, 1, 1, 1}, DocFreq: []int64{1, 1, 1, 1}, Surface: []string{"a", "b", "c", "d"}}
	if _, err := schema.Write(filepath.Join(dir, "vocabulary.parquet"), v); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Write(filepath.Join(dir, "bow.parquet"), b); err != nil {
		t.Fatal(err)
	}
}

// readBow's rows are the table's, items without a row are empty, and the
// counts come only when asked for; the same at any GOMAXPROCS (the copies
// run in tasks of 8192 rows, so 20,000 rows cross task boundaries).
func TestReadBowRows(t *testing.T) {
	dir := t.TempDir()
	var b schema.BowCols
	const n = 20003
	for i := range n {
		if i%5 == 3 {
			continue // an item without a vector
		}
		k := i%4 + 1
		ids, w, c := make([]int32, k), make([]float32, k), make([]int32, k)
		for j := range k {
			ids[j], w[j], c[j] = int32(j), float32(i)+float32(j)/8, int32(i*10+j)
		}
		b.ASIN = append(b.ASIN, "x")
		b.ItemIdx, b.TermIDs, b.Weights, b.Counts = append(b.ItemIdx, int32(i)), append(b.TermIDs, ids), append(b.Weights, w), append(b.Counts, c)
	}
	writeBowTables(t, dir, b)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first *csr
	for _, procs := range []int{1, 2, 3, 7, 16} {
		runtime.GOMAXPROCS(procs)
		for _, withCounts := range []bool{false, true} {
			m, err := readBow(context.Background(), dir, n, withCounts)
			if err != nil {
				t.Fatal(err)
			}
			if m.Dim() != 4 || m.Rows() != n {
				t.Fatalf("dim %d rows %d, want 4 and %d", m.Dim(), m.Rows(), n)
			}
			if withCounts != (m.cnt != nil) {
				t.Fatalf("withCounts %v, counts read: %v", withCounts, m.cnt != nil)
			}
			r := 0
			for i := range n {
				ids, w := m.SparseRow(i)
				if i%5 == 3 {
					if len(ids) != 0 {
						t.Fatalf("item %d: %d terms, want none", i, len(ids))
					}
					continue
				}
				if !slices.Equal(ids, b.TermIDs[r]) || !slices.Equal(w, b.Weights[r]) {
					t.Fatalf("P=%d item %d: %v %v, want %v %v", procs, i, ids, w, b.TermIDs[r], b.Weights[r])
				}
				if withCounts {
					if _, c := m.Counts(i); !slices.Equal(c, b.Counts[r]) {
						t.Fatalf("P=%d item %d: counts %v, want %v", procs, i, c, b.Counts[r])
					}
				}
				r++
			}
			if withCounts && first == nil {
				first = m
			} else if withCounts && (!slices.Equal(m.ptr, first.ptr) || !slices.Equal(m.idx, first.idx) || !slices.Equal(m.val, first.val) || !slices.Equal(m.cnt, first.cnt)) {
				t.Fatalf("P=%d: rows differ from P=1", procs)
			}
		}
	}
}

// A row whose weights and term ids differ in length is refused, naming the
// file and the row, not packed out of step.
func TestReadBowRaggedRow(t *testing.T) {
	dir := t.TempDir()
	b := schema.BowCols{ASIN: []string{"x", "y"}, ItemIdx: []int32{0, 1},
		TermIDs: [][]int32{{0, 1}, {2, 3}}, Weights: [][]float32{{1, 2}, {3}}, Counts: [][]int32{{1, 1}, {1, 1}}}
	writeBowTables(t, dir, b)
	_, err := readBow(context.Background(), dir, 2, false)
	if err == nil || !strings.Contains(err.Error(), "bow.parquet: row 1") {
		t.Fatalf("error %v, want one naming bow.parquet's row 1", err)
	}
}

// readTopics puts each row's proportions at its item, zeros for items
// without a row, the same at any GOMAXPROCS (20,000 rows cross the copy's
// tasks of 8192); an item_idx out of range or twice, or a row of another
// length, is refused naming the file and the row, not copied out of step.
func TestReadTopics(t *testing.T) {
	dir := t.TempDir()
	in := inputs(func(string) (string, error) { return dir, nil })
	const n, k = 20011, 3
	var c schema.TopicsCols
	for r := range n - 11 {
		i := (r * 7919) % n // rows in another order than items
		c.ItemIdx = append(c.ItemIdx, int32(i))
		c.Proportions = append(c.Proportions, []float32{float32(i), float32(r), 0.5})
	}
	path := filepath.Join(dir, "topics.parquet")
	if _, err := schema.Write(path, c); err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 7, 16} {
		runtime.GOMAXPROCS(procs)
		m, err := readTopics(context.Background(), in, "lda", n)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float32, n*k)
		for r, i := range c.ItemIdx {
			copy(want[int(i)*k:], c.Proportions[r])
		}
		if m.Rows() != n || m.Dim() != k || !slices.Equal(m.data, want) {
			t.Fatalf("P=%d: proportions not at their items", procs)
		}
	}
	for name, bad := range map[string]func(*schema.TopicsCols){
		"out of range": func(c *schema.TopicsCols) { c.ItemIdx[5] = n },
		"twice":        func(c *schema.TopicsCols) { c.ItemIdx[5] = c.ItemIdx[4] },
		"short row":    func(c *schema.TopicsCols) { c.Proportions[5] = c.Proportions[5][:2] },
	} {
		b := schema.TopicsCols{ItemIdx: slices.Clone(c.ItemIdx), Proportions: slices.Clone(c.Proportions)}
		bad(&b)
		if _, err := schema.Write(path, b); err != nil {
			t.Fatal(err)
		}
		_, err := readTopics(context.Background(), in, "lda", n)
		if err == nil || !strings.Contains(err.Error(), "topics.parquet row 5:") {
			t.Fatalf("%s: error %v, want one naming topics.parquet's row 5", name, err)
		}
	}
}

package models

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestLDAMatrixMarket times FitLDA with gensim's defaults and 100 topics
// (one pass, chunks of 2000) and the Transform of every document on a
// Matrix Market corpus (1-based doc, term, count lines, as gensim's
// MmCorpus reads), for the LDA at the paper's size beside gensim on the
// same file (docs/notes/2026-11-25-electronics-end-to-end.md). Opt-in: MONOMER_LDA_MM=path.
func TestLDAMatrixMarket(t *testing.T) {
	path := os.Getenv("MONOMER_LDA_MM")
	if path == "" {
		t.Skip("set MONOMER_LDA_MM to a Matrix Market corpus")
	}
	docs := readMM(t, path)
	var ms runtime.MemStats
	c0, w0 := cpuSeconds(), time.Now()
	m, st, err := FitLDA(context.Background(), docs, LDAOptions{Topics: 100}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	c1, w1 := cpuSeconds(), time.Now()
	theta := m.Transform(docs)
	c2, w2 := cpuSeconds(), time.Now()
	runtime.ReadMemStats(&ms)
	t.Logf("%d docs, %d words, %d updates, bound %.4f", st.Documents, st.Words, st.Updates, st.PerWordBound)
	t.Logf("fit: %.1f CPU-s, %.1f s wall; transform of %d docs: %.1f CPU-s, %.1f s wall; heap in use %d MB, Sys %d MB",
		c1-c0, w1.Sub(w0).Seconds(), theta.Rows(), c2-c1, w2.Sub(w1).Seconds(), ms.HeapInuse>>20, ms.Sys>>20)
}

// mmRows are count rows read from a Matrix Market file.
type mmRows struct {
	dim      int
	idx, cnt [][]int32
}

func (r *mmRows) Rows() int                       { return len(r.idx) }
func (r *mmRows) Dim() int                        { return r.dim }
func (r *mmRows) Counts(i int) ([]int32, []int32) { return r.idx[i], r.cnt[i] }

func readMM(t *testing.T, path string) *mmRows {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var r mmRows
	header := false
	for sc.Scan() {
		line := sc.Text()
		if len(line) == 0 || line[0] == '%' {
			continue
		}
		if !header {
			var docs, nnz int
			if _, err := fmt.Sscan(line, &docs, &r.dim, &nnz); err != nil {
				t.Fatalf("%s: header %q: %v", path, line, err)
			}
			r.idx, r.cnt = make([][]int32, docs), make([][]int32, docs)
			header = true
			continue
		}
		var d, w, c int32
		if _, err := fmt.Sscan(line, &d, &w, &c); err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		r.idx[d-1] = append(r.idx[d-1], w-1)
		r.cnt[d-1] = append(r.cnt[d-1], c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return &r
}

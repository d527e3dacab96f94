package models

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
)

var writeLDADraws = flag.Bool("write-lda-draws", false, "write testdata/lda_prod_draws.json.gz, the draws lda_gensim_prod.py replays")

// The corpus and options of the production-start comparison: those of
// lda_gensim.json.gz, fitted by FitLDA itself from this seed.
const ldaProdSeed = 1

// ldaProdCorpus reads the corpus of testdata/lda_gensim.json.gz.
func ldaProdCorpus(t *testing.T) (docs *ldaTestRows, topics, chunk int) {
	t.Helper()
	var ref struct {
		Vocab, Topics int
		ChunkSize     int `json:"chunksize"`
		Docs          [][][2]int32
	}
	readGzipJSON(t, "testdata/lda_gensim.json.gz", &ref)
	return gensimDocs(ref.Vocab, ref.Docs), ref.Topics, ref.ChunkSize
}

// ldaRowDraws are the k Gamma(100, 1/100) draws that start row's gamma
// for one purpose and pass (what inferDoc draws).
func ldaRowDraws(base, purpose, pass uint64, row, k int) []float64 {
	a, c := ldaStreamSeed(base, purpose, pass, row)
	r := rand.New(rand.NewPCG(a, c))
	out := make([]float64, k)
	for i := range out {
		out[i] = ldaGamma100(r)
	}
	return out
}

// TestWriteLDADraws writes, with -write-lda-draws, every random number
// FitLDA (seed ldaProdSeed, up to 3 passes), LogPerplexity and Transform
// use on the corpus: the initial lambda, then each pass's and the
// inference's starting gammas by row. testdata/lda_gensim_prod.py feeds
// them to gensim in place of its own generator.
func TestWriteLDADraws(t *testing.T) {
	if !*writeLDADraws {
		t.Skip("writes testdata with -write-lda-draws")
	}
	docs, k, chunk := ldaProdCorpus(t)
	rng := rand.New(rand.NewPCG(ldaProdSeed, ldaProdSeed))
	v := docs.Dim()
	init := make([][]float64, k) // as FitLDA draws it, topic by topic
	for t := range init {
		init[t] = make([]float64, v)
		for w := range init[t] {
			init[t][w] = ldaGamma100(rng)
		}
	}
	fitSeed, inferSeed := rng.Uint64(), rng.Uint64()
	out := struct {
		Topics    int           `json:"topics"`
		ChunkSize int           `json:"chunksize"`
		Init      [][]float64   `json:"init"`
		Fit       [][][]float64 `json:"fit"`   // [pass][row][topic]
		Infer     [][]float64   `json:"infer"` // [row][topic]
	}{Topics: k, ChunkSize: chunk, Init: init}
	for pass := range 3 {
		var rows [][]float64
		for row := range docs.Rows() {
			rows = append(rows, ldaRowDraws(fitSeed, ldaStreamFit, uint64(pass), row, k))
		}
		out.Fit = append(out.Fit, rows)
	}
	for row := range docs.Rows() {
		out.Infer = append(out.Infer, ldaRowDraws(inferSeed, ldaStreamInfer, 0, row, k))
	}
	f, err := os.Create("testdata/lda_prod_draws.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	if err := json.NewEncoder(zw).Encode(out); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLDAMatchesGensimFromProduction fits with FitLDA itself, from its own
// initialisation (seed ldaProdSeed: random lambda, random gamma per row and
// pass), and compares with testdata/lda_gensim_prod.json.gz: gensim's
// LdaModel replaying those same random numbers (testdata/lda_gensim_prod.py,
// which says how it was produced). Topics, per-word bound and topic
// proportions must agree to rounding.
func TestLDAMatchesGensimFromProduction(t *testing.T) {
	docs, k, chunk := ldaProdCorpus(t)
	var ref struct {
		Gensim string
		Runs   []gensimRun
	}
	readGzipJSON(t, "testdata/lda_gensim_prod.json.gz", &ref)
	if len(ref.Runs) == 0 {
		t.Fatal("no runs in the reference")
	}
	for _, run := range ref.Runs {
		t.Run(fmt.Sprintf("passes=%d", run.Passes), func(t *testing.T) {
			m, _, err := FitLDA(context.Background(), docs, LDAOptions{Topics: k, ChunkSize: chunk, Passes: run.Passes, EvalEvery: -1},
				rand.New(rand.NewPCG(ldaProdSeed, ldaProdSeed)))
			if err != nil {
				t.Fatal(err)
			}
			run.check(t, m, docs, ref.Gensim)
		})
	}
}

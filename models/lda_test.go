package models

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"monomer/internal/ctxtest"
)

// ldaTestRows is an in-memory CountRows.
type ldaTestRows struct {
	v   int
	idx [][]int32
	cnt [][]int32
}

func (r *ldaTestRows) Rows() int                       { return len(r.idx) }
func (r *ldaTestRows) Dim() int                        { return r.v }
func (r *ldaTestRows) Counts(i int) ([]int32, []int32) { return r.idx[i], r.cnt[i] }
func (r *ldaTestRows) add(idx []int32, cnt []int32) *ldaTestRows {
	r.idx = append(r.idx, idx)
	r.cnt = append(r.cnt, cnt)
	return r
}

// ldaPlanted generates a corpus from `topics` planted topics over v terms:
// topic t puts 95% of its mass on its own `top` terms (t*top ...), decaying
// along them, and spreads the rest over the whole vocabulary. Each document
// mixes 1-3 topics with random weights and has minLen..maxLen tokens. It
// returns the rows and each topic's own terms.
func ldaPlanted(rng *rand.Rand, docs, v, topics, top, minLen, maxLen int) (*ldaTestRows, [][]int32) {
	cum := make([][]float64, topics)
	own := make([][]int32, topics)
	for t := range cum {
		p := make([]float64, v)
		var s float64
		for i := 0; i < top; i++ {
			w := (t*top + i) % v
			p[w] = 1 / (1 + 0.1*float64(i))
			s += p[w]
			own[t] = append(own[t], int32(w))
		}
		for w := range p {
			p[w] = 0.95*p[w]/s + 0.05/float64(v)
		}
		for w := 1; w < v; w++ {
			p[w] += p[w-1]
		}
		cum[t] = p
	}
	out := &ldaTestRows{v: v}
	for d := 0; d < docs; d++ {
		nt := 1 + rng.IntN(3)
		ts := rng.Perm(topics)[:nt]
		mix := make([]float64, nt)
		var s float64
		for i := range mix {
			mix[i] = 0.2 + rng.Float64()
			s += mix[i]
		}
		counts := map[int32]int32{}
		n := minLen + rng.IntN(maxLen-minLen+1)
		for i := 0; i < n; i++ {
			u, j := rng.Float64()*s, 0
			for j < nt-1 && u > mix[j] {
				u -= mix[j]
				j++
			}
			c := cum[ts[j]]
			w := sort.SearchFloat64s(c, rng.Float64()*c[v-1])
			counts[int32(min(w, v-1))]++
		}
		var idx, cnt []int32
		for w := range counts {
			idx = append(idx, w)
		}
		slices.Sort(idx)
		for _, w := range idx {
			cnt = append(cnt, counts[w])
		}
		out.add(idx, cnt)
	}
	return out, own
}

func ldaTopTerms(p []float64, n int) []int32 {
	ids := make([]int32, len(p))
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortStableFunc(ids, func(a, b int32) int {
		switch {
		case p[a] > p[b]:
			return -1
		case p[a] < p[b]:
			return 1
		}
		return 0
	})
	return ids[:n]
}

func TestLDAPlantedTopics(t *testing.T) {
	const topics, top = 10, 20
	docs, own := ldaPlanted(rand.New(rand.NewPCG(1, 1)), 2000, 200, topics, top, 40, 120)
	// One gensim pass over 2000 documents is only ten updates, too few on a
	// corpus this small (gensim warns likewise): take ten passes. With
	// exactly 10 topics, gensim 4.2 and this code alike merge two planted
	// topics into one on most seeds (a known local optimum of LDA; 7 and 6
	// of 10 seeds of this corpus): 15 topics leave room and recovered all
	// ten on 10 of 10 seeds.
	m, st, err := FitLDA(context.Background(), docs, LDAOptions{Topics: 15, ChunkSize: 200, Passes: 10}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if st.Documents != 2000 || st.Chunks != 10 || st.Updates != 100 || st.Inferences != 20000 {
		t.Errorf("stats %+v", st)
	}
	learned := m.Topics()
	used := map[int]int{}
	for p, terms := range own {
		ownSet := map[int32]bool{}
		for _, w := range terms {
			ownSet[w] = true
		}
		best, bestHits := -1, 0
		for l, dist := range learned {
			hits := 0
			for _, w := range ldaTopTerms(dist, 10) {
				if ownSet[w] {
					hits++
				}
			}
			if hits > bestHits {
				best, bestHits = l, hits
			}
		}
		if bestHits < 9 {
			t.Errorf("planted topic %d: best learned topic %d has only %d of its top 10 terms among the planted top %d", p, best, bestHits, top)
		}
		if q, dup := used[best]; dup {
			t.Errorf("planted topics %d and %d both match learned topic %d", q, p, best)
		}
		used[best] = p
	}
	if st.PerWordBound >= 0 || st.PerWordBound < -math.Log(200) {
		t.Errorf("per-word bound %v: want in (-log V, 0)", st.PerWordBound)
	}

	// Documents of a single planted topic load mostly on its learned topic.
	tm := m.Transform(docs)
	for l, p := range used {
		idx := []int32{}
		cnt := []int32{}
		for _, w := range own[p][:10] {
			idx = append(idx, w)
			cnt = append(cnt, 5)
		}
		one := (&ldaTestRows{v: 200}).add(idx, cnt)
		if got := m.Transform(one).Row(0)[l]; got < 0.9 {
			t.Errorf("document of planted topic %d: proportion %v in learned topic %d, want > 0.9", p, got, l)
		}
	}
	for i := 0; i < tm.Rows(); i++ {
		var s float32
		for _, x := range tm.Row(i) {
			if x != 0 && x < 0.01 {
				t.Fatalf("row %d: proportion %v below MinimumProbability not zeroed", i, x)
			}
			s += x
		}
		if s > 1.0001 || s < 0.9 {
			t.Fatalf("row %d: proportions sum to %v", i, s)
		}
	}
}

func TestLDAPerplexityImprovesWithPasses(t *testing.T) {
	docs, _ := ldaPlanted(rand.New(rand.NewPCG(2, 2)), 1000, 150, 8, 15, 30, 80)
	prev := math.Inf(-1)
	for _, passes := range []int{1, 3, 9} {
		m, st, err := FitLDA(context.Background(), docs, LDAOptions{Topics: 8, ChunkSize: 100, Passes: passes}, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		b := m.LogPerplexity(docs)
		t.Logf("passes %d: per-word bound %.4f (last chunk estimate %.4f, gensim perplexity %.1f)", passes, b, st.PerWordBound, st.Perplexity())
		if !(b > prev) {
			t.Errorf("passes %d: per-word bound %v not above %v", passes, b, prev)
		}
		prev = b
		// The last-chunk estimate of each pass improves too.
		var last []float64
		for _, e := range st.Evaluations {
			if e.Chunk == st.Chunks-1 {
				last = append(last, e.PerWordBound)
			}
		}
		if len(last) != passes {
			t.Fatalf("passes %d: %d end-of-pass evaluations", passes, len(last))
		}
		for i := 1; i < len(last); i++ {
			if last[i] <= last[i-1] {
				t.Errorf("passes %d: end-of-pass bound %v after %v", passes, last[i], last[i-1])
			}
		}
	}
}

func TestLDADeterminism(t *testing.T) {
	docs, _ := ldaPlanted(rand.New(rand.NewPCG(3, 3)), 700, 120, 6, 10, 5, 60)
	docs.add(nil, nil) // an empty row among the others
	docs.idx[5], docs.cnt[5] = []int32{3}, []int32{0}
	fit := func(workers, procs int) (*LDA, LDAStats, *TopicMatrix) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		m, st, err := FitLDA(context.Background(), docs, LDAOptions{Topics: 6, ChunkSize: 128, Passes: 2, EvalEvery: 2, Workers: workers}, rand.New(rand.NewPCG(7, 9)))
		if err != nil {
			t.Fatal(err)
		}
		return m, st, m.Transform(docs)
	}
	m1, s1, t1 := fit(1, 1)
	if s1.Skipped != 2 || s1.Documents != 699 {
		t.Errorf("skipped %d, documents %d: want 2, 699", s1.Skipped, s1.Documents)
	}
	for _, c := range []struct{ workers, procs int }{{1, 1}, {0, 1}, {0, 2}, {3, 2}, {7, 1}} {
		m2, s2, t2 := fit(c.workers, c.procs)
		name := fmt.Sprintf("workers %d GOMAXPROCS %d", c.workers, c.procs)
		if !slices.Equal(m1.sstats, m2.sstats) || !slices.Equal(m1.expElogbeta, m2.expElogbeta) {
			t.Errorf("%s: topics differ", name)
		}
		if !reflect.DeepEqual(s1, s2) {
			t.Errorf("%s: stats differ:\n%+v\n%+v", name, s1, s2)
		}
		if !slices.Equal(t1.data, t2.data) {
			t.Errorf("%s: transform differs", name)
		}
		if a, b := m1.LogPerplexity(docs), m2.LogPerplexity(docs); a != b {
			t.Errorf("%s: LogPerplexity %v vs %v", name, a, b)
		}
	}
	// Row results do not depend on the other rows.
	sub := (&ldaTestRows{v: docs.v}).add(docs.idx[10], docs.cnt[10])
	if !slices.Equal(m1.Transform(sub).Row(0), t1.Row(10)) {
		// Row index keys the stream, so a row moved to index 0 differs in
		// its initial gamma but converges to nearly the same proportions.
		a, b := m1.Transform(sub).Row(0), t1.Row(10)
		for i := range a {
			if math.Abs(float64(a[i]-b[i])) > 0.02 {
				t.Errorf("row 10 alone: topic %d proportion %v vs %v", i, a[i], b[i])
			}
		}
	}
	// A different seed gives a different model.
	m3, _, err := FitLDA(context.Background(), docs, LDAOptions{Topics: 6, ChunkSize: 128, Passes: 2}, rand.New(rand.NewPCG(8, 9)))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(m1.sstats, m3.sstats) {
		t.Error("seeds 7 and 8 gave the same topics")
	}
}

func TestLDATransformEmptyAndMinimumProbability(t *testing.T) {
	docs, _ := ldaPlanted(rand.New(rand.NewPCG(4, 4)), 300, 60, 3, 10, 20, 40)
	for _, tc := range []struct {
		name    string
		minProb float64
		zeroes  bool
	}{
		{name: "default 0.01", minProb: 0, zeroes: true},
		{name: "keep all", minProb: -1, zeroes: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, err := FitLDA(context.Background(), docs, LDAOptions{Topics: 50, MinimumProbability: tc.minProb}, rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				t.Fatal(err)
			}
			in := (&ldaTestRows{v: 60}).add(nil, nil).add(docs.idx[0], docs.cnt[0])
			tm := m.Transform(in)
			if tm.Rows() != 2 || tm.Dim() != 50 {
				t.Fatalf("shape %dx%d", tm.Rows(), tm.Dim())
			}
			for _, x := range tm.Row(0) {
				if x != float32(1.0/50) {
					t.Fatalf("empty row: %v, want uniform 0.02", tm.Row(0))
				}
			}
			zeros := 0
			for _, x := range tm.Row(1) {
				if x == 0 {
					zeros++
				}
			}
			if (zeros > 0) != tc.zeroes {
				t.Errorf("%d zeroed proportions", zeros)
			}
		})
	}
}

func TestLDAInvalidInput(t *testing.T) {
	good := (&ldaTestRows{v: 5}).add([]int32{0, 4}, []int32{1, 2})
	for _, tc := range []struct {
		name string
		docs *ldaTestRows
		opts LDAOptions
		want string
	}{
		{name: "term id too large", docs: (&ldaTestRows{v: 5}).add([]int32{0}, []int32{1}).add([]int32{5}, []int32{1}), want: "row 1: term id 5 outside vocabulary [0,5)"},
		{name: "negative term id", docs: (&ldaTestRows{v: 5}).add([]int32{-1}, []int32{1}), want: "row 0: term id -1"},
		{name: "negative count", docs: (&ldaTestRows{v: 5}).add([]int32{2}, []int32{-3}), want: "row 0: term id 2 has count -3"},
		{name: "length mismatch", docs: (&ldaTestRows{v: 5}).add([]int32{1, 2}, []int32{1}), want: "row 0: 2 term ids but 1 counts"},
		{name: "all empty", docs: (&ldaTestRows{v: 5}).add(nil, nil).add([]int32{1}, []int32{0}), want: "none of 2 rows has a word"},
		{name: "no vocabulary", docs: &ldaTestRows{v: 0}, want: "vocabulary of 0 terms"},
		{name: "negative topics", docs: good, opts: LDAOptions{Topics: -1}, want: "option Topics"},
		{name: "decay above 1", docs: good, opts: LDAOptions{Decay: 1.5}, want: "option Decay"},
		{name: "NaN alpha", docs: good, opts: LDAOptions{Alpha: math.NaN()}, want: "option Alpha"},
		{name: "negative workers", docs: good, opts: LDAOptions{Workers: -2}, want: "option Workers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := FitLDA(context.Background(), tc.docs, tc.opts, rand.New(rand.NewPCG(1, 1)))
			if !errors.Is(err, ErrLDAInput) {
				t.Fatalf("error %v: want ErrLDAInput", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q: want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestLDAMatchesGensim replays testdata/lda_gensim.json.gz, written by
// testdata/lda_gensim.py with gensim's LdaModel: the same corpus, initial
// lambda and options, every document's gamma started at 1 on both sides.
// Topics, per-word bound and topic proportions must agree to rounding.
func TestLDAMatchesGensim(t *testing.T) {
	var ref struct {
		Gensim        string
		Vocab, Topics int
		ChunkSize     int `json:"chunksize"`
		Docs          [][][2]int32
		Init          [][]float64
		Runs          []gensimRun
	}
	readGzipJSON(t, "testdata/lda_gensim.json.gz", &ref)
	docs := gensimDocs(ref.Vocab, ref.Docs)
	rows := make([]int, docs.Rows())
	for i := range rows {
		rows[i] = i
	}
	for _, run := range ref.Runs {
		t.Run(fmt.Sprintf("passes=%d", run.Passes), func(t *testing.T) {
			o, err := LDAOptions{Topics: ref.Topics, ChunkSize: ref.ChunkSize, Passes: run.Passes, EvalEvery: -1}.resolve()
			if err != nil {
				t.Fatal(err)
			}
			m := newLDA(o, ref.Vocab)
			m.unitGamma = true
			for k, row := range ref.Init {
				for w, x := range row {
					m.sstats[w*m.k+k] = x
				}
			}
			m.syncExpElogbeta(0)
			var st LDAStats
			if err := m.train(context.Background(), docs, rows, o, 1, &st); err != nil {
				t.Fatal(err)
			}
			run.check(t, m, docs, ref.Gensim)
		})
	}
}

// readGzipJSON decodes the gzipped JSON file at path into v.
func readGzipJSON(t *testing.T, path string, v any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(zr).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// gensimDocs is a gensim reference file's corpus: per document, its
// (word, count) pairs.
func gensimDocs(vocab int, docs [][][2]int32) *ldaTestRows {
	out := &ldaTestRows{v: vocab}
	for _, d := range docs {
		var idx, cnt []int32
		for _, p := range d {
			idx, cnt = append(idx, p[0]), append(cnt, p[1])
		}
		out.add(idx, cnt)
	}
	return out
}

// gensimRun is what gensim computed for one number of passes.
type gensimRun struct {
	Passes        int
	Sstats        [][]float64
	LogPerplexity float64     `json:"log_perplexity"`
	DocTopics     [][]float64 `json:"doc_topics"`
}

// check compares m, fitted on docs, with the run: topics, per-word bound
// and topic proportions must agree to rounding.
func (run gensimRun) check(t *testing.T, m *LDA, docs CountRows, gensim string) {
	t.Helper()
	var worst float64
	for k, row := range run.Sstats {
		for w, x := range row {
			worst = max(worst, math.Abs(m.sstats[w*m.k+k]-x)/(math.Abs(x)+1))
		}
	}
	t.Logf("largest relative difference from gensim %s: %.3g", gensim, worst)
	if worst > 1e-6 {
		t.Errorf("lambda differs from gensim %s by up to %.3g (relative)", gensim, worst)
	}
	if got := m.LogPerplexity(docs); math.Abs(got-run.LogPerplexity) > 1e-7 {
		t.Errorf("LogPerplexity %v, gensim %v", got, run.LogPerplexity)
	}
	tm := m.Transform(docs)
	for d, want := range run.DocTopics {
		for k, p := range want {
			if got := float64(tm.Row(d)[k]); math.Abs(got-p) > 1e-6 {
				t.Errorf("document %d topic %d: proportion %v, gensim %v", d, k, got, p)
			}
		}
	}
}

func TestLDAGammaDraws(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	const n = 200000
	var s, s2 float64
	for i := 0; i < n; i++ {
		x := ldaGamma100(r)
		s += x
		s2 += x * x
	}
	mean := s / n
	variance := s2/n - mean*mean
	// Gamma(100, 1/100): mean 1, variance 0.01.
	if math.Abs(mean-1) > 0.001 || math.Abs(variance-0.01) > 0.0003 {
		t.Errorf("mean %v variance %v: want 1, 0.01", mean, variance)
	}
}

// FuzzLDA: any small corpus either is rejected with ErrLDAInput or gives
// finite topics and proportions.
func FuzzLDA(f *testing.F) {
	f.Add([]byte{0, 1, 1, 2, 255, 3, 4, 1, 255, 255, 9, 200}, uint8(3))
	f.Add([]byte{7, 0, 7, 0}, uint8(1))
	f.Add([]byte{1, 127, 2, 127, 255, 1, 255, 3, 3}, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, topics uint8) {
		// Byte pairs (term, count) make rows; 255 ends a row. Terms >= 10
		// are out of the vocabulary and counts >= 128 negative.
		docs := &ldaTestRows{v: 10}
		var idx, cnt []int32
		for i := 0; i < len(data); i++ {
			if data[i] == 255 || i+1 == len(data) {
				docs.add(idx, cnt)
				idx, cnt = nil, nil
				continue
			}
			idx = append(idx, int32(data[i]))
			cnt = append(cnt, int32(int8(data[i+1])))
			i++
		}
		m, _, err := FitLDA(context.Background(), docs, LDAOptions{Topics: int(topics%5) + 1, ChunkSize: 2, Passes: 2, Workers: 2}, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			if !errors.Is(err, ErrLDAInput) {
				t.Fatalf("error %v does not wrap ErrLDAInput", err)
			}
			return
		}
		for _, row := range m.Topics() {
			for _, p := range row {
				if math.IsNaN(p) || p < 0 || p > 1 {
					t.Fatalf("topic probability %v", p)
				}
			}
		}
		tm := m.Transform(docs)
		for i := 0; i < tm.Rows(); i++ {
			for _, p := range tm.Row(i) {
				if math.IsNaN(float64(p)) || p < 0 || p > 1 {
					t.Fatalf("row %d: proportion %v", i, p)
				}
			}
		}
		if b := m.LogPerplexity(docs); math.IsNaN(b) || b > 0 {
			t.Fatalf("per-word bound %v", b)
		}
	})
}

// BenchmarkLDA fits one pass with gensim's defaults except the topic count
// on an Amazon-like corpus: documents of 50-150 tokens from 1-3 of 100
// planted topics over the vocabulary; with one worker and with GOMAXPROCS.
func BenchmarkLDA(b *testing.B) {
	for _, size := range []struct {
		name           string
		docs, v, k     int
		minLen, maxLen int
	}{
		{name: "docs=2k/V=1000/K=20", docs: 2000, v: 1000, k: 20, minLen: 50, maxLen: 150},
		{name: "docs=20k/V=5000/K=100", docs: 20000, v: 5000, k: 100, minLen: 50, maxLen: 150},
	} {
		docs, _ := ldaPlanted(rand.New(rand.NewPCG(1, 1)), size.docs, size.v, 100, size.v/100, size.minLen, size.maxLen)
		var nnz int
		for _, idx := range docs.idx {
			nnz += len(idx)
		}
		for _, workers := range []int{1, 0} {
			b.Run(fmt.Sprintf("%s/workers=%d", size.name, workers), func(b *testing.B) {
				cpu0 := ldaCPUSeconds()
				var st LDAStats
				for i := 0; i < b.N; i++ {
					var err error
					_, st, err = FitLDA(context.Background(), docs, LDAOptions{Topics: size.k, Workers: workers}, rand.New(rand.NewPCG(1, 1)))
					if err != nil {
						b.Fatal(err)
					}
				}
				sec := b.Elapsed().Seconds() / float64(b.N)
				b.ReportMetric(float64(size.docs)/sec, "docs/s")
				// On a shared machine wall time overstates the cost: also
				// report documents per second of this process's CPU time.
				b.ReportMetric(float64(size.docs)*float64(b.N)/(ldaCPUSeconds()-cpu0), "docs/cpu-s")
				b.ReportMetric(float64(nnz)/float64(size.docs), "terms/doc")
				b.ReportMetric(float64(st.Iterations)/float64(st.Inferences), "iters/doc")
			})
		}
	}
}

// ldaCPUSeconds returns the user+system CPU time of this process.
func ldaCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// recoveredTopics counts the planted topics whose best-matching learned
// topic has at least 8 of its top 10 terms among the planted top terms.
func recoveredTopics(m *LDA, own [][]int32) int {
	n := 0
	for _, terms := range own {
		ownSet := map[int32]bool{}
		for _, w := range terms {
			ownSet[w] = true
		}
		best := 0
		for _, dist := range m.Topics() {
			hits := 0
			for _, w := range ldaTopTerms(dist, 10) {
				if ownSet[w] {
					hits++
				}
			}
			best = max(best, hits)
		}
		if best >= 8 {
			n++
		}
	}
	return n
}

// TestLDAPassRule: with MinUpdates, a corpus smaller than one gensim chunk
// gets max(1, ⌈20/1⌉) = 20 passes and recovers the planted topics that
// gensim's single M-step (rho = 1 from random topics) does not.
func TestLDAPassRule(t *testing.T) {
	for _, tc := range []struct{ chunks, min, want int }{{1, 20, 20}, {3, 20, 7}, {20, 20, 1}, {50, 20, 1}, {0, 20, 1}, {4, 0, 1}} {
		if got := LDAPasses(tc.chunks, tc.min); got != tc.want {
			t.Errorf("LDAPasses(%d, %d) = %d, want %d", tc.chunks, tc.min, got, tc.want)
		}
	}
	docs, own := ldaPlanted(rand.New(rand.NewPCG(3, 3)), 400, 150, 6, 15, 30, 80)
	m, st, err := FitLDA(context.Background(), docs, LDAOptions{Topics: 9, MinUpdates: LDAMinUpdates}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if st.Chunks != 1 || st.Passes != 20 || st.Updates != 20 || st.Inferences != 20*400 {
		t.Errorf("stats %+v: want 1 chunk, 20 passes, 20 updates", st)
	}
	one, st1, err := FitLDA(context.Background(), docs, LDAOptions{Topics: 9}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if st1.Passes != 1 || st1.Updates != 1 {
		t.Errorf("gensim defaults: stats %+v, want 1 pass, 1 update", st1)
	}
	got, got1 := recoveredTopics(m, own), recoveredTopics(one, own)
	t.Logf("planted topics recovered: %d of 6 after 20 updates, %d after 1; per-word bound %.3f against %.3f",
		got, got1, m.LogPerplexity(docs), one.LogPerplexity(docs))
	if got < 6 {
		t.Errorf("20 updates recovered %d of 6 planted topics", got)
	}
	if got1 >= got {
		t.Errorf("one update recovered %d planted topics, 20 updates %d", got1, got)
	}
}

// TestLDACancel: FitLDA looks at ctx before each chunk and returns its error
// and no model, wherever the cancel lands.
func TestLDACancel(t *testing.T) {
	docs, _ := ldaPlanted(rand.New(rand.NewPCG(1, 1)), 400, 50, 4, 10, 20, 40)
	opts := LDAOptions{Topics: 4, ChunkSize: 100, Passes: 2}
	if _, st, err := FitLDA(context.Background(), docs, opts, rand.New(rand.NewPCG(1, 1))); err != nil || st.Updates != 8 {
		t.Fatalf("uncancelled: %d updates, %v; want 8, nil", st.Updates, err)
	}
	for _, live := range []int{0, 1, 5, 7} {
		m, st, err := FitLDA(ctxtest.After(live), docs, opts, rand.New(rand.NewPCG(1, 1)))
		if !errors.Is(err, context.Canceled) || m != nil || st.Updates != live {
			t.Errorf("cancelled at check %d: model %v, %d updates, %v; want none, %d, context.Canceled", live, m != nil, st.Updates, err, live)
		}
	}
}

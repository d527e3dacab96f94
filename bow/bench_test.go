package bow

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jdkato/prose/v2"
)

// Benchmark corpora: synthDocs (synth_test.go), n reviews over n/4 items.
// Each reports tokens/s (wall) and tokens/cpu-s (process CPU time, steadier
// on a shared machine); the model is loaded before the timer.

func benchDocs(n int) []Doc { return synthDocs(rand.New(rand.NewPCG(1, 1)), n, n/4+1) }

type throughput struct {
	b      *testing.B
	cpu0   float64
	tokens int64
}

func startThroughput(b *testing.B) *throughput {
	if _, err := loadModel(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	return &throughput{b: b, cpu0: cpuSeconds()}
}

func (t *throughput) report() {
	t.b.ReportMetric(float64(t.tokens)/t.b.Elapsed().Seconds(), "tokens/s")
	if cpu := cpuSeconds() - t.cpu0; cpu > 0 {
		t.b.ReportMetric(float64(t.tokens)/cpu, "tokens/cpu-s")
	}
}

// BenchmarkAnalyze: tokenise + tag + stem (the one tagging pass), by
// corpus size and workers.
func BenchmarkAnalyze(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		docs := benchDocs(n)
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("docs=%d/workers=%d", n, w), func(b *testing.B) {
				tp := startThroughput(b)
				for b.Loop() {
					c, err := analyzeAll(b.Context(), SliceDocs(docs), len(docs), nil, Options{Workers: w})
					if err != nil {
						b.Fatal(err)
					}
					tp.tokens += c.tokens
				}
				tp.report()
			})
		}
	}
}

// BenchmarkBuild: end to end (tag, rank, vectorise), all cores.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		docs := benchDocs(n)
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			tp := startThroughput(b)
			for b.Loop() {
				res, err := Build(b.Context(), SliceDocs(docs), n/4+1, Options{})
				if err != nil {
					b.Fatal(err)
				}
				tp.tokens += res.Stats.Tokens
			}
			tp.report()
		})
	}
}

// BenchmarkBuildReal: end to end on the real magazine reviews (a richer
// vocabulary than the synthetic one, so more distinct words to cache).
func BenchmarkBuildReal(b *testing.B) {
	docs, nItems := realCorpus(readRealReviews(b, "Magazine_Subscriptions_5.json.gz"), 0)
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			tp := startThroughput(b)
			for b.Loop() {
				res, err := Build(b.Context(), SliceDocs(docs), nItems, Options{Workers: w})
				if err != nil {
					b.Fatal(err)
				}
				tp.tokens += res.Stats.Tokens
			}
			tp.report()
		})
	}
}

// BenchmarkVectorize: counting the vocabulary terms of analysed reviews
// into item vectors (no tagging), hits/s and reviews/s, wall and CPU.
func BenchmarkVectorize(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		docs := benchDocs(n)
		c, err := analyzeAll(b.Context(), SliceDocs(docs), n/4+1, nil, Options{})
		if err != nil {
			b.Fatal(err)
		}
		vocab := mustCount(c, 0).rank(DefaultVocabSize)
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			var hits int64
			cpu0 := cpuSeconds()
			for b.Loop() {
				res, err := c.vectorize(b.Context(), vocab, n/4+1, Options{})
				if err != nil {
					b.Fatal(err)
				}
				hits += res.Stats.Hits
			}
			reviews := float64(int64(b.N) * c.docs)
			b.ReportMetric(reviews/b.Elapsed().Seconds(), "reviews/s")
			b.ReportMetric(float64(hits)/b.Elapsed().Seconds(), "hits/s")
			if cpu := cpuSeconds() - cpu0; cpu > 0 {
				b.ReportMetric(reviews/cpu, "reviews/cpu-s")
				b.ReportMetric(float64(hits)/cpu, "hits/cpu-s")
			}
		})
	}
}

// BenchmarkProse is the baseline: prose's own Document API with a shared
// model, segmentation and extraction off, one core.
func BenchmarkProse(b *testing.B) {
	docs := benchDocs(2000)
	m := prose.ModelFromData("bench")
	b.Run("docs=2000", func(b *testing.B) {
		tp := startThroughput(b)
		for b.Loop() {
			for _, d := range docs {
				doc, err := prose.NewDocument(d.Text, prose.UsingModel(m),
					prose.WithSegmentation(false), prose.WithExtraction(false))
				if err != nil {
					b.Fatal(err)
				}
				tp.tokens += int64(len(doc.Tokens()))
			}
		}
		tp.report()
	})
}

// BenchmarkSampleOverlap measures what sampling changes in the vocabulary,
// on a synthetic corpus of 400,000 reviews (about 14 M tokens): for the
// reviews of sampling level >= s (about 2^-s of them), s = 1..6, the share
// of the exact top-5000 terms the sampled top-5000 keeps (overlap@1/2^s)
// and the share of the exact vocabulary's occurrences those kept terms
// carry (mass@1/2^s). boundary-count is the count of the 5000th term in the
// full corpus: the smaller it is, the noisier a sample's ranking near it.
// One iteration is enough: the metrics do not depend on timing.
func BenchmarkSampleOverlap(b *testing.B) {
	docs := synthDocs(rand.New(rand.NewPCG(5, 5)), 400_000, 100_000)
	c, err := analyzeAll(b.Context(), SliceDocs(docs), 100_000, nil, Options{})
	if err != nil {
		b.Fatal(err)
	}
	docs = nil
	for b.Loop() {
		full := mustCount(c, 0)
		exact := full.rank(DefaultVocabSize)
		b.ReportMetric(float64(c.tokens), "tokens")
		b.ReportMetric(float64(full.distinct()), "candidates")
		b.ReportMetric(float64(exact[len(exact)-1].Count), "boundary-count")
		for s := 1; s <= 6; s++ {
			o, mass := vocabOverlap(exact, mustCount(c, s).rank(DefaultVocabSize))
			b.ReportMetric(o, fmt.Sprintf("overlap@1/%d", 1<<s))
			b.ReportMetric(mass, fmt.Sprintf("mass@1/%d", 1<<s))
		}
	}
}

// vocabOverlap is the share of exact's terms that are in sampled, and the
// share of exact's total count that they carry.
func vocabOverlap(exact, sampled []Term) (terms, mass float64) {
	in := map[string]bool{}
	for _, t := range sampled {
		in[t.Term] = true
	}
	var n, kept, total int64
	for _, t := range exact {
		total += t.Count
		if in[t.Term] {
			n++
			kept += t.Count
		}
	}
	if len(exact) == 0 {
		return 1, 1
	}
	return float64(n) / float64(len(exact)), float64(kept) / float64(total)
}

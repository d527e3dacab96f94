package bow

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func benchDocs(n int) []Doc { return synthDocs(rand.New(rand.NewPCG(1, 1)), n, n/4+1) }

// BenchmarkAnalyze: tokenise + tag + stem, tokens/s, by corpus size and workers.
func BenchmarkAnalyze(b *testing.B) {
	if _, err := loadModel(); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{10_000, 100_000} {
		docs := benchDocs(n)
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("docs=%d/workers=%d", n, w), func(b *testing.B) {
				var tokens int64
				for b.Loop() {
					c, err := analyzeAll(SliceDocs(docs), len(docs), nil, Options{Workers: w})
					if err != nil {
						b.Fatal(err)
					}
					tokens += c.tokens
				}
				b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

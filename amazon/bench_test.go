package amazon

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cpuClock reports MB per CPU-second (whole process: GC and the readahead
// goroutine included) beside the wall-clock MB/s of b.SetBytes.
type cpuClock struct {
	b     *testing.B
	cpu0  float64
	bytes int64
}

func startCPU(b *testing.B, bytesPerOp int) *cpuClock {
	b.SetBytes(int64(bytesPerOp))
	b.ReportAllocs()
	b.ResetTimer()
	return &cpuClock{b: b, cpu0: cpuSeconds(), bytes: int64(bytesPerOp)}
}

func (c *cpuClock) report() {
	if cpu := cpuSeconds() - c.cpu0; cpu > 0 {
		c.b.ReportMetric(float64(c.bytes)*float64(c.b.N)/cpu/1e6, "MB/cpu-s")
	}
}

// benchASIN is a random ASIN, an ISBN-10 one time in five.
func benchASIN(rng *rand.Rand) string {
	const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	b := []byte("B0000000000")[:10]
	if rng.IntN(5) == 0 {
		for i := range 9 {
			b[i] = '0' + byte(rng.IntN(10))
		}
		b[9] = "0123456789X"[rng.IntN(11)]
		return string(b)
	}
	for i := 2; i < 10; i++ {
		b[i] = alnum[rng.IntN(len(alnum))]
	}
	return string(b)
}

func benchList(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("'" + benchASIN(rng) + "'")
	}
	b.WriteByte(']')
	return b.String()
}

// benchMetaLines builds n 2014-style lines shaped like the Clothing file:
// long related lists (about related ASINs per line in all), several category
// paths, titles with escapes and entities, a description to skip.
func benchMetaLines(rng *rand.Rand, n, related int) []string {
	titles := []string{
		`'Levi\'s Men&#x92;s 505 Regular Fit Jean, Rinse, 34x32'`,
		`"Women's Long Sleeve Cardigan Sweater &amp; Scarf Set"`,
		`'Girls Ballet Tutu Zebra Hot Pink'`,
		`'Caf\xc3\xa9 Racer Leather Jacket \u2013 Black'`,
	}
	lines := make([]string, n)
	for i := range lines {
		parts := []string{
			"'asin': '" + benchASIN(rng) + "'",
			"'description': 'Soft cotton blend.\\nMachine wash cold, tumble dry low.\\nImported. " + strings.Repeat("Comfortable fit for everyday wear. ", 1+rng.IntN(6)) + "'",
			"'title': " + titles[rng.IntN(len(titles))],
			fmt.Sprintf("'price': %d.%02d", 5+rng.IntN(200), rng.IntN(100)),
			"'salesRank': {'Clothing': " + fmt.Sprint(1+rng.IntN(2000000)) + "}",
			"'imUrl': 'http://ecx.images-amazon.com/images/I/41" + benchASIN(rng) + "L._SY300_.jpg'",
			"'related': {'also_bought': " + benchList(rng, related/2) +
				", 'also_viewed': " + benchList(rng, related*3/8) +
				", 'bought_together': " + benchList(rng, 2) +
				", 'buy_after_viewing': " + benchList(rng, related/8) + "}",
			"'brand': 'Levi&#39;s'",
			"'categories': [['Clothing, Shoes &amp; Jewelry', 'Men', 'Clothing', 'Jeans'], ['Clothing, Shoes &amp; Jewelry', 'Novelty, Costumes &amp; More', 'Men'], ['Clothing, Shoes & Jewelry', 'M', 'Levi\\'s']]",
		}
		rng.Shuffle(len(parts), func(a, b int) { parts[a], parts[b] = parts[b], parts[a] })
		lines[i] = "{" + strings.Join(parts, ", ") + "}"
	}
	return lines
}

// BenchmarkParseMeta measures the line parser alone, in MB/s of
// uncompressed text on one core, by the number of related ASINs per line
// (real 2014 Clothing lines carry about 40-100).
func BenchmarkParseMeta(b *testing.B) {
	for _, related := range []int{8, 64, 256} {
		b.Run(fmt.Sprintf("related=%d", related), func(b *testing.B) {
			lines := benchMetaLines(rand.New(rand.NewPCG(1, 1)), 200, related)
			raw := make([][]byte, len(lines))
			total := 0
			for i, l := range lines {
				raw[i] = []byte(l)
				total += len(l) + 1
			}
			var (
				s scanner
				r metaRec
				p Product
			)
			c := startCPU(b, total)
			for range b.N {
				for _, l := range raw {
					if err := s.parseMeta(l, &r, &p); err != nil {
						b.Fatal(err)
					}
				}
			}
			c.report()
		})
	}
}

// BenchmarkReadMeta measures the whole reader (file, gzip, lines, parse,
// deduplication) on a file of about 8 MB of uncompressed text.
func BenchmarkReadMeta(b *testing.B) {
	lines := benchMetaLines(rand.New(rand.NewPCG(1, 1)), 4000, 64)
	text := strings.Join(lines, "\n") + "\n"
	for _, compress := range []bool{false, true} {
		b.Run(fmt.Sprint("gzip=", compress), func(b *testing.B) {
			data := []byte(text)
			if compress {
				data = gz(b, text)
			}
			path := filepath.Join(b.TempDir(), "meta_Bench.json.gz")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				b.Fatal(err)
			}
			c := startCPU(b, len(text))
			for range b.N {
				st, err := ReadMeta(context.Background(), path, func(*Product) error { return nil }, nil)
				if err != nil || st.Records != int64(len(lines)) {
					b.Fatal(err, st)
				}
			}
			c.report()
		})
	}
}

func benchReviewLines(rng *rand.Rand, n, words int) []string {
	vocab := strings.Fields("the fit is great and the fabric feels soft but the color faded after one wash I would buy again size runs small comfortable jeans shirt dress \\\"perfect\\\" cheap quality")
	lines := make([]string, n)
	for i := range lines {
		var text strings.Builder
		for w := range words {
			if w > 0 {
				text.WriteByte(' ')
			}
			text.WriteString(vocab[rng.IntN(len(vocab))])
		}
		lines[i] = fmt.Sprintf(`{"reviewerID": "A%013d", "asin": "%s", "reviewerName": "J. Doe", "helpful": [%d, %d], "reviewText": "%s", "overall": %d.0, "summary": "Nice %s", "unixReviewTime": %d, "reviewTime": "09 13, 2009"}`,
			rng.Int64N(1e13), benchASIN(rng), rng.IntN(5), rng.IntN(10), text.String(), 1+rng.IntN(5), vocab[rng.IntN(len(vocab))], 1e9+rng.Int64N(4e8))
	}
	return lines
}

// BenchmarkReadReviews measures review decoding in MB/s by review length in
// words (real reviews average about 100), against encoding/json decoding
// the same fields.
func BenchmarkReadReviews(b *testing.B) {
	for _, words := range []int{20, 100, 400} {
		lines := benchReviewLines(rand.New(rand.NewPCG(1, 1)), 500, words)
		raw := make([][]byte, len(lines))
		total := 0
		for i, l := range lines {
			raw[i] = []byte(l)
			total += len(l) + 1
		}
		b.Run(fmt.Sprintf("words=%d/decoder=amazon", words), func(b *testing.B) {
			var (
				s scanner
				r reviewRec
				v Review
			)
			c := startCPU(b, total)
			for range b.N {
				for _, l := range raw {
					if err := s.parseReview(l, &r, &v, nil, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
			c.report()
		})
		b.Run(fmt.Sprintf("words=%d/decoder=encoding_json", words), func(b *testing.B) {
			var v struct {
				ASIN           string  `json:"asin"`
				ReviewerID     string  `json:"reviewerID"`
				ReviewText     string  `json:"reviewText"`
				Summary        string  `json:"summary"`
				Overall        float64 `json:"overall"`
				UnixReviewTime int64   `json:"unixReviewTime"`
			}
			c := startCPU(b, total)
			for range b.N {
				for _, l := range raw {
					if err := json.Unmarshal(l, &v); err != nil {
						b.Fatal(err)
					}
				}
			}
			c.report()
		})
		text := strings.Join(lines, "\n") + "\n"
		for _, compress := range []bool{false, true} {
			b.Run(fmt.Sprintf("words=%d/file/gzip=%v", words, compress), func(b *testing.B) {
				data := []byte(text)
				if compress {
					data = gz(b, text)
				}
				path := filepath.Join(b.TempDir(), "reviews_Bench.json.gz")
				if err := os.WriteFile(path, data, 0o644); err != nil {
					b.Fatal(err)
				}
				c := startCPU(b, total)
				for range b.N {
					for _, err := range Reviews(path, nil, nil) {
						if err != nil {
							b.Fatal(err)
						}
					}
				}
				c.report()
			})
		}
	}
}

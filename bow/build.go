package bow

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/bits"
	"runtime"
	"sync"
)

// Options configure Build, CountShard, Merge and Vectorize. The zero value
// gives the paper's setting.
type Options struct {
	// VocabSize is the number of terms kept. If 0, it is 5000 (the paper).
	VocabSize int
	// Workers is the number of tagging goroutines. If 0, GOMAXPROCS.
	// Results do not depend on it.
	Workers int
	// SampleTokens bounds the tokens the vocabulary is counted on: above it
	// the vocabulary comes from a deterministic sample of the reviews (see
	// the package doc); the vectors always count every review. If 0, it is
	// 50,000,000; if negative, the vocabulary is always exact.
	SampleTokens int64
}

const (
	// DefaultVocabSize is the vocabulary size when Options.VocabSize is 0:
	// the paper's 5000 (§4.5).
	DefaultVocabSize = 5000
	// DefaultSampleTokens is Options.SampleTokens when it is 0.
	DefaultSampleTokens = 50_000_000
	batchDocs           = 1024 // docs per work unit; any size gives the same result
)

func (o Options) vocabSize() int {
	if o.VocabSize <= 0 {
		return DefaultVocabSize
	}
	return o.VocabSize
}

func (o Options) workers() int {
	if o.Workers <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return o.Workers
}

func (o Options) sampleTokens() int64 {
	switch {
	case o.SampleTokens == 0:
		return DefaultSampleTokens
	case o.SampleTokens < 0:
		return -1
	}
	return o.SampleTokens
}

// Doc is one review: Item is the item's row in the experiment's items table.
// Docs may come in any order (review-file order, not grouped by item). Text
// is whatever the caller wants counted (the review text, perhaps with its
// summary in front).
type Doc struct {
	Item int32
	Text string
}

// Stats describe a run. All fields but Work are the same for any Workers.
type Stats struct {
	Docs   int64 // reviews read (for CountShard: of this shard)
	Tokens int64 // their tokens

	Sampled      bool  // the vocabulary was counted on a sample
	SampleLevel  int   // the sample is the reviews of level >= this (0: all)
	SampleDocs   int64 // reviews the vocabulary was counted on
	SampleTokens int64 // their tokens
	Candidates   int64 // distinct candidate terms in them

	Items           int // rows of the matrix
	ItemsKept       int // items with a non-empty vector
	ItemsNoReviews  int // dropped: no review at all
	ItemsNoVocabHit int // dropped: reviews, but no vocabulary term in them
	Hits            int64

	Work WorkStats
}

// WorkStats count work done; they depend on how reviews were spread over
// workers, so they are not part of any reproducible output.
type WorkStats struct {
	TaggedTokens int64 // tokens whose tag the perceptron computed (not memo, not lexicon)
	MemoDocs     int64 // reviews answered from a worker's cache of short texts
}

// ErrItemRange is returned for a Doc whose Item is outside [0, nItems).
var ErrItemRange = errors.New("bow: item out of range")

// corpus is every review reduced to its candidate entries, kept in the
// batches the workers filled (no copy): review d is number d%batchDocs of
// batch d/batchDocs, since every batch but the last is full.
type corpus struct {
	lex     *lexicon
	batches []*batchOut

	levelTokens [levels]int64
	docs        int64
	tokens      int64
	work        WorkStats
}

func (c *corpus) nDocs() int { return int(c.docs) }

func (c *corpus) item(d int) int32 { return c.batches[d/batchDocs].items[d%batchDocs] }

func (c *corpus) level(d int) uint8 { return c.batches[d/batchDocs].lvls[d%batchDocs] }

// doc is review d's candidate entries.
func (c *corpus) doc(d int) []uint32 {
	b, k := c.batches[d/batchDocs], d%batchDocs
	lo := 0
	if k > 0 {
		lo = b.ends[k-1]
	}
	return b.entries[lo:b.ends[k]]
}

// Sampling levels: review number i gets level = trailing zeros of a hash of
// i, capped; "level >= s" keeps a fixed pseudo-random 2^-s of the reviews,
// and nested samples for growing s.
const levels = 16

func docLevel(i int64) uint8 {
	x := uint64(i) + 0x9e3779b97f4a7c15 // splitmix64
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return uint8(min(bits.TrailingZeros64(x), levels-1))
}

// sampleLevel is the smallest level s whose reviews (level >= s) hold at
// most limit tokens: 0 (everything) when the corpus fits.
func sampleLevel(levelTokens [levels]int64, limit int64) int {
	if limit < 0 {
		return 0
	}
	var suffix [levels + 1]int64
	for l := levels - 1; l >= 0; l-- {
		suffix[l] = suffix[l+1] + levelTokens[l]
	}
	for s := 0; s < levels; s++ {
		if suffix[s] <= limit {
			return s
		}
	}
	return levels - 1
}

type batch struct {
	docs  []Doc
	index []int64 // stream index of each doc (docs may be filtered)
	out   *batchOut
}

type batchOut struct {
	items       []int32
	lvls        []uint8
	ends        []int // relative to the batch
	entries     []uint32
	levelTokens [levels]int64
	tokens      int64
}

// analyzeAll reads every doc of docs once, keeps those keep accepts (nil:
// all), and reduces them to candidate entries, in parallel and in input
// order. It looks at ctx once per batch of docs read.
func analyzeAll(ctx context.Context, docs iter.Seq2[Doc, error], nItems int, keep func(Doc) bool, opts Options) (*corpus, error) {
	m, err := loadModel()
	if err != nil {
		return nil, err
	}
	c := &corpus{lex: newLexicon()}
	nw := opts.workers()
	in := make(chan *batch, nw)
	var wg sync.WaitGroup
	works := make([]WorkStats, nw)
	for w := range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := newAnalyzer(m, c.lex)
			for b := range in {
				if ctx.Err() != nil {
					continue // drain: the caller returns the error
				}
				b.out = a.batch(b)
				b.docs = nil // the texts are not needed any more
			}
			works[w] = WorkStats{TaggedTokens: a.work.Predicted, MemoDocs: a.work.MemoDocs}
		}()
	}

	// Each batch is filled in by one worker and read after all are done,
	// in input order: no hand-off per batch beyond the input channel.
	var batches []*batch
	readErr := func() error {
		defer close(in)
		var b *batch
		i := int64(-1) // stream index, counting the docs keep refuses too
		for d, err := range docs {
			i++
			if err != nil {
				return fmt.Errorf("bow: reading review %d: %w", i, err)
			}
			if i%batchDocs == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if d.Item < 0 || int(d.Item) >= nItems {
				return fmt.Errorf("%w: review %d has item %d, want [0, %d)", ErrItemRange, i, d.Item, nItems)
			}
			if keep != nil && !keep(d) {
				continue
			}
			if b == nil {
				b = &batch{docs: make([]Doc, 0, batchDocs), index: make([]int64, 0, batchDocs)}
				batches = append(batches, b)
			}
			b.docs = append(b.docs, d)
			b.index = append(b.index, i)
			if len(b.docs) == batchDocs {
				in <- b
				b = nil
			}
		}
		if b != nil {
			in <- b
		}
		return ctx.Err() // the workers skipped batches if it is done
	}()
	wg.Wait()
	for _, w := range works {
		c.work.TaggedTokens += w.TaggedTokens
		c.work.MemoDocs += w.MemoDocs
	}
	if readErr != nil {
		return nil, readErr
	}
	if c.lex.err != nil {
		return nil, c.lex.err
	}
	for _, b := range batches {
		c.add(b.out)
	}
	return c, nil
}

func (a *analyzer) batch(b *batch) *batchOut {
	o := &batchOut{items: make([]int32, len(b.docs)), lvls: make([]uint8, len(b.docs)),
		ends: make([]int, len(b.docs))}
	for k, d := range b.docs {
		var n int
		o.entries, n = a.analyze(o.entries, d.Text)
		lvl := docLevel(b.index[k])
		o.items[k], o.lvls[k], o.ends[k] = d.Item, lvl, len(o.entries)
		o.levelTokens[lvl] += int64(n)
		o.tokens += int64(n)
	}
	return o
}

func (c *corpus) add(o *batchOut) {
	c.batches = append(c.batches, o)
	for l, n := range o.levelTokens {
		c.levelTokens[l] += n
	}
	c.docs += int64(len(o.items))
	c.tokens += o.tokens
}

// Result is the output of Build and Vectorize.
type Result struct {
	Vocab  []Term  // term id = index
	Matrix *Matrix // one row per item, dropped items empty
	Stats  Stats
}

// Build reads docs once, tags every review once, ranks the vocabulary
// (Options.SampleTokens) and counts every review's vocabulary terms into its
// item's vector. nItems is the number of rows. An error yielded by docs
// stops Build and is returned wrapped. Once ctx is done Build returns
// ctx.Err() within a batch of reviews per worker.
func Build(ctx context.Context, docs iter.Seq2[Doc, error], nItems int, opts Options) (*Result, error) {
	c, err := analyzeAll(ctx, docs, nItems, nil, opts)
	if err != nil {
		return nil, err
	}
	s := sampleLevel(c.levelTokens, opts.sampleTokens())
	tc, err := c.count(ctx, s)
	if err != nil {
		return nil, err
	}
	vocab := tc.rank(opts.vocabSize())
	res, err := c.vectorize(ctx, vocab, nItems, opts)
	if err != nil {
		return nil, err
	}
	res.Stats.Sampled = s > 0
	res.Stats.SampleLevel = s
	res.Stats.SampleDocs, res.Stats.SampleTokens = tc.docs, tc.tokens
	res.Stats.Candidates = int64(tc.distinct())
	return res, nil
}

// Vectorize reads docs once and counts every review's terms of a given
// vocabulary (from Merge) into its item's vector, and fills in each term's
// DocFreq and Surface. Errors and ctx are as for Build.
func Vectorize(ctx context.Context, docs iter.Seq2[Doc, error], nItems int, vocab []Term, opts Options) (*Result, error) {
	c, err := analyzeAll(ctx, docs, nItems, nil, opts)
	if err != nil {
		return nil, err
	}
	return c.vectorize(ctx, vocab, nItems, opts)
}

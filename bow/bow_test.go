package bow

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// handDocs is a corpus small enough to work out by hand. Reviews come in
// file order, not grouped by item; item 3 has no review.
var handDocs = []Doc{
	{0, "Soft leather and a great price."}, // JJ NN CC DT JJ NN .
	{1, "Great price!"},                    // JJ NN .
	{4, "Nice soft leather jacket &amp; warm gloves for my son's birthday."}, // see TestHandTags
	{2, "I love it."}, // PRP VBP PRP .
	{0, "The leather is soft, the price is great."}, // DT NN VBZ JJ , DT NN VBZ JJ .
}

func TestHandTags(t *testing.T) {
	tests := []struct {
		text       string
		toks, tags []string
	}{
		{text: handDocs[0].Text,
			toks: []string{"Soft", "leather", "and", "a", "great", "price", "."},
			tags: []string{"JJ", "NN", "CC", "DT", "JJ", "NN", "."}},
		{text: handDocs[2].Text,
			toks: []string{"Nice", "soft", "leather", "jacket", "&", "warm", "gloves", "for", "my", "son", "'s", "birthday", "."},
			tags: []string{"NNP", "JJ", "NN", "NN", "CC", "JJ", "NNS", "IN", "PRP$", "NN", "POS", "NN", "."}},
		{text: handDocs[4].Text,
			toks: []string{"The", "leather", "is", "soft", ",", "the", "price", "is", "great", "."},
			tags: []string{"DT", "NN", "VBZ", "JJ", ",", "DT", "NN", "VBZ", "JJ", "."}},
	}
	for _, tt := range tests {
		toks, tags, err := Tag(tt.text)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(toks, tt.toks) || !slices.Equal(tags, tt.tags) {
			t.Errorf("Tag(%q) =\n %q\n %q\nwant\n %q\n %q", tt.text, toks, tags, tt.toks, tt.tags)
		}
	}
}

// HTML entities are unescaped wherever they are, also at the first byte of a
// review (the 2014 files escape quotes and ampersands: "&quot;Great&quot;").
func TestTagUnescapesEntities(t *testing.T) {
	for _, tt := range []struct{ escaped, plain string }{
		{"&quot;Soft&quot; leather &amp; a great price.", `"Soft" leather & a great price.`},
		{"&amp; soft leather", "& soft leather"},
		{"Soft leather &amp;", "Soft leather &"},
	} {
		toks, tags, err := Tag(tt.escaped)
		if err != nil {
			t.Fatal(err)
		}
		wantToks, wantTags, _ := Tag(tt.plain)
		if !slices.Equal(toks, wantToks) || !slices.Equal(tags, wantTags) {
			t.Errorf("Tag(%q) = %q %q, want those of %q: %q %q", tt.escaped, toks, tags, tt.plain, wantToks, wantTags)
		}
	}
}

func TestHandCorpus(t *testing.T) {
	// Candidates (stems), from the tags above:
	//   doc 0 (item 0): soft/adj leather/noun "soft leather" great/adj price/noun "great price"
	//   doc 1 (item 1): great/adj price/noun "great price"
	//   doc 2 (item 4): nice/noun soft/adj leather/noun "soft leather" jacket/noun
	//                   warm/adj glove/noun "warm glove" son/noun birthday/noun
	//   doc 3 (item 2): none
	//   doc 4 (item 0): leather/noun soft/adj price/noun great/adj
	// Counts: great, leather, price, soft 3; "great price", "soft leather" 2;
	// birthday, glove, jacket, nice, son, warm, "warm glove" 1.
	res, err := Build(t.Context(), SliceDocs(handDocs), 5, Options{VocabSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	wantVocab := []Term{
		{Term: "great", Kind: Adj, Count: 3, DocFreq: 2, Surface: "great"},
		{Term: "leather", Kind: Noun, Count: 3, DocFreq: 2, Surface: "leather"},
		{Term: "price", Kind: Noun, Count: 3, DocFreq: 2, Surface: "price"},
		{Term: "soft", Kind: Adj, Count: 3, DocFreq: 2, Surface: "soft"},
		{Term: "great price", Kind: AdjNoun, Count: 2, DocFreq: 2, Surface: "great price"},
		{Term: "soft leather", Kind: AdjNoun, Count: 2, DocFreq: 2, Surface: "soft leather"},
		{Term: "birthday", Kind: Noun, Count: 1, DocFreq: 1, Surface: "birthday"},
		{Term: "glove", Kind: Noun, Count: 1, DocFreq: 1, Surface: "gloves"},
	}
	if !slices.Equal(res.Vocab, wantVocab) {
		t.Errorf("vocabulary\n got %v\nwant %v", res.Vocab, wantVocab)
	}
	tests := []struct {
		item int
		idx  []int32
		cnt  []int32
		val  []float32
	}{
		// item 0: great 2, leather 2, price 2, soft 2, the bigrams 1 each: 10 hits.
		{item: 0, idx: []int32{0, 1, 2, 3, 4, 5}, cnt: []int32{2, 2, 2, 2, 1, 1},
			val: []float32{0.2, 0.2, 0.2, 0.2, 0.1, 0.1}},
		{item: 1, idx: []int32{0, 2, 4}, cnt: []int32{1, 1, 1}, val: []float32{1. / 3, 1. / 3, 1. / 3}},
		{item: 2}, // reviews, but no candidate
		{item: 3}, // no review
		// item 4: leather, soft, "soft leather", birthday, glove.
		{item: 4, idx: []int32{1, 3, 5, 6, 7}, cnt: []int32{1, 1, 1, 1, 1},
			val: []float32{0.2, 0.2, 0.2, 0.2, 0.2}},
	}
	m := res.Matrix
	if m.Rows() != 5 || m.Dim() != 8 {
		t.Fatalf("matrix %dx%d, want 5x8", m.Rows(), m.Dim())
	}
	for _, tt := range tests {
		idx, val := m.SparseRow(tt.item)
		idx2, cnt := m.Counts(tt.item)
		if !slices.Equal(idx, tt.idx) || !slices.Equal(idx2, tt.idx) || !slices.Equal(cnt, tt.cnt) || !slices.Equal(val, tt.val) {
			t.Errorf("item %d: idx %v cnt %v val %v, want %v %v %v", tt.item, idx, cnt, val, tt.idx, tt.cnt, tt.val)
		}
	}
	st := res.Stats
	want := Stats{Docs: 5, Tokens: 7 + 3 + 13 + 4 + 10, SampleDocs: 5, SampleTokens: 37, Candidates: 13,
		Items: 5, ItemsKept: 3, ItemsNoReviews: 1, ItemsNoVocabHit: 1, Hits: 10 + 3 + 5}
	st.Work = WorkStats{}
	if st != want {
		t.Errorf("stats\n got %+v\nwant %+v", st, want)
	}
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{in: "", want: nil},
		{in: "  plain words\there \n", want: []string{"plain", "words", "here"}},
		{in: "Don't buy it's", want: []string{"Do", "n't", "buy", "it", "'s"}},
		{in: "(great!)", want: []string{"(", "great", "!", ")"}},
		{in: "$25.00 gift", want: []string{"$", "25.00", "gift"}},
		{in: "\u201cwow\u201d", want: []string{`"`, "wow", `"`}},
		{in: "The U.S. and Mr. Smith :-) ok", want: []string{"The", "U.S.", "and", "Mr.", "Smith", ":-)", "ok"}},
		{in: "they'll we're I'm", want: []string{"they", "'ll", "we", "'re", "I", "'m"}},
		// prose drops a clitic piece that has more after it: "'s," is lost.
		{in: "it's, mom's.", want: []string{"it", "mom"}},
		{in: "end.", want: []string{"end", "."}},
		// The edges of the rules: a clitic alone is a token, case folding
		// of clitics, abbreviations with a, z, A or Z at their edges.
		{in: "'s 'll n't", want: []string{"'s", "'ll", "n't"}},
		{in: "IT'S WE'RE", want: []string{"IT", "'S", "WE", "'RE"}},
		{in: "Jan. Apr. Liz. Zip. OK.", want: []string{"Jan.", "Apr.", "Liz.", "Zip.", "OK", "."}},
		{in: "a.m. A.D. z.Z.", want: []string{"a.m.", "A.D.", "z.Z."}},
	}
	for _, tt := range tests {
		if got := tokenize(nil, tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("tokenize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWordHelpers(t *testing.T) {
	tests := []struct {
		word, norm string
		trace      bool
	}{
		{word: "Leather", norm: "leather"},
		{word: "t-shirt", norm: "!HYPHEN"},
		{word: "-LRB-", norm: "-lrb-"},
		{word: "1999", norm: "!YEAR"},
		{word: "-123", norm: "!YEAR"},
		{word: "3.5", norm: "!DIGITS"},
		{word: "0", norm: "!DIGITS", trace: true},
		{word: "*T*", norm: "*t*", trace: true},
		{word: "*-12", norm: "!HYPHEN", trace: true},
		{word: "*EXP*-1", norm: "!HYPHEN", trace: true},
		{word: "**", norm: "**"},
	}
	for _, tt := range tests {
		if got := normalizeWord(tt.word); got != tt.norm {
			t.Errorf("normalizeWord(%q) = %q, want %q", tt.word, got, tt.norm)
		}
		if got := isTraceToken(tt.word); got != tt.trace {
			t.Errorf("isTraceToken(%q) = %v, want %v", tt.word, got, tt.trace)
		}
	}
	for _, tt := range []struct {
		lower string
		want  bool
	}{
		{lower: "leather", want: true}, {lower: "t-shirt", want: true}, {lower: "o'clock", want: true},
		{lower: "the", want: false}, {lower: "i've", want: false}, {lower: "3.5", want: false},
		{lower: "--", want: false}, {lower: "café", want: true},
	} {
		if got := eligible(tt.lower); got != tt.want {
			t.Errorf("eligible(%q) = %v, want %v", tt.lower, got, tt.want)
		}
	}
}

// resultBytes serialises everything reproducible in a Result.
func resultBytes(r *Result) []byte {
	var b bytes.Buffer
	for i, t := range r.Vocab {
		fmt.Fprintf(&b, "%d %q %s %d %d %q\n", i, t.Term, t.Kind, t.Count, t.DocFreq, t.Surface)
	}
	m := r.Matrix
	fmt.Fprintf(&b, "%d %d\n", m.rows, m.dim)
	for _, s := range []any{m.ptr, m.idx, m.val, m.cnt} {
		binary.Write(&b, binary.LittleEndian, s)
	}
	st := r.Stats
	st.Work = WorkStats{}
	fmt.Fprintf(&b, "%+v\n", st)
	return b.Bytes()
}

func TestWorkersIdentical(t *testing.T) {
	docs := synthDocs(rand.New(rand.NewPCG(1, 1)), 6000, 1500)
	for _, sample := range []int64{0, 40_000} {
		var first []byte
		for _, w := range []int{1, 4} {
			res, err := Build(t.Context(), SliceDocs(docs), 1500, Options{Workers: w, VocabSize: 300, SampleTokens: sample})
			if err != nil {
				t.Fatal(err)
			}
			if sample > 0 && !res.Stats.Sampled {
				t.Fatalf("SampleTokens %d: not sampled (%d tokens)", sample, res.Stats.Tokens)
			}
			b := resultBytes(res)
			if first == nil {
				first = b
			} else if !bytes.Equal(first, b) {
				t.Errorf("SampleTokens %d: 1 and %d workers differ", sample, w)
			}
		}
	}
}

func TestShardsMerge(t *testing.T) {
	docs := synthDocs(rand.New(rand.NewPCG(2, 2)), 5000, 1200)
	for _, sample := range []int64{0, 30_000} {
		opts := Options{VocabSize: 400, SampleTokens: sample, Workers: 2}
		want, err := Build(t.Context(), SliceDocs(docs), 1200, opts)
		if err != nil {
			t.Fatal(err)
		}
		var shards []*Counts
		for _, s := range []int{2, 0, 1} { // any order
			c, err := CountShard(t.Context(), SliceDocs(docs), s, 3, opts)
			if err != nil {
				t.Fatal(err)
			}
			shards = append(shards, c)
		}
		vocab, err := Merge(shards, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(vocab) != len(want.Vocab) {
			t.Fatalf("merged %d terms, want %d", len(vocab), len(want.Vocab))
		}
		for i, v := range vocab {
			w := want.Vocab[i]
			w.DocFreq, w.Surface = 0, ""
			if v != w {
				t.Fatalf("SampleTokens %d: term %d = %+v, want %+v", sample, i, v, w)
			}
		}
		got, err := Vectorize(t.Context(), SliceDocs(docs), 1200, vocab, opts)
		if err != nil {
			t.Fatal(err)
		}
		// Vectorize knows nothing of the sample; compare the rest.
		got.Stats.Sampled, got.Stats.SampleLevel = want.Stats.Sampled, want.Stats.SampleLevel
		got.Stats.SampleDocs, got.Stats.SampleTokens = want.Stats.SampleDocs, want.Stats.SampleTokens
		got.Stats.Candidates = want.Stats.Candidates
		if !bytes.Equal(resultBytes(got), resultBytes(want)) {
			t.Errorf("SampleTokens %d: Vectorize(t.Context(), Merge(3 shards)) differs from Build", sample)
		}
	}
}

func TestSampleLevel(t *testing.T) {
	lt := [levels]int64{500, 260, 120, 60, 30, 15, 8, 4, 2, 1}
	tests := []struct {
		limit int64
		want  int
	}{
		{limit: -1, want: 0}, {limit: 1000, want: 0}, {limit: 2000, want: 0},
		{limit: 999, want: 1}, {limit: 500, want: 1}, {limit: 499, want: 2},
		{limit: 100, want: 4}, {limit: 120, want: 3}, {limit: 0, want: 10},
	}
	for _, tt := range tests {
		if got := sampleLevel(lt, tt.limit); got != tt.want {
			t.Errorf("sampleLevel(limit %d) = %d, want %d", tt.limit, got, tt.want)
		}
	}
	// Levels are geometric: about half the reviews at level >= 1.
	var hist [levels]int
	for i := range int64(1 << 16) {
		hist[docLevel(i)]++
	}
	if hist[0] < 32000 || hist[0] > 33500 || hist[1] < 15800 || hist[1] > 16900 {
		t.Errorf("level histogram %v not geometric", hist)
	}
}

func TestErrors(t *testing.T) {
	boom := errors.New("disk on fire")
	failing := func(yield func(Doc, error) bool) {
		for range 3 {
			if !yield(Doc{Item: 0, Text: "fine"}, nil) {
				return
			}
		}
		yield(Doc{}, boom)
	}
	if _, err := Build(t.Context(), failing, 1, Options{}); !errors.Is(err, boom) {
		t.Errorf("reader error: got %v", err)
	}
	if _, err := Build(t.Context(), SliceDocs([]Doc{{0, "a"}, {7, "b"}}), 5, Options{}); !errors.Is(err, ErrItemRange) {
		t.Errorf("item out of range: got %v", err)
	}
	if _, err := CountShard(t.Context(), SliceDocs(nil), 3, 3, Options{}); err == nil {
		t.Error("shard 3/3 accepted")
	}
	c0, _ := CountShard(t.Context(), SliceDocs(handDocs), 0, 2, Options{})
	c1, _ := CountShard(t.Context(), SliceDocs(handDocs), 1, 2, Options{})
	for _, shards := range [][]*Counts{nil, {c0}, {c0, c0}, {c0, nil}} {
		if _, err := Merge(shards, Options{}); err == nil {
			t.Errorf("Merge of %d shards accepted", len(shards))
		}
	}
	if _, err := Merge([]*Counts{c1, c0}, Options{}); err != nil {
		t.Error(err)
	}
	if _, err := Vectorize(t.Context(), SliceDocs(handDocs), 5, []Term{{Term: "soft"}, {Term: "soft"}}, Options{}); err == nil {
		t.Error("duplicate vocabulary term accepted")
	}
	// An empty corpus is not an error: every item is dropped.
	res, err := Build(t.Context(), SliceDocs(nil), 2, Options{})
	if err != nil || len(res.Vocab) != 0 || res.Stats.ItemsNoReviews != 2 {
		t.Errorf("empty corpus: %v %+v", err, res)
	}
}

func TestWeightsSumToOne(t *testing.T) {
	docs := synthDocs(rand.New(rand.NewPCG(3, 3)), 3000, 800)
	res, err := Build(t.Context(), SliceDocs(docs), 800, Options{VocabSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	checkWeights(t, res)
}

func checkWeights(t *testing.T, res *Result) {
	t.Helper()
	m, st := res.Matrix, res.Stats
	kept := 0
	for i := range m.Rows() {
		idx, val := m.SparseRow(i)
		if len(idx) == 0 {
			continue
		}
		kept++
		sum := 0.0
		for k, v := range val {
			sum += float64(v)
			if k > 0 && idx[k] <= idx[k-1] {
				t.Fatalf("row %d: term ids not ascending: %v", i, idx)
			}
		}
		if math.Abs(sum-1) > 1e-6 {
			t.Errorf("row %d: weights sum to %v", i, sum)
		}
	}
	if kept != st.ItemsKept || st.ItemsKept+st.ItemsNoReviews+st.ItemsNoVocabHit != st.Items || st.Items != m.Rows() {
		t.Errorf("drop counts do not add up: %d rows, %d non-empty, stats %+v", m.Rows(), kept, st)
	}
}

// TestSampleOverlap: a vocabulary ranked on a sample keeps most of the
// exact one, less as the sample shrinks (figures for a large corpus:
// BenchmarkSampleOverlap), and Build picks the sample that fits.
func TestSampleOverlap(t *testing.T) {
	docs := synthDocs(rand.New(rand.NewPCG(4, 4)), 20_000, 5000)
	c, err := analyzeAll(t.Context(), SliceDocs(docs), 5000, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	exact := mustCount(c, 0).rank(500)
	prev := 1.0
	for s := 1; s <= 4; s++ {
		o, mass := vocabOverlap(exact, mustCount(c, s).rank(500))
		t.Logf("sample 1/%d: %.3f of the top 500 kept, %.3f of their occurrences", 1<<s, o, mass)
		if o > prev+0.02 || s == 1 && o < 0.85 || mass < o {
			t.Errorf("sample 1/%d: overlap %.3f (previous %.3f), mass %.3f", 1<<s, o, prev, mass)
		}
		prev = o
	}
	limit := c.tokens / 5 // fits level >= 3 (about 1/8), not level >= 2
	res, err := Build(t.Context(), SliceDocs(docs), 5000, Options{VocabSize: 500, SampleTokens: limit})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stats
	if !st.Sampled || st.SampleTokens > limit || st.SampleTokens < limit/4 || st.Docs != int64(len(docs)) {
		t.Errorf("SampleTokens %d of %d: stats %+v", limit, c.tokens, st)
	}
	if o, _ := vocabOverlap(mustCount(c, st.SampleLevel).rank(500), res.Vocab); o != 1 {
		t.Errorf("Build's vocabulary is not the level-%d sample's (overlap %.3f)", st.SampleLevel, o)
	}
}

// mustCount is corpus.count under a context that is never done.
func mustCount(c *corpus, minLevel int) *termCounts {
	tc, err := c.count(context.Background(), minLevel)
	if err != nil {
		panic(err)
	}
	return tc
}

// Build, Vectorize and CountShard stop with the context's error: at once
// when it is done before the call, and within a batch of reviews when it is
// cancelled while the reviews are read (from inside the iterator, so no
// timer is involved); the iterator is told to stop. The phases after
// reading stop too.
func TestCancel(t *testing.T) {
	const nDocs, nItems, at = 5000, 1200, 1500
	docs := synthDocs(rand.New(rand.NewPCG(3, 3)), nDocs, nItems)
	vocab, err := Build(t.Context(), SliceDocs(docs), nItems, Options{VocabSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]func(context.Context, iter.Seq2[Doc, error]) error{
		"Build": func(ctx context.Context, d iter.Seq2[Doc, error]) error {
			_, err := Build(ctx, d, nItems, Options{})
			return err
		},
		"Vectorize": func(ctx context.Context, d iter.Seq2[Doc, error]) error {
			_, err := Vectorize(ctx, d, nItems, vocab.Vocab, Options{})
			return err
		},
		"CountShard": func(ctx context.Context, d iter.Seq2[Doc, error]) error {
			_, err := CountShard(ctx, d, 1, 3, Options{})
			return err
		},
	}
	for name, call := range calls {
		for _, early := range []bool{true, false} {
			ctx, cancel := context.WithCancel(t.Context())
			if early {
				cancel()
			}
			yielded, stopped := 0, false
			counted := func(yield func(Doc, error) bool) {
				for _, d := range docs {
					if yielded++; yielded == at {
						cancel()
					}
					if !yield(d, nil) {
						stopped = true
						return
					}
				}
			}
			err := call(ctx, counted)
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%s (cancelled before: %v): %v, want context.Canceled", name, early, err)
			}
			if limit := map[bool]int{true: 1, false: at + batchDocs}[early]; yielded > limit || !stopped {
				t.Errorf("%s (cancelled before: %v): %d reviews read (at most %d), iterator stopped: %v",
					name, early, yielded, limit, stopped)
			}
		}
	}

	// After reading: counting and vectorising.
	c, err := analyzeAll(t.Context(), SliceDocs(docs), nItems, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.count(done, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("count: %v, want context.Canceled", err)
	}
	if _, err := c.vectorize(done, vocab.Vocab, nItems, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("vectorize: %v, want context.Canceled", err)
	}
}

// Build, Vectorize and CountShard read their documents in one pass: they
// start exactly one loop over the iterator.
func TestOnePass(t *testing.T) {
	docs := synthDocs(rand.New(rand.NewPCG(4, 4)), 3000, 700)
	loops := 0
	once := func(yield func(Doc, error) bool) {
		loops++
		for _, d := range docs {
			if !yield(d, nil) {
				return
			}
		}
	}
	res, err := Build(t.Context(), once, 700, Options{VocabSize: 40})
	if err != nil || loops != 1 {
		t.Fatalf("Build: %d loops, %v", loops, err)
	}
	if _, err := Vectorize(t.Context(), once, 700, res.Vocab, Options{}); err != nil || loops != 2 {
		t.Fatalf("Vectorize: %d loops in all, %v", loops, err)
	}
	if _, err := CountShard(t.Context(), once, 0, 2, Options{}); err != nil || loops != 3 {
		t.Fatalf("CountShard: %d loops in all, %v", loops, err)
	}
}

// A term's surface form is its most frequent one, ties going to the
// smallest string whatever order the workers saw them in.
func TestSurfaceTie(t *testing.T) {
	for _, docs := range [][]Doc{
		{{0, "Great price."}, {1, "Great prices."}},
		{{0, "Great prices."}, {1, "Great price."}},
	} {
		res, err := Build(t.Context(), SliceDocs(docs), 2, Options{VocabSize: 4})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(res.Vocab, func(v Term) bool { return v.Term == "price" })
		if i < 0 || res.Vocab[i].Surface != "price" {
			t.Errorf("docs %q: vocabulary %v, want price with surface \"price\" (a tie of 1 and 1)", docs, res.Vocab)
		}
	}
}

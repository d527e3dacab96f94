package bow

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
)

// Kind is a term's part of speech.
type Kind uint8

const (
	Noun    Kind = iota // noun unigram (NN, NNS, NNP, NNPS)
	Adj                 // adjective unigram (JJ, JJR, JJS)
	AdjNoun             // adjective-noun bigram of adjacent tokens
)

func (k Kind) String() string {
	switch k {
	case Noun:
		return "noun"
	case Adj:
		return "adj"
	case AdjNoun:
		return "adj_noun"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Term is one vocabulary entry; its id is its index in the vocabulary.
type Term struct {
	// Term is the stemmed form, "leather" or "soft leather" (a bigram's two
	// stems joined by one space; unigrams never contain a space).
	Term string
	// Kind: AdjNoun for bigrams; for a unigram, Noun if it was tagged as a
	// noun at least as often as as an adjective, else Adj (the same stem
	// tagged either way is one term).
	Kind Kind
	// Count is the number of occurrences in the reviews the vocabulary was
	// ranked on: all of them, or the sample (Stats.Sampled).
	Count int64
	// DocFreq is the number of items whose reviews contain the term, over
	// all reviews (an item's document is all its reviews). Set by Build and
	// Vectorize, 0 from Merge.
	DocFreq int64
	// Surface is the most frequent unstemmed lower-case form over all
	// reviews, ties broken by string ("soft leather" for "soft leather").
	// Set by Build and Vectorize, empty from Merge.
	Surface string
}

// termCounts are candidate counts keyed by lexicon ids, for ranking.
type termCounts struct {
	lex          *lexicon
	nouns, adjs  []int64          // by stem id
	pairs        map[uint64]int64 // adjective stem << 32 | noun stem
	docs, tokens int64
}

// count tallies the candidates of the reviews of level >= minLevel, looking
// at ctx once per batch of reviews.
func (c *corpus) count(ctx context.Context, minLevel int) (*termCounts, error) {
	tc := &termCounts{lex: c.lex, nouns: make([]int64, len(c.lex.stems)),
		adjs: make([]int64, len(c.lex.stems)), pairs: map[uint64]int64{}}
	stemOf := c.lex.stemOf
	for d := range c.nDocs() {
		if d%batchDocs == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if int(c.level(d)) < minLevel {
			continue
		}
		tc.docs++
		es := c.doc(d)
		for k, e := range es {
			s := stemOf[e>>entryShift]
			if e&entryAdj != 0 {
				tc.adjs[s]++
			} else {
				tc.nouns[s]++
			}
			if e&entryPair != 0 {
				tc.pairs[uint64(s)<<32|uint64(stemOf[es[k+1]>>entryShift])]++
			}
		}
	}
	for l := minLevel; l < levels; l++ {
		tc.tokens += c.levelTokens[l]
	}
	return tc, nil
}

func (tc *termCounts) distinct() int {
	n := len(tc.pairs)
	for s := range tc.nouns {
		if tc.nouns[s]+tc.adjs[s] > 0 {
			n++
		}
	}
	return n
}

func (tc *termCounts) rank(v int) []Term {
	r := ranker{v: v}
	stems := tc.lex.stems
	for s := range tc.nouns {
		if n := tc.nouns[s] + tc.adjs[s]; n > 0 {
			r.offer(n, tc.nouns[s], func() string { return stems[s] })
		}
	}
	for k, n := range tc.pairs {
		r.offer(n, 0, func() string { return stems[k>>32] + " " + stems[uint32(k)] })
	}
	return r.terms()
}

// ranker keeps the v best candidates by count, ties broken by term, so the
// result is the same whatever order candidates are offered in. Term strings
// are only built for candidates that can still enter.
type ranker struct {
	v int
	h rankHeap
}

type rankItem struct {
	count, nouns int64
	term         string
}

// worse orders candidates: fewer occurrences, then larger term.
func worse(a, b rankItem) bool {
	return a.count < b.count || a.count == b.count && a.term > b.term
}

type rankHeap []rankItem // worst on top

func (h rankHeap) Len() int           { return len(h) }
func (h rankHeap) Less(i, j int) bool { return worse(h[i], h[j]) }
func (h rankHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rankHeap) Push(x any)        { *h = append(*h, x.(rankItem)) }
func (h *rankHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (r *ranker) offer(count, nouns int64, term func() string) {
	if len(r.h) < r.v {
		heap.Push(&r.h, rankItem{count, nouns, term()})
		return
	}
	if r.v == 0 || count < r.h[0].count {
		return
	}
	it := rankItem{count, nouns, term()}
	if worse(it, r.h[0]) {
		return
	}
	r.h[0] = it
	heap.Fix(&r.h, 0)
}

func (r *ranker) terms() []Term {
	items := slices.Clone(r.h)
	slices.SortFunc(items, func(a, b rankItem) int {
		if c := cmp.Compare(b.count, a.count); c != 0 {
			return c
		}
		return strings.Compare(a.term, b.term)
	})
	out := make([]Term, len(items))
	for i, it := range items {
		k := AdjNoun
		if !strings.Contains(it.term, " ") {
			k = Adj
			if 2*it.nouns >= it.count {
				k = Noun
			}
		}
		out[i] = Term{Term: it.term, Kind: k, Count: it.count}
	}
	return out
}

// Counts are one shard's candidate counts: plain data, for a table.
type Counts struct {
	Shard, Shards int
	Docs, Tokens  int64 // reviews of the shard and their tokens
	// LevelTokens are the shard's tokens by sampling level (length 16).
	LevelTokens []int64
	Rows        []CountRow // sorted by Term, then Level
}

// CountRow counts one candidate term in the shard's reviews of one
// sampling level.
type CountRow struct {
	Term  string // as Term.Term
	Level int32  // sampling level of the reviews counted
	Count int64  // occurrences
	Nouns int64  // of which tagged as a noun (unigrams; 0 for bigrams)
}

// CountShard counts the candidate terms of the reviews of shard shard of
// nShards: those whose Item % nShards == shard. Every process reads the
// whole stream once; merging all shards with Merge gives the vocabulary
// Build gives. Sharding by item keeps an item's document whole in one
// shard. Errors and ctx are as for Build.
func CountShard(ctx context.Context, docs iter.Seq2[Doc, error], shard, nShards int, opts Options) (*Counts, error) {
	if nShards < 1 || shard < 0 || shard >= nShards {
		return nil, fmt.Errorf("bow: shard %d/%d: want 0 <= shard < shards", shard, nShards)
	}
	keep := func(d Doc) bool { return int(d.Item)%nShards == shard }
	c, err := analyzeAll(ctx, docs, math.MaxInt32, keep, opts)
	if err != nil {
		return nil, err
	}
	type key struct {
		a, b  int32 // stems; b = -1 for unigrams
		level uint8
	}
	rows := map[key]*CountRow{}
	stemOf := c.lex.stemOf
	for d := range c.nDocs() {
		if d%batchDocs == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		lvl := c.level(d)
		es := c.doc(d)
		for k, e := range es {
			s := stemOf[e>>entryShift]
			r := rows[key{s, -1, lvl}]
			if r == nil {
				r = &CountRow{}
				rows[key{s, -1, lvl}] = r
			}
			r.Count++
			if e&entryAdj == 0 {
				r.Nouns++
			}
			if e&entryPair != 0 {
				k2 := key{s, stemOf[es[k+1]>>entryShift], lvl}
				if rows[k2] == nil {
					rows[k2] = &CountRow{}
				}
				rows[k2].Count++
			}
		}
	}
	out := &Counts{Shard: shard, Shards: nShards, Docs: c.docs, Tokens: c.tokens,
		LevelTokens: c.levelTokens[:], Rows: make([]CountRow, 0, len(rows))}
	stems := c.lex.stems
	for k, r := range rows {
		r.Term = stems[k.a]
		if k.b >= 0 {
			r.Term += " " + stems[k.b]
		}
		r.Level = int32(k.level)
		out.Rows = append(out.Rows, *r)
	}
	slices.SortFunc(out.Rows, func(a, b CountRow) int {
		if c := strings.Compare(a.Term, b.Term); c != 0 {
			return c
		}
		return cmp.Compare(a.Level, b.Level)
	})
	return out, nil
}

// Merge ranks the vocabulary from the counts of all nShards shards (each
// exactly once, in any order): the same terms, kinds and counts as Build.
func Merge(shards []*Counts, opts Options) ([]Term, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("bow: merge: no shards")
	}
	n := shards[0].Shards
	seen := make([]bool, max(n, 0))
	var lt [levels]int64
	for i, s := range shards {
		if s == nil || s.Shards != n || s.Shard < 0 || s.Shard >= n || seen[s.Shard] {
			return nil, fmt.Errorf("bow: merge: counts %d are not one of shards 0..%d exactly once", i, n-1)
		}
		seen[s.Shard] = true
		if len(s.LevelTokens) != levels {
			return nil, fmt.Errorf("bow: merge: shard %d/%d has %d level totals, want %d", s.Shard, n, len(s.LevelTokens), levels)
		}
		for l, t := range s.LevelTokens {
			lt[l] += t
		}
	}
	if len(shards) != n {
		return nil, fmt.Errorf("bow: merge: %d shards of %d", len(shards), n)
	}
	minLevel := int32(sampleLevel(lt, opts.sampleTokens()))
	type agg struct{ count, nouns int64 }
	sums := map[string]*agg{}
	for _, s := range shards {
		for _, r := range s.Rows {
			if r.Level < minLevel {
				continue
			}
			a := sums[r.Term]
			if a == nil {
				a = &agg{}
				sums[r.Term] = a
			}
			a.count += r.Count
			a.nouns += r.Nouns
		}
	}
	rk := ranker{v: opts.vocabSize()}
	for t, a := range sums {
		if a.count > 0 {
			rk.offer(a.count, a.nouns, func() string { return t })
		}
	}
	return rk.terms(), nil
}

// SliceDocs iterates over docs, for tests and small inputs.
func SliceDocs(docs []Doc) iter.Seq2[Doc, error] {
	return func(yield func(Doc, error) bool) {
		for _, d := range docs {
			if !yield(d, nil) {
				return
			}
		}
	}
}

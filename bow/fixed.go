package bow

import (
	"context"
	"iter"
	"strings"
)

// Coverage says how much of a corpus' text a fixed vocabulary holds
// (VectorizeFixed): occurrences of candidate terms (nouns, adjectives and
// adjective-noun bigrams, what a vocabulary is ranked on) over every
// review.
type Coverage struct {
	// Candidates counts every candidate occurrence.
	Candidates int64
	// Outside counts those of terms not in the fixed vocabulary.
	Outside int64
	// OwnOutside counts those outside the vocabulary of the same size the
	// corpus would rank for itself (Build's, counted exactly): the share a
	// vocabulary of that size leaves out anyway.
	OwnOutside int64
}

// OutsideShare is Outside / Candidates (0 for no candidates), and
// OwnOutsideShare OwnOutside / Candidates.
func (c Coverage) OutsideShare() float64    { return share(c.Outside, c.Candidates) }
func (c Coverage) OwnOutsideShare() float64 { return share(c.OwnOutside, c.Candidates) }

func share(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// VectorizeFixed is Vectorize over a vocabulary fixed by an earlier run
// (the job's vocabulary_from), which also counts the candidate terms of
// every review to say how much of today's text falls outside it. It costs
// one counting pass more than Vectorize, as Build's exact vocabulary does.
func VectorizeFixed(ctx context.Context, docs iter.Seq2[Doc, error], nItems int, vocab []Term, opts Options) (*Result, Coverage, error) {
	c, err := analyzeAll(ctx, docs, nItems, nil, opts)
	if err != nil {
		return nil, Coverage{}, err
	}
	tc, err := c.count(ctx, 0)
	if err != nil {
		return nil, Coverage{}, err
	}
	var cov Coverage
	for s := range tc.nouns {
		cov.Candidates += tc.nouns[s] + tc.adjs[s]
	}
	for _, n := range tc.pairs {
		cov.Candidates += n
	}
	cov.Outside, cov.OwnOutside = cov.Candidates, cov.Candidates
	for _, t := range tc.rank(len(vocab)) {
		cov.OwnOutside -= t.Count
	}
	ids := tc.lex.stemIDs
	for _, t := range vocab {
		a, b, pair := strings.Cut(t.Term, " ")
		sa, ok := ids[a]
		if !ok {
			continue
		}
		if !pair {
			cov.Outside -= tc.nouns[sa] + tc.adjs[sa]
			continue
		}
		if sb, ok := ids[b]; ok {
			cov.Outside -= tc.pairs[uint64(sa)<<32|uint64(sb)]
		}
	}
	res, err := c.vectorize(ctx, vocab, nItems, opts)
	return res, cov, err
}

// ParseKind is Kind.String's inverse, false for another string.
func ParseKind(s string) (Kind, bool) {
	for _, k := range []Kind{Noun, Adj, AdjNoun} {
		if k.String() == s {
			return k, true
		}
	}
	return 0, false
}

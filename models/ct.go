package models

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"monomer/graph"
)

// CT is the paper's Category Tree baseline (Sec. IV-B): a matrix of link
// counts between subcategories from the training positives; (x, y) is
// predicted related iff sub(y) is among the top fraction of subcategories
// most often linked from sub(x). It has no features and no training beyond
// counting.
type CT struct {
	top    float64
	sub    []int32
	names  []string
	counts []CTCount  // by source, then rank
	ranks  [][]ctRank // per source subcategory, sorted by target
	linked []int32    // per source: number of linked target subcategories
	kept   []int32    // per source: ceil(top * linked)
}

type ctRank struct {
	target, rank int32
}

// CTCount is one cell of the count matrix with its ranking, the table form
// of a fitted CT.
type CTCount struct {
	Source, Target         int32  // subcategory indices
	SourceName, TargetName string // subcategory names
	Links                  int64  // training positives from Source to Target
	// Rank is Target's 1-based place among the subcategories linked from
	// Source: by Links descending, ties by name ascending, then index.
	Rank int32
	// Kept is true when Rank is within the top fraction: pairs from Source
	// to Target are predicted related.
	Kept bool
}

// ErrCTInput is wrapped by FitCT's errors.
var ErrCTInput = errors.New("models: ct: invalid input")

// FitCT counts the related pairs of train (pairs with Label false are
// ignored; Split is not looked at, so pass only the training pairs) between
// subcategories: sub[i] is item i's subcategory, an index into subNames.
// top is the kept fraction, in (0, 1]; 0 means 0.5 (the paper's "top 50%").
// From a source subcategory linked to L target subcategories, the first
// ceil(top*L) in rank are kept (at least one; half of 3 keeps 2).
func FitCT(sub []int32, subNames []string, train []graph.Pair, top float64) (*CT, error) {
	if top == 0 {
		top = DefaultCTTop
	}
	if !(top > 0 && top <= 1) {
		return nil, fmt.Errorf("models: ct: top fraction %v outside (0, 1]: %w", top, ErrCTInput)
	}
	s := len(subNames)
	for i, c := range sub {
		if c < 0 || int(c) >= s {
			return nil, fmt.Errorf("models: ct: item %d: subcategory %d outside [0,%d): %w", i, c, s, ErrCTInput)
		}
	}
	cells := map[[2]int32]int64{}
	for i, p := range train {
		if !p.Label {
			continue
		}
		if p.X < 0 || int(p.X) >= len(sub) || p.Y < 0 || int(p.Y) >= len(sub) {
			return nil, fmt.Errorf("models: ct: training pair %d (%d, %d): item outside [0,%d): %w", i, p.X, p.Y, len(sub), ErrCTInput)
		}
		cells[[2]int32{sub[p.X], sub[p.Y]}]++
	}
	m := &CT{
		top: top, sub: sub, names: subNames,
		counts: make([]CTCount, 0, len(cells)),
		ranks:  make([][]ctRank, s),
		linked: make([]int32, s),
		kept:   make([]int32, s),
	}
	for c, n := range cells {
		m.counts = append(m.counts, CTCount{
			Source: c[0], Target: c[1], SourceName: subNames[c[0]], TargetName: subNames[c[1]], Links: n,
		})
	}
	// The map's order is random; this sort fixes every position.
	slices.SortFunc(m.counts, func(a, b CTCount) int {
		return cmp.Or(
			cmp.Compare(a.Source, b.Source),
			cmp.Compare(b.Links, a.Links),
			cmp.Compare(a.TargetName, b.TargetName),
			cmp.Compare(a.Target, b.Target),
		)
	})
	for lo := 0; lo < len(m.counts); {
		src := m.counts[lo].Source
		hi := lo
		for hi < len(m.counts) && m.counts[hi].Source == src {
			hi++
		}
		l := int32(hi - lo)
		// The small slack keeps products like 0.3*10 = 3.0000000000000004
		// from rounding up to 4.
		keep := int32(math.Ceil(top*float64(l) - 1e-9))
		keep = min(max(keep, 1), l)
		m.linked[src], m.kept[src] = l, keep
		r := make([]ctRank, 0, l)
		for i := lo; i < hi; i++ {
			c := &m.counts[i]
			c.Rank = int32(i-lo) + 1
			c.Kept = c.Rank <= keep
			r = append(r, ctRank{target: c.Target, rank: c.Rank})
		}
		slices.SortFunc(r, func(a, b ctRank) int { return cmp.Compare(a.target, b.target) })
		m.ranks[src] = r
		lo = hi
	}
	return m, nil
}

// Top returns the kept fraction in use.
func (m *CT) Top() float64 { return m.top }

// Counts returns the count matrix's non-zero cells, ordered by source
// subcategory index, then rank. The slice is the model's: do not modify it.
func (m *CT) Counts() []CTCount { return m.counts }

// Score predicts each pair. A counting model has no probability: prob is 1
// for a predicted related pair and 0 otherwise (so ErrorRate's > 0.5 rule
// reproduces the prediction, and LogLikelihood charges a mistake its clamp).
// dist is the rank fraction (r-1)/L of sub(y) among the L subcategories
// linked from sub(x), in [0, 1), and 1 when sub(y) is not linked from sub(x)
// at all: smaller is more compatible, as for the other models' distances,
// and -dist is a usable AUC score. Items must be in range of the sub slice
// given to FitCT. The pairs are scored on all cores.
func (m *CT) Score(pairs []graph.Pair) (dist, prob []float64) {
	dist = make([]float64, len(pairs))
	prob = make([]float64, len(pairs))
	forRuns(len(pairs), 0, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dist[i], prob[i] = m.score(pairs[i])
		}
	})
	return dist, prob
}

// score is Score of one pair.
func (m *CT) score(p graph.Pair) (dist, prob float64) {
	src, dst := m.sub[p.X], m.sub[p.Y]
	r := m.ranks[src]
	j, ok := slices.BinarySearchFunc(r, dst, func(e ctRank, t int32) int { return cmp.Compare(e.target, t) })
	if !ok {
		return 1, 0
	}
	if r[j].rank <= m.kept[src] {
		prob = 1
	}
	return float64(r[j].rank-1) / float64(m.linked[src]), prob
}

// NewCT rebuilds a fitted CT from its table form, the cells Counts
// returned (by source, then rank, each with Rank and Kept set), so a model
// fitted in one place scores the same elsewhere: sub and subNames as given
// to FitCT. The kept fraction is in the cells' Kept; Top returns 0.
func NewCT(sub []int32, subNames []string, counts []CTCount) (*CT, error) {
	s := int32(len(subNames))
	for i, c := range sub {
		if c < 0 || c >= s {
			return nil, fmt.Errorf("models: ct: item %d: subcategory %d outside [0,%d): %w", i, c, s, ErrCTInput)
		}
	}
	m := &CT{
		sub: sub, names: subNames, counts: counts,
		ranks:  make([][]ctRank, s),
		linked: make([]int32, s),
		kept:   make([]int32, s),
	}
	for lo := 0; lo < len(counts); {
		src := counts[lo].Source
		if src < 0 || src >= s || m.ranks[src] != nil {
			return nil, fmt.Errorf("models: ct: cell %d: source %d out of range or out of order: %w", lo, src, ErrCTInput)
		}
		hi := lo
		for hi < len(counts) && counts[hi].Source == src {
			hi++
		}
		r := make([]ctRank, 0, hi-lo)
		for i := lo; i < hi; i++ {
			c := counts[i]
			if c.Target < 0 || c.Target >= s || c.Rank != int32(i-lo)+1 || (c.Kept && m.kept[src] != c.Rank-1) {
				return nil, fmt.Errorf("models: ct: cell %d (%d, %d): target out of range, rank %d out of order or kept after a dropped one: %w",
					i, src, c.Target, c.Rank, ErrCTInput)
			}
			if c.Kept {
				m.kept[src]++
			}
			r = append(r, ctRank{target: c.Target, rank: c.Rank})
		}
		slices.SortFunc(r, func(a, b ctRank) int { return cmp.Compare(a.target, b.target) })
		m.ranks[src], m.linked[src] = r, int32(hi-lo)
		lo = hi
	}
	return m, nil
}

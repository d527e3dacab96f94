package synth

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// The shares by which day 2 of a world differs from day 1 (Day): a
// nightly catalogue's change, a few per cent a day.
const (
	// DayNewItems is the share of day 1's Regular items added as new
	// Regular items (with an image, or reviews in a text world).
	DayNewItems = 0.03
	// DayRemovedItems is the share of day 1's Regular items gone on day 2,
	// with every planted edge at either end.
	DayRemovedItems = 0.02
	// DayNewPairs is the share of day 1's also_bought and also_viewed
	// edges between items both days have that day 2 adds between such
	// items (beside the new items' own edges).
	DayNewPairs = 0.02
)

// Day changes w, a day-1 world fresh from NewWorld, into day day (1: no
// change; 2: the only other). Day 2 removes round(DayRemovedItems·R) of
// the R Regular items, adds round(DayNewItems·R) new ones drawn from the
// same planted structure (a day-1 item's subcategory, latent, notion,
// features, reviews and out-edges as NewWorld draws them, on streams of
// indices day 1 never used), and adds round(DayNewPairs·E) planted edges
// of each of also_bought and also_viewed between the items both days
// have, E that graph's edges between them; bought_together follows the
// new also_bought lists. Every other item, edge and draw is day 1's: an
// item both days have keeps its ASIN, features and reviews. The result
// depends on the seed alone (the streams are per item), not GOMAXPROCS.
func (w *World) Day(day int) error {
	switch day {
	case 1:
		return nil
	case 2:
	default:
		return fmt.Errorf("%w: day %d: only days 1 and 2 are generated", ErrConfig, day)
	}
	if w.base != 0 {
		return fmt.Errorf("%w: the world is already day 2", ErrConfig)
	}
	c := w.Config
	w.base = len(w.Items)
	var regular []int32
	for _, s := range w.scoped {
		regular = append(regular, s...)
	}
	slices.Sort(regular)
	r := itemStream(w.seed, purposeDay, 0).Rand
	nGone := int(math.Round(DayRemovedItems * float64(len(regular))))
	nNew := int(math.Round(DayNewItems * float64(len(regular))))
	w.gone = make([]bool, w.base+nNew)
	for _, k := range r.Perm(len(regular))[:nGone] {
		w.gone[regular[k]] = true
	}
	// New items: a day-1 item's subcategory (so subcategory sizes keep
	// their law), latent and notion as in NewWorld; ASINs past every
	// index day 1 named (items, orphans, missing list entries).
	d := c.LatentDim
	tc := c.textCat()
	for k := range nNew {
		i := w.base + k
		like := w.Items[regular[r.IntN(len(regular))]]
		it := Item{Kind: Regular, Top: like.Top, Subcat: like.Subcat, HasImage: true,
			ASIN: w.codec.asin(w.base + w.orphanSpace() + 4*w.base + k)}
		lr := itemStream(w.seed, purposeLatent, i).Rand
		z := make([]float32, d)
		for j := range z {
			z[j] = float32(w.Subcats[it.Subcat].mean[j] + c.ItemSpread*lr.NormFloat64())
		}
		it.Notion = w.notion(z)
		cr := itemStream(w.seed, purposeCounts, i).Rand
		if tc == nil {
			it.Reviews = logNormalCount(cr, c.ReviewsMean, c.ReviewsSpread, 2000)
			w.records = append(w.records, int32(i))
		} else {
			it.Reviews = 1 + logNormalCount(cr, c.ReviewsMean-1, c.ReviewsSpread, 1999)
		}
		w.Items = append(w.Items, it)
		w.latent = append(w.latent, z...)
	}
	w.records = slices.DeleteFunc(w.records, func(i int32) bool { return i >= 0 && w.gone[i] })
	for t := range w.scoped {
		keep := w.scoped[t][:0]
		sub := w.scopedSub[t][:0]
		for k, i := range w.scoped[t] {
			if !w.gone[i] {
				keep, sub = append(keep, i), append(sub, w.scopedSub[t][k])
			}
		}
		w.scoped[t], w.scopedSub[t] = keep, sub
	}
	for i := w.base; i < len(w.Items); i++ {
		it := w.Items[i]
		w.scoped[it.Top] = append(w.scoped[it.Top], int32(i))
		w.scopedSub[it.Top] = append(w.scopedSub[it.Top], int32(it.Subcat))
	}
	for _, gi := range []int{gAB, gAV} {
		old := slices.DeleteFunc(slices.Clone(w.edges[gi]), func(e Edge) bool { return w.gone[e.Src] || w.gone[e.Dst] })
		w.setEdges(gi, old)
		added := w.newPairs(gi, int(math.Round(DayNewPairs*float64(len(old)))))
		fresh := w.plantRange(gi, w.base, len(w.Items))
		all := slices.Concat(old, added, fresh)
		slices.SortStableFunc(all, func(a, b Edge) int { return cmp.Compare(a.Src, b.Src) })
		w.setEdges(gi, all)
	}
	w.plantBT()
	return nil
}

// Gone reports whether item i is not in the world's files (removed on
// day 2); its index stays so that every other item keeps its streams.
func (w *World) Gone(i int) bool { return w.gone != nil && w.gone[i] }

// newPairs draws n new planted edges of graph gi between day-1 items that
// are not gone, as plant does (an endpoint near the source's target), on
// one stream of the day: sources uniform over the kept Regular day-1
// items, a pair kept only if it is no edge yet.
func (w *World) newPairs(gi, n int) []Edge {
	graph := AlsoBought
	if gi == gAV {
		graph = AlsoViewed
	}
	var src []int32
	for _, s := range w.scoped {
		for _, i := range s {
			if int(i) < w.base {
				src = append(src, i)
			}
		}
	}
	slices.Sort(src)
	r := itemStream(w.seed, purposeDay, 1+gi).Rand
	have := map[Edge]bool{}
	for _, e := range w.edges[gi] {
		have[e] = true
	}
	var out []Edge
	target := make([]float64, w.Config.LatentDim)
	for tries := 0; len(out) < n && tries < 100*n+100; tries++ {
		x := src[r.IntN(len(src))]
		target = w.Target(graph, int(x), target)
		y := w.endpoint(r, int(x), target, func(y int32) bool { return int(y) >= w.base || have[Edge{x, y}] })
		if y < 0 {
			continue
		}
		have[Edge{x, y}] = true
		out = append(out, Edge{x, y})
	}
	return out
}

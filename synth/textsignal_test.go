package synth

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"monomer/graph"
)

// wordShares returns, for the planted graph g within top, the mean shared
// word share of related pairs and of as many degree-preserving rewired
// negatives (graph.Rewire, as the negatives stage draws them). A pair's
// share is Σ_w min(p_x(w), p_y(w)) over the review vocabulary (topic and
// filler nouns and adjectives), p the item's word frequencies: the mass of
// the two bag-of-words vectors that coincides, 0 to 1.
func wordShares(t *testing.T, w *World, g string, top int) (related, rewired float64, n int) {
	t.Helper()
	vocab := map[string]bool{}
	for _, tp := range topics {
		for _, v := range append(append([]string{}, tp.nouns...), tp.adjs...) {
			vocab[v] = true
		}
	}
	for _, v := range append(append([]string{}, fillerNouns...), fillerAdjs...) {
		vocab[v] = true
	}
	index := make([]int32, len(w.Items))
	var sub []int32
	var freq []map[string]float64
	for i, it := range w.Items {
		index[i] = -1
		if it.Kind != Regular || it.Top != top || it.Reviews == 0 {
			continue
		}
		counts := map[string]float64{}
		total := 0.0
		for _, text := range w.ReviewTexts(i) {
			for _, tok := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
				if vocab[tok] {
					counts[tok]++
					total++
				}
			}
		}
		if total == 0 {
			continue
		}
		for k := range counts {
			counts[k] /= total
		}
		index[i] = int32(len(sub))
		sub = append(sub, int32(it.Subcat))
		freq = append(freq, counts)
	}
	var pos []graph.Edge
	for _, e := range w.Edges(g) {
		if x, y := index[e.Src], index[e.Dst]; x >= 0 && y >= 0 {
			pos = append(pos, graph.Edge{Src: x, Dst: y})
		}
	}
	neg, _, err := graph.Rewire(context.Background(), pos, sub, rand.New(rand.NewPCG(1, 1)), graph.RewireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mean := func(es []graph.Edge) float64 {
		s := 0.0
		for _, e := range es {
			for k, a := range freq[e.Src] {
				s += min(a, freq[e.Dst][k])
			}
		}
		return s / float64(len(es))
	}
	return mean(pos), mean(neg), len(pos)
}

// TestTextSignal: reviews of items related by also_bought share words more
// than rewired negatives do, because a share of each item's sentences is
// about what it is bought with (pairedShare, eq. 5b of the package doc).
// Measured at seed 1 (related / rewired): Men also_bought 0.178 / 0.148,
// also_viewed 0.201 / 0.149; Women also_bought 0.172 / 0.138, also_viewed
// 0.187 / 0.146. Without the paired sentences also_bought was 0.134 / 0.133
// (Men) and 0.134 / 0.124 (Women). Real Men reviews: 0.518 / 0.393 (issue
// 11), a ratio of 1.32. The test asks for a margin of 0.025 and a ratio of
// 1.15.
func TestTextSignal(t *testing.T) {
	cfg, err := Scale("tiny")
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWorld(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	for top, name := range []string{"Men", "Women"} {
		for _, g := range []string{AlsoBought, AlsoViewed} {
			rel, neg, n := wordShares(t, w, g, top)
			t.Logf("%s %s: shared word share %.3f related, %.3f rewired (%d pairs)", name, g, rel, neg, n)
			if rel < neg+0.025 || rel < 1.15*neg {
				t.Errorf("%s %s: related pairs share %.3f of their words, rewired ones %.3f: want 0.025 more and 1.15 times", name, g, rel, neg)
			}
		}
	}
}

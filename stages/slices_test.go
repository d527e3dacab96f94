package stages

import (
	"math"
	"slices"
	"testing"

	"monomer/graph"
	"monomer/schema"
)

// TestSlices: evaluate's slices of a hand-made test set, worked out by
// hand; every slice kind's pairs add up to the test set.
func TestSlices(t *testing.T) {
	// Subcategories A (items 0-2), B (3, 4), C (5). Mean features: A (1, 0),
	// B (0, 3), C (3, 4).
	it := &items{asin: []string{"a0", "a1", "a2", "b3", "b4", "c5"}, sub: []int32{0, 0, 0, 1, 1, 2}, subName: []string{"A", "B", "C"}}
	feat := &dense{rows: 6, dim: 2, data: []float32{0, 0, 2, 0, 1, 0, 0, 2, 0, 4, 3, 4}}
	p := func(x, y int32, l bool, s graph.Split) graph.Pair { return graph.Pair{X: x, Y: y, Label: l, Split: s} }
	// Training: items 0-3 seen (4 and 5 cold); positive degrees 0:2, 1:2,
	// 3:2, 2:0.
	train := []graph.Pair{p(0, 1, true, graph.Train), p(0, 3, true, graph.Train), p(1, 3, true, graph.Train), p(2, 3, false, graph.Train)}
	test := []graph.Pair{
		p(0, 4, true, graph.Test),  // cold, A → B, degree 2
		p(1, 2, true, graph.Test),  // warm, A → A, 2
		p(2, 1, false, graph.Test), // warm, A → A, 0
		p(3, 5, true, graph.Test),  // cold, B → C, 2
		p(2, 5, false, graph.Test), // cold, A → C, 0
		p(0, 3, false, graph.Test), // warm, A → B, 2
		p(3, 0, true, graph.Test),  // warm, B → A, 2
		p(1, 0, false, graph.Test), // warm, A → A, 2
	}
	// Right, wrong, right, wrong, wrong, right, right, wrong.
	prob := []float64{0.9, 0.4, 0.2, 0.3, 0.6, 0.1, 0.8, 0.7}
	labels := make([]bool, len(test))
	for i, q := range test {
		labels[i] = q.Label
	}
	ts, err := experimentSlices(append(slices.Clone(train), test...), test, it, feat)
	if err != nil {
		t.Fatal(err)
	}
	var got schema.SlicesCols
	ts.add(&got, "e", "lmt", labels, prob, prob)
	nan, r10, r20 := math.NaN(), math.Sqrt(10), math.Sqrt(20)
	want := []struct {
		slice, group string
		pairs, pos   int64
		err, auc     float64
		het          float64
	}{
		{"cold", "cold", 3, 2, 2.0 / 3, 0.5, nan},
		{"cold", "warm", 5, 2, 2.0 / 5, 5.0 / 6, nan},
		// Degrees in order 0 0 2 2 2 2 2 2: the quartiles' bounds are the
		// 2nd, 4th and 6th, 0, 2 and 2.
		{"query_degree", "q1: degree 0-0", 2, 0, 0.5, nan, nan},
		{"query_degree", "q2: degree 2-2", 6, 4, 0.5, 0.75, nan},
		{"query_degree", "q3: no pairs", 0, 0, nan, nan, nan},
		{"query_degree", "q4: no pairs", 0, 0, nan, nan, nan},
		{"category_pair", "A → A", 3, 1, 2.0 / 3, 0.5, 0},
		{"category_pair", "A → B", 2, 1, 0, 1, r10},
		{"category_pair", "A → C", 1, 0, 1, nan, r20},
		{"category_pair", "B → A", 1, 1, 0, nan, r10},
		{"category_pair", "B → C", 1, 1, 1, nan, r10},
	}
	same := func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) || math.Abs(a-b) < 1e-12 }
	if len(got.Group) != len(want) {
		t.Fatalf("%d rows %v, want %d", len(got.Group), got.Group, len(want))
	}
	total := map[string]int64{}
	for i, w := range want {
		if got.Slice[i] != w.slice || got.Group[i] != w.group || got.Pairs[i] != w.pairs || got.Positives[i] != w.pos ||
			!same(got.Error[i], w.err) || !same(got.AUC[i], w.auc) || !same(got.Heterogeneity[i], w.het) || got.Model[i] != "lmt" {
			t.Errorf("row %d: %s %q %d pairs %d positive, error %v AUC %v heterogeneity %v; want %+v", i, got.Slice[i], got.Group[i],
				got.Pairs[i], got.Positives[i], got.Error[i], got.AUC[i], got.Heterogeneity[i], w)
		}
		total[got.Slice[i]] += got.Pairs[i]
	}
	for s, n := range total {
		if n != int64(len(test)) {
			t.Errorf("slice %s: %d pairs, the test set has %d", s, n, len(test))
		}
	}
}

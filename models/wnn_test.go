package models

import (
	"errors"
	"slices"
	"testing"

	"monomer/graph"
)

// TestWNNChecksPanic: the checks that guard WNN's unchecked loops stop a
// product that would read outside x's row, and rows whose values do not
// match their columns (the columns themselves prepare checks:
// TestPrepareRejectsBadRows).
func TestWNNChecksPanic(t *testing.T) {
	w2 := make([]float64, 8)
	ix, vx := []int32{1, 4, 7}, []float32{1, 2, 3}
	for name, fn := range map[string]func(){
		"position past x's row": func() { crossSum(w2, ix, vx, []uint16{0, 3}, []float32{1, 1}) },
		"negative position":     func() { subProducts(w2, 1, ix, vx, []int32{-1, 2}, []float32{1, 1}) },
		"values short":          func() { crossSum(w2, ix, vx, []uint16{0, 2}, []float32{1}) },
		"x's values short":      func() { crossSum(w2, ix, vx[:2], []uint16{0}, []float32{1}) },
		"row's values short":    func() { weightedSum(w2, ix, vx[:2], false) },
		"squares' values short": func() { addSquares(w2, 1, ix, vx[:1]) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			fn()
		}()
	}
	// In range, they sum: w2 = 1 everywhere, x = (1, 2, 3) at 1, 4, 7.
	for i := range w2 {
		w2[i] = 1
	}
	if got := crossSum(w2, ix, vx, []uint16{0, 2}, []float32{2, 1}); got != 1*2+3*1 {
		t.Errorf("crossSum = %v, want 5", got)
	}
	if got := weightedSum(w2, ix, vx, true); got != 1+4+9 {
		t.Errorf("weightedSum = %v, want 14", got)
	}
	// addSquares on seven columns: a block of four and a tail of three, each
	// column added h·v² once.
	acc := make([]float64, 10)
	addSquares(acc, 0.5, []int32{0, 2, 3, 4, 6, 7, 9}, []float32{1, 2, 3, 4, 5, 6, 7})
	if want := []float64{0.5, 0, 2, 4.5, 8, 0, 12.5, 18, 0, 24.5}; !slices.Equal(acc, want) {
		t.Errorf("addSquares: %v, want %v", acc, want)
	}
}

// TestPrepareRejectsBadRows: prepare refuses sparse rows that the kernels
// (WNN's unchecked loops among them) would index outside W: a column out
// of [0, dim), columns not strictly ascending, values missing.
func TestPrepareRejectsBadRows(t *testing.T) {
	pairs := []graph.Pair{{X: 0, Y: 1, Label: true}, {X: 1, Y: 2}}
	for name, bad := range map[string]struct {
		idx []int32
		val []float32
	}{
		"column past dim":    {[]int32{1, 8}, []float32{1, 1}},
		"negative column":    {[]int32{-1, 2}, []float32{1, 1}},
		"columns descending": {[]int32{3, 2}, []float32{1, 1}},
		"column repeated":    {[]int32{2, 2}, []float32{1, 1}},
		"value missing":      {[]int32{1, 2}, []float32{1}},
	} {
		feat := &sparseFeat{dim: 8, idx: [][]int32{{0}, {1, 3}, {2}}, val: [][]float32{{1}, {1, 1}, {1}}}
		feat.idx[1], feat.val[1] = bad.idx, bad.val
		if _, _, err := prepare(feat, 8, pairs, "train"); !errors.Is(err, ErrInput) {
			t.Errorf("%s: prepare error %v, want ErrInput", name, err)
		}
	}
}

package models

import "testing"

// TestWNNChecksPanic: the checks that guard WNN's unchecked loops stop a
// product or a row that would read outside x's row or the weights.
func TestWNNChecksPanic(t *testing.T) {
	w2 := make([]float64, 8)
	ix, vx := []int32{1, 4, 7}, []float32{1, 2, 3}
	for name, fn := range map[string]func(){
		"position past x's row": func() { crossSum(w2, ix, vx, []uint16{0, 3}, []float32{1, 1}) },
		"negative position":     func() { subProducts(w2, 1, ix, vx, []int32{-1, 2}, []float32{1, 1}) },
		"values short":          func() { crossSum(w2, ix, vx, []uint16{0, 2}, []float32{1}) },
		"x's values short":      func() { crossSum(w2, ix, vx[:2], []uint16{0}, []float32{1}) },
		"column past w":         func() { crossSum(w2[:7], ix, vx, []uint16{0}, []float32{1}) },
		"row's column past w":   func() { weightedSum(w2[:7], ix, vx, true) },
		"row's negative column": func() { addSquares(w2, 1, []int32{-1, 3}, []float32{1, 1}) },
		"row's values short":    func() { weightedSum(w2, ix, vx[:2], false) },
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
}

package schema

import (
	"math"
	"path/filepath"
	"testing"
)

// The compared tables: x as float64, and as float32 for a type change.
type cmp64 struct {
	ID []string  `col:"id"`
	X  []float64 `col:"x"`
}

type cmp32 struct {
	ID []string  `col:"id"`
	X  []float32 `col:"x"`
}

func TestCompare(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name    string
		b       []float64
		float32 bool
		tol     float64
		differ  bool
		row     int64
		detail  string
		largest float64
	}{
		{name: "same", b: []float64{1, nan, 0}, row: -1},
		{name: "nan equals nan, -0 differs from 0", b: []float64{1, nan, math.Copysign(0, -1)}, differ: true, row: 2},
		{name: "first row wins", b: []float64{1.5, 1, 1}, differ: true, row: 0},
		{name: "within tolerance", b: []float64{1 + 1e-9, nan, 0}, tol: 1e-6, row: -1, largest: 1e-9},
		{name: "beyond tolerance", b: []float64{2, nan, 0}, tol: 1e-6, differ: true, row: 0, largest: 0.5},
		{name: "more rows", b: []float64{1, nan, 0, 4}, differ: true, row: -1, detail: "3 rows vs 4 (the first 3 are equal)"},
		{name: "column type", float32: true, differ: true, row: -1, detail: "column 1 is x float64 vs x float32"},
	}
	dir := t.TempDir()
	pa := filepath.Join(dir, "a.parquet")
	if _, err := Write(pa, cmp64{ID: []string{"a", "b", "c"}, X: []float64{1, nan, 0}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		pb := filepath.Join(dir, "b.parquet")
		var err error
		if tt.float32 {
			_, err = Write(pb, cmp32{ID: []string{"a", "b", "c"}, X: []float32{1, 2, 3}})
		} else {
			ids := []string{"a", "b", "c", "d"}[:len(tt.b)]
			_, err = Write(pb, cmp64{ID: ids, X: tt.b})
		}
		if err != nil {
			t.Fatal(err)
		}
		d, err := Compare(pa, pb, tt.tol)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if d.Differ() != tt.differ || d.Row != tt.row || d.Detail != tt.detail || math.Abs(d.Largest-tt.largest) > 1e-12 {
			t.Errorf("%s: got %+v", tt.name, d)
		}
	}
	if _, err := Compare(pa, filepath.Join(dir, "missing.parquet"), 0); err == nil {
		t.Error("missing table: no error")
	}
}

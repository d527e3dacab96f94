package schema

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
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
		d, err := Compare(t.Context(), pa, pb, tt.tol)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if d.Differ() != tt.differ || d.Row != tt.row || d.Detail != tt.detail || math.Abs(d.Largest-tt.largest) > 1e-12 {
			t.Errorf("%s: got %+v", tt.name, d)
		}
	}
	if _, err := Compare(t.Context(), pa, filepath.Join(dir, "missing.parquet"), 0); err == nil {
		t.Error("missing table: no error")
	}
}

// TestCompareAcrossRowGroups compares tables cut into different row groups
// (7 and 5 rows: chunks that start at other rows on each side), so the
// cells compared sit at other chunk offsets, and the first difference is
// the earliest row of any column, not the first column's.
func TestCompareAcrossRowGroups(t *testing.T) {
	const n = 30
	rows := func() cmp64 {
		var c cmp64
		for i := range n {
			c.ID = append(c.ID, fmt.Sprintf("row %d", i))
			c.X = append(c.X, float64(i))
		}
		return c
	}
	dir := t.TempDir()
	pa, pb := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")
	if _, err := write(pa, rows(), 7); err != nil {
		t.Fatal(err)
	}
	b := rows()
	if _, err := write(pb, b, 5); err != nil {
		t.Fatal(err)
	}
	if d, err := Compare(t.Context(), pa, pb, 0); err != nil || d.Differ() {
		t.Fatalf("same rows in other groups: %+v, %v", d, err)
	}
	// Row 9 differs in both columns: id, the first, is named.
	b.X[13], b.ID[9], b.X[9], b.X[20] = 13.5, "zz", 9.25, 40
	if _, err := write(pb, b, 5); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tol  float64
		want TableDiff
	}{
		// Bitwise: the first row of any column with a difference.
		{0, TableDiff{Row: 9, Column: "id", A: `"row 9"`, B: `"zz"`, LargestRow: -1}},
		// With a tolerance, every cell is seen: row 20's 20 vs 40 is the
		// largest relative difference (0.5; row 13's is 0.5/13.5).
		{1e-6, TableDiff{Row: 9, Column: "id", A: `"row 9"`, B: `"zz"`, Largest: 0.5, LargestRow: 20, LargestColumn: "x", LargestA: "20", LargestB: "40"}},
	} {
		d, err := Compare(t.Context(), pa, pb, tc.tol)
		if err != nil {
			t.Fatal(err)
		}
		if *d != tc.want {
			t.Errorf("tol %g: %+v, want %+v", tc.tol, *d, tc.want)
		}
	}
}

// TestCursor walks a column of several chunks (ReadTable gives one per
// RowGroupRows rows, so only tables of over a million rows have several),
// an empty chunk among them, and finds each row's chunk and offset.
func TestCursor(t *testing.T) {
	var chunks []arrow.Array
	next := int32(0)
	for _, n := range []int{3, 0, 4, 1} {
		b := array.NewInt32Builder(memory.DefaultAllocator)
		for range n {
			b.Append(next)
			next++
		}
		chunks = append(chunks, b.NewArray())
		b.Release()
	}
	ch := arrow.NewChunked(arrow.PrimitiveTypes.Int32, chunks)
	defer ch.Release()
	c := newCursor(ch)
	for r := range int64(next) {
		a, i := c.at(r)
		if got := a.(*array.Int32).Value(i); got != int32(r) || i >= a.Len() {
			t.Fatalf("row %d: offset %d of a chunk of %d holds %d", r, i, a.Len(), got)
		}
	}
}

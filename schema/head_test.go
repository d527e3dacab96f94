package schema

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

type headCols struct {
	ID []string    `col:"id"`
	X  []float64   `col:"x"`
	L  [][]float32 `col:"l"`
}

// TestHead: the first n rows across row groups, in order, cut at the n-th;
// every row with n < 0; the footer's count and schema first, also for no
// rows.
func TestHead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.parquet")
	w, err := NewWriter[headCols](path, 4) // row groups of 4: 4, 4, 2
	if err != nil {
		t.Fatal(err)
	}
	var want headCols
	for i := range 10 {
		want.ID = append(want.ID, fmt.Sprint("r", i))
		want.X = append(want.X, float64(i)/3)
		want.L = append(want.L, []float32{float32(i), 0.5})
	}
	if err := w.Append(want); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{0, 1, 4, 5, 10, 11, -1} {
		var ids, cells []string
		var rows int64 = -2
		err := Head(t.Context(), path, n,
			func(r int64, sc *arrow.Schema) error {
				rows = r
				if sc.NumFields() != 3 || sc.Field(2).Name != "l" {
					t.Errorf("n=%d: schema %v", n, sc)
				}
				return nil
			},
			func(rec arrow.RecordBatch) error {
				for r := range int(rec.NumRows()) {
					ids = append(ids, CellRaw(rec.Column(0), r))
					cells = append(cells, CellText(rec.Column(1), r)+" "+CellText(rec.Column(2), r))
				}
				return nil
			})
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		k := 10
		if n >= 0 {
			k = int(min(n, 10))
		}
		if rows != 10 || !slices.Equal(ids, want.ID[:k]) {
			t.Errorf("n=%d: rows %d, ids %v", n, rows, ids)
		}
		if k > 4 && cells[4] != "1.3333333333333333 [4,0.5]" {
			t.Errorf("n=%d: row 4 %q", n, cells[4])
		}
	}
}

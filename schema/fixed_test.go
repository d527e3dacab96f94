package schema

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// A fixed column is written as fixed_size_list<T>[d], d its rows' length,
// and reads back through ReadAll and ReadVectors; rows of two lengths are
// refused, naming the column and the row; a table of no rows is written
// (its vectors list<T>) and reads back empty.
func TestFixedSizeListColumn(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "v.parquet")
	want := ExportVectorsCols{ID: []string{"a", "b", "c"},
		QueryVector: [][]float32{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}},
		ItemVector:  [][]float32{{-1, 0, 1}, {2, 3, 4}, {0, 0, 0}},
		QueryOffset: []float64{0.5, 1.5, 2.5}}
	if _, err := Write(p, want); err != nil {
		t.Fatal(err)
	}
	tb, err := Open(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"query_vector", "item_vector"} {
		f, _ := tb.Schema().FieldsByName(name)
		l, ok := f[0].Type.(*arrow.FixedSizeListType)
		if !ok || l.Len() != 3 || l.Elem().ID() != arrow.FLOAT32 {
			t.Errorf("%s: type %s, want fixed_size_list<float>[3]", name, f[0].Type)
		}
	}
	tb.Release()
	got, err := ReadAll[ExportVectorsCols](t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.ID {
		for j := range 3 {
			if got.QueryVector[i][j] != want.QueryVector[i][j] || got.ItemVector[i][j] != want.ItemVector[i][j] {
				t.Fatalf("row %d: read %v %v, wrote %v %v", i, got.QueryVector[i], got.ItemVector[i], want.QueryVector[i], want.ItemVector[i])
			}
		}
	}
	if got.QueryOffset[2] != 2.5 || got.ID[1] != "b" {
		t.Errorf("read %v %v", got.ID, got.QueryOffset)
	}

	bad := want
	bad.ItemVector = [][]float32{{1, 2, 3}, {1, 2}, {1, 2, 3}}
	_, err = Write(filepath.Join(dir, "bad.parquet"), bad)
	if err == nil || !strings.Contains(err.Error(), "column item_vector row 1: 2 values, row 0 has 3") {
		t.Errorf("rows of two lengths: %v", err)
	}

	empty := filepath.Join(dir, "empty.parquet")
	if n, err := Write(empty, ExportVectorsCols{}); err != nil || n != 0 {
		t.Fatalf("a table of no rows: %d rows, %v", n, err)
	}
	if got, err := ReadAll[ExportVectorsCols](t.Context(), empty); err != nil || len(got.ID) != 0 {
		t.Fatalf("reading a table of no rows: %v, %v", got.ID, err)
	}
}

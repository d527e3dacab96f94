package schema

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
)

// everyType has a column of each type Of supports.
type everyType struct {
	S    []string    `col:"s"`
	D    []string    `col:"d,dict"`
	B    []bool      `col:"b"`
	I8   []int8      `col:"i8"`
	I32  []int32     `col:"i32"`
	I64  []int64     `col:"i64"`
	F32  []float32   `col:"f32"`
	F64  []float64   `col:"f64"`
	LI32 [][]int32   `col:"li32"`
	LI64 [][]int64   `col:"li64"`
	LF32 [][]float32 `col:"lf32"`
	LF64 [][]float64 `col:"lf64"`
}

// everyTypeRows gives row i values that name i in every column, so a row
// lost or moved shows at its place; lists have 0 to 3 elements.
func everyTypeRows(n int) everyType {
	var c everyType
	for i := range n {
		k := i % 4
		c.S = append(c.S, fmt.Sprintf("row %d", i))
		c.D = append(c.D, fmt.Sprintf("d%d", i%3))
		c.B = append(c.B, i%3 == 0)
		c.I8 = append(c.I8, int8(i))
		c.I32 = append(c.I32, int32(-i))
		c.I64 = append(c.I64, int64(i)<<33)
		c.F32 = append(c.F32, float32(i)+0.25)
		c.F64 = append(c.F64, float64(i)/3)
		li32, li64, lf32, lf64 := make([]int32, k), make([]int64, k), make([]float32, k), make([]float64, k)
		for j := range k {
			li32[j], li64[j], lf32[j], lf64[j] = int32(i+j), int64(i-j), float32(i*j), float64(i)+float64(j)/8
		}
		c.LI32, c.LI64, c.LF32, c.LF64 = append(c.LI32, li32), append(c.LI64, li64), append(c.LF32, lf32), append(c.LF64, lf64)
	}
	return c
}

// TestRowGroupBoundaries writes a table of every column type across many
// row groups (Write's cut, in groups of 7 rather than RowGroupRows so it
// takes milliseconds) and through the streaming Writer, and reads it back
// row for row, whole and one group at a time: a row lost, doubled or
// moved at a group boundary fails here.
func TestRowGroupBoundaries(t *testing.T) {
	const n, group = 52, 7 // 7 full groups and one of 3
	want := everyTypeRows(n)
	dir := t.TempDir()
	stream := func(p string) (int64, error) {
		w, err := NewWriter[everyType](p, group)
		if err != nil {
			return 0, err
		}
		for lo := 0; lo < n; lo += 5 {
			if err := w.Append(sliceRows(want, lo, min(n, lo+5))); err != nil {
				return 0, err
			}
		}
		return w.Close()
	}
	for name, writeIt := range map[string]func(string) (int64, error){
		"write":  func(p string) (int64, error) { return write(p, want, group) },
		"stream": stream,
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name+".parquet")
			if rows, err := writeIt(p); rows != n || err != nil {
				t.Fatalf("wrote %d rows, %v; want %d", rows, err, n)
			}
			rdr, err := file.OpenParquetFile(p, false)
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int64
			for rg := range rdr.NumRowGroups() {
				md := rdr.MetaData().RowGroup(rg)
				sizes = append(sizes, md.NumRows())
				// Only the column tagged dict is dictionary-encoded.
				for c := range md.NumColumns() {
					cc, err := md.ColumnChunk(c)
					if err != nil {
						t.Fatal(err)
					}
					if name := cc.PathInSchema().String(); cc.HasDictionaryPage() != (name == "d") {
						t.Errorf("row group %d column %s: dictionary page %v", rg, name, cc.HasDictionaryPage())
					}
				}
			}
			rdr.Close()
			if fmt.Sprint(sizes) != "[7 7 7 7 7 7 7 3]" {
				t.Errorf("row groups of %v rows, want 7 of 7 and one of 3", sizes)
			}

			tbl, err := Open(t.Context(), p)
			if err != nil {
				t.Fatal(err)
			}
			defer tbl.Release()
			_, s, _ := layout(reflect.TypeFor[everyType]())
			var whole everyType
			v := reflect.ValueOf(&whole).Elem()
			for k := range s.NumFields() {
				col, err := tbl.read(s.Field(k))
				if err != nil {
					t.Fatal(err)
				}
				v.Field(k).Set(reflect.ValueOf(col))
			}
			sameRows(t, "whole table", whole, want, 0)

			lo := 0
			for b, err := range Batches[everyType](context.Background(), p) {
				if err != nil {
					t.Fatal(err)
				}
				sameRows(t, fmt.Sprintf("row group from row %d", lo), b, sliceRows(want, lo, min(n, lo+len(b.S))), lo)
				lo += len(b.S)
			}
			if lo != n {
				t.Errorf("Batches gave %d rows, want %d", lo, n)
			}
		})
	}
}

func sliceRows(c everyType, lo, hi int) everyType {
	v, out := reflect.ValueOf(c), reflect.New(reflect.TypeFor[everyType]()).Elem()
	for f := range v.NumField() {
		out.Field(f).Set(v.Field(f).Slice(lo, hi))
	}
	return out.Interface().(everyType)
}

// sameRows reports the first row and column where got differs from want;
// base is the table row of got's first row.
func sameRows(t *testing.T, what string, got, want everyType, base int) {
	t.Helper()
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for f := range g.NumField() {
		name := reflect.TypeFor[everyType]().Field(f).Tag.Get("col")
		gc, wc := g.Field(f), w.Field(f)
		for i := range min(gc.Len(), wc.Len()) {
			a, b := gc.Index(i).Interface(), wc.Index(i).Interface()
			// Empty and nil lists are the same rows.
			if !reflect.DeepEqual(a, b) && fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("%s: row %d column %s is %v, want %v (a row lost or moved at a group boundary?)", what, base+i, name, a, b)
			}
		}
		if gc.Len() != wc.Len() {
			t.Fatalf("%s: column %s has %d rows, want %d", what, name, gc.Len(), wc.Len())
		}
	}
}

// TestBowRowGroups: a bag of words is written in row groups of 65,536 rows
// (BowCols.groupRows), so that its lists decode on more cores than it has
// list columns, and reads back row for row.
func TestBowRowGroups(t *testing.T) {
	const n = 1<<16 + 5
	var c BowCols
	for i := range n {
		k := i % 3
		c.ASIN = append(c.ASIN, fmt.Sprintf("B%09d", i))
		ids, ws, cs := make([]int32, k), make([]float32, k), make([]int32, k)
		for j := range k {
			ids[j], ws[j], cs[j] = int32(i%4999+j), float32(j+1)/4, int32(j+1)
		}
		c.TermIDs, c.Weights, c.Counts = append(c.TermIDs, ids), append(c.Weights, ws), append(c.Counts, cs)
		c.ItemIdx = append(c.ItemIdx, int32(i))
	}
	path := filepath.Join(t.TempDir(), "bow.parquet")
	if _, err := Write(path, c); err != nil {
		t.Fatal(err)
	}
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	groups := pf.NumRowGroups()
	first := pf.MetaData().RowGroup(0).NumRows()
	pf.Close()
	if groups != 2 || first != 1<<16 {
		t.Fatalf("%d row groups, the first of %d rows; want 2, the first of 65536", groups, first)
	}
	got, err := ReadAll[BowCols](context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.TermIDs, c.TermIDs) || !reflect.DeepEqual(got.Weights, c.Weights) ||
		!reflect.DeepEqual(got.Counts, c.Counts) || !reflect.DeepEqual(got.ItemIdx, c.ItemIdx) || !reflect.DeepEqual(got.ASIN, c.ASIN) {
		t.Fatal("the bag of words read back differs")
	}
}

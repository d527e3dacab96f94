package schema

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// TestReadCells: the catalogue tables monomer writes come back cell by
// cell across row groups and batches, a column the file lacks has no
// cells, and other columns are not read.
func TestReadCells(t *testing.T) {
	const n = cellBatchRows + 77
	var c CatalogueItemsCols
	for i := range n {
		id := string(rune('a'+i%26)) + strings.Repeat("x", i%5)
		c.ID = append(c.ID, id)
		c.Title = append(c.Title, "t"+id)
		c.Brand = append(c.Brand, "")
		c.Categories = append(c.Categories, [][]string{{"A", id}, {"B"}}[:1+i%2])
	}
	path := filepath.Join(t.TempDir(), "items.parquet")
	if _, err := write(path, c, 1000); err != nil {
		t.Fatal(err)
	}
	var ids []string
	var cats [][][]string
	var kinds []CellKind
	rows, err := ReadCells(context.Background(), path, []string{"categories", "nope", "id"}, func(b *CellBatch) error {
		if b.Row != int64(len(ids)) {
			t.Fatalf("batch at row %d after %d rows", b.Row, len(ids))
		}
		if b.Cols[1].Kind != NoCells || len(b.Cols[1].Text) > 0 {
			t.Errorf("a missing column has cells: %+v", b.Cols[1])
		}
		ids = append(ids, b.Cols[2].Text[:b.Rows]...)
		cats = append(cats, b.Cols[0].Nested[:b.Rows]...)
		return nil
	}, func(k []CellKind) error { kinds = k; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if rows != n || !reflect.DeepEqual(ids, c.ID) || !reflect.DeepEqual(cats, c.Categories) {
		t.Errorf("read %d rows; ids equal %v, categories equal %v", rows, reflect.DeepEqual(ids, c.ID), reflect.DeepEqual(cats, c.Categories))
	}
	if !reflect.DeepEqual(kinds, []CellKind{NestedCells, NoCells, TextCells}) {
		t.Errorf("kinds %v", kinds)
	}
}

// TestReadCellsTypes: what pandas and pyarrow write for the same cells
// (integer ids, large strings, dictionaries, nulls, a list of strings)
// reads as text and lists; a float column or a non-Parquet file is
// refused.
func TestReadCellsTypes(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "title", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "brand", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
		{Name: "categories", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "price", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{7, -12}, nil)
	b.Field(1).(*array.LargeStringBuilder).Append("Shoe")
	b.Field(1).AppendNull()
	db := b.Field(2).(*array.BinaryDictionaryBuilder)
	db.AppendString("Acme")
	db.AppendNull()
	lb := b.Field(3).(*array.ListBuilder)
	lb.Append(true)
	lb.ValueBuilder().(*array.StringBuilder).AppendValues([]string{"A", "B"}, nil)
	lb.AppendNull()
	b.Field(4).(*array.Float64Builder).AppendValues([]float64{1, 2}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "pandas.parquet")
	writeRecord(t, path, rec)
	ok := func([]CellKind) error { return nil }
	var got [][]any
	_, err := ReadCells(context.Background(), path, []string{"id", "title", "brand", "categories"}, func(b *CellBatch) error {
		for i := range b.Rows {
			got = append(got, []any{b.Cols[0].Text[i], b.Cols[1].Text[i], b.Cols[1].Null[i], b.Cols[2].Text[i], b.Cols[3].List[i]})
		}
		return nil
	}, ok)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{"7", "Shoe", false, "Acme", []string{"A", "B"}}, {"-12", "", true, "", []string(nil)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := ReadCells(context.Background(), path, []string{"price"}, func(*CellBatch) error { return nil }, ok); !errors.Is(err, ErrCells) || !strings.Contains(err.Error(), "column price is float64") {
		t.Errorf("a float column: %v", err)
	}
	text := filepath.Join(t.TempDir(), "items.csv")
	os.WriteFile(text, []byte("id\n1\n"), 0o644)
	if _, err := ReadCells(context.Background(), text, []string{"id"}, func(*CellBatch) error { return nil }, ok); !errors.Is(err, ErrCells) {
		t.Errorf("a CSV file: %v", err)
	}
}

// TestReadVectorsCatalogueID: a table keyed by id (a catalogue's) reads;
// asin wins over it, so a table that had both reads as before.
func TestReadVectorsCatalogueID(t *testing.T) {
	type byID struct {
		_         keyed
		ID        []string    `col:"id"`
		Embedding [][]float32 `col:"embedding"`
	}
	type both struct {
		_         keyed
		ID        []string    `col:"id"`
		ASIN      []string    `col:"asin"`
		Embedding [][]float32 `col:"embedding"`
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name, want string
		cols       any
	}{
		{"id", "id", byID{ID: []string{"x"}, Embedding: [][]float32{{1}}}},
		{"both", "asin", both{ID: []string{"x"}, ASIN: []string{"y"}, Embedding: [][]float32{{1}}}},
	} {
		path := filepath.Join(dir, tc.name+".parquet")
		var err error
		switch c := tc.cols.(type) {
		case byID:
			_, err = Write(path, c)
		case both:
			_, err = Write(path, c)
		}
		if err != nil {
			t.Fatal(err)
		}
		info, err := ReadVectors(context.Background(), path, func(*VectorBatch) error { return nil })
		if err != nil || info.IDColumn != tc.want {
			t.Errorf("%s: id column %q (%v), want %s", tc.name, info.IDColumn, err, tc.want)
		}
	}
}

// writeRecord writes rec as a Parquet file with pqarrow's own writer and
// defaults, the way another Arrow tool would, its Arrow schema stored.
func writeRecord(t *testing.T, path string, rec arrow.RecordBatch) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, nil, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

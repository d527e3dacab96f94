package schema

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"
)

func pairsCols(n int) PairsCols {
	x := make([]string, n)
	y := make([]string, n)
	label := make([]int8, n)
	split := make([]string, n)
	xi := make([]int32, n)
	yi := make([]int32, n)
	for i := range n {
		x[i] = fmt.Sprintf("B%09d", i)
		y[i] = fmt.Sprintf("B%09d", (i*7919)%n)
		label[i] = int8(i % 2)
		split[i] = []string{"train", "valid", "test"}[i%3]
		xi[i], yi[i] = int32(i), int32((i*7919)%n)
	}
	return PairsCols{X: x, Y: y, Label: label, Split: split, XIdx: xi, YIdx: yi}
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bow.parquet")
	asin := []string{"A1", "A2", "0123456789X"}
	ids := [][]int32{{0, 3}, {}, {1}}
	w := [][]float32{{0.25, 0.75}, {}, {1}}
	idx := []int32{0, 1, 2}
	cnt := [][]int32{{1, 3}, {}, {2}}
	if _, err := Write(p, BowCols{ASIN: asin, TermIDs: ids, Weights: w, ItemIdx: idx, Counts: cnt}); err != nil {
		t.Fatal(err)
	}
	tb, err := Open(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Release()
	gotA, _ := tb.Strings("asin")
	gotI, _ := tb.Int32Lists("term_ids")
	gotW, _ := tb.Float32Lists("weights")
	if !slices.Equal(gotA, asin) || len(gotI) != 3 || !slices.Equal(gotI[0], ids[0]) || len(gotI[1]) != 0 || !slices.Equal(gotW[2], w[2]) {
		t.Fatalf("round trip: %v %v %v", gotA, gotI, gotW)
	}
	if _, err := tb.Strings("nope"); err == nil {
		t.Fatal("missing column: no error")
	}
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	type untagged struct {
		A []string
	}
	type badType struct {
		A []uint16 `col:"a"`
	}
	type badDict struct {
		A []int32 `col:"a,dict"`
	}
	type hidden struct {
		a []int32 `col:"a"`
	}
	tests := []struct {
		name  string
		write func(p string) (int64, error)
		want  string
	}{
		{"length", func(p string) (int64, error) {
			return Write(p, EdgesCols{Src: []string{"a"}, Dst: []string{"b", "c"}, Graph: []string{"g"}, SrcIdx: []int32{0}, DstIdx: []int32{0}})
		}, "column dst: 2 rows, want 1"},
		// An empty first column still sets the length the others must have.
		{"length after an empty column", func(p string) (int64, error) {
			return Write(p, EdgesCols{Src: []string{}, Dst: []string{"b"}, Graph: []string{"g"}, SrcIdx: []int32{0}, DstIdx: []int32{0}})
		}, "column dst: 1 rows, want 0"},
		{"untagged", func(p string) (int64, error) { return Write(p, untagged{}) }, "untagged.A: want an exported field tagged"},
		{"unexported", func(p string) (int64, error) { return Write(p, hidden{}) }, "hidden.a: want an exported field"},
		{"type", func(p string) (int64, error) { return Write(p, badType{}) }, "badType.A: unsupported column type []uint16"},
		{"dict", func(p string) (int64, error) { return Write(p, badDict{}) }, "badDict.A: unsupported column type []int32"},
		{"not a struct", func(p string) (int64, error) { return Write(p, []string{"a"}) }, "[]string is not a struct of columns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.write(filepath.Join(dir, tc.name+".parquet"))
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

var update = flag.Bool("update", false, "rewrite testdata/tables.golden")

// TestTables pins every declared table's schema (names, order, types,
// nullability, dictionary marks) to testdata/tables.golden, recorded from
// the schemas as they were declared field by field before the table
// structs: a reordered or retyped struct field changes the files written,
// and fails here before any golden Parquet hash does.
func TestTables(t *testing.T) {
	var b strings.Builder
	for _, tb := range Tables() {
		b.WriteString(describe(tb.Name, tb.Schema))
	}
	const golden = "testdata/tables.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		t.Fatalf("declared schemas differ from %s (go test ./schema -run TestTables -update after a deliberate change):\n%s", golden, got)
	}
	if len(Tables()) != 26 {
		t.Fatalf("%d tables declared", len(Tables()))
	}
}

// Every declared table struct starts with the blank keyed field, so no
// package but this one can fill it positionally: a column is always set by
// its name.
func TestTablesKeyed(t *testing.T) {
	for _, tb := range Tables() {
		if f := tb.cols.Field(0); f.Name != "_" || f.Type != reflect.TypeFor[keyed]() {
			t.Errorf("%s: first field %s %s, want _ keyed", tb.cols, f.Name, f.Type)
		}
	}
}

func describe(name string, s *arrow.Schema) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", name)
	for _, f := range s.Fields() {
		fmt.Fprintf(&b, "  %s %s nullable=%v meta=%v\n", f.Name, f.Type, f.Nullable, f.Metadata)
		if l, ok := f.Type.(*arrow.ListType); ok {
			e := l.ElemField()
			fmt.Fprintf(&b, "    elem %s %s nullable=%v meta=%v\n", e.Name, e.Type, e.Nullable, e.Metadata)
		}
	}
	fmt.Fprintf(&b, "  schema meta=%v\n", s.Metadata())
	return b.String()
}

// Two writes of the same rows give the same bytes, across more than one row
// group, and only the marked columns are dictionary-encoded.
func TestDeterministicBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2 x 1.1 M rows")
	}
	dir := t.TempDir()
	n := RowGroupRows + 1000
	var files [2][]byte
	for k := range files {
		p := filepath.Join(dir, fmt.Sprintf("pairs%d.parquet", k))
		if _, err := Write(p, pairsCols(n)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[k] = b
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("same rows, different bytes")
	}
	rdr, err := file.NewParquetReader(bytes.NewReader(files[0]))
	if err != nil {
		t.Fatal(err)
	}
	md := rdr.MetaData()
	if md.GetCreatedBy() != CreatedBy {
		t.Fatalf("created_by %q", md.GetCreatedBy())
	}
	if md.NumRowGroups() != 2 {
		t.Fatalf("%d row groups, want 2", md.NumRowGroups())
	}
	rg := md.RowGroup(0)
	for c := 0; c < rg.NumColumns(); c++ {
		cc, err := rg.ColumnChunk(c)
		if err != nil {
			t.Fatal(err)
		}
		name := cc.PathInSchema().String()
		hasDict := cc.HasDictionaryPage()
		if want := name == "split"; hasDict != want {
			t.Errorf("column %s: dictionary page %v, want %v", name, hasDict, want)
		}
	}
}

func ExampleWrite() {
	dir, _ := os.MkdirTemp("", "schema")
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "edges.parquet")
	rows, err := Write(p, EdgesCols{
		Src:    []string{"B000000001", "B000000002"},
		Dst:    []string{"B000000002", "000000001X"},
		Graph:  []string{"also_bought", "also_bought"},
		SrcIdx: []int32{0, 1},
		DstIdx: []int32{1, 2},
	})
	fmt.Println(rows, err)
	t, _ := Open(context.Background(), p)
	defer t.Release()
	dst, _ := t.Strings("dst")
	fmt.Println(dst)
	// Output:
	// 2 <nil>
	// [B000000002 000000001X]
}

func TestReadKeepsFirstError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "edges.parquet")
	if _, err := Write(p, EdgesCols{Src: []string{"a"}, Dst: []string{"b"}, Graph: []string{"g"}, SrcIdx: []int32{0}, DstIdx: []int32{1}}); err != nil {
		t.Fatal(err)
	}
	var src []string
	var missing []int32
	err := Read(t.Context(), p, func(c *Cols) error {
		if !c.Has("src") || c.Has("nope") {
			t.Errorf("Has(src) %v, Has(nope) %v", c.Has("src"), c.Has("nope"))
		}
		src, missing = c.Strings("src"), c.Int32s("nope")
		_ = c.Strings("dst") // after an error, reads return nil
		return nil
	})
	if len(src) != 1 || missing != nil || err == nil || !strings.Contains(err.Error(), `no such column "nope"`) {
		t.Fatalf("src %v missing %v err %v", src, missing, err)
	}
}

func TestNumRows(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pairs.parquet")
	if _, err := Write(p, pairsCols(1234)); err != nil {
		t.Fatal(err)
	}
	if n, err := NumRows(p); n != 1234 || err != nil {
		t.Fatalf("NumRows = %d, %v", n, err)
	}
	if _, err := NumRows(p + ".missing"); err == nil {
		t.Fatal("missing file: no error")
	}
}

package schema

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
)

func pairsCols(n int) []any {
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
	return []any{x, y, label, split, xi, yi}
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bow.parquet")
	asin := []string{"A1", "A2", "0123456789X"}
	ids := [][]int32{{0, 3}, {}, {1}}
	w := [][]float32{{0.25, 0.75}, {}, {1}}
	idx := []int32{0, 1, 2}
	cnt := [][]int32{{1, 3}, {}, {2}}
	if _, err := Write(p, Bow, asin, ids, w, idx, cnt); err != nil {
		t.Fatal(err)
	}
	tb, err := Open(p)
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
	tests := []struct {
		name string
		cols []any
		want string
	}{
		{"count", []any{[]string{"a"}}, "1 columns given, schema has 5"},
		{"length", []any{[]string{"a"}, []string{"b", "c"}, []string{"g"}, []int32{0}, []int32{0}}, "column dst: 2 rows, want 1"},
		{"type", []any{[]string{"a"}, []string{"b"}, []string{"g"}, []int64{0}, []int32{0}}, "column src_idx: []int64 does not match int32"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".parquet")
			_, err := Write(p, Edges, tc.cols...)
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
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
		if _, err := Write(p, Pairs, pairsCols(n)...); err != nil {
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
	rows, err := Write(p, Edges,
		[]string{"B000000001", "B000000002"}, []string{"B000000002", "000000001X"},
		[]string{"also_bought", "also_bought"}, []int32{0, 1}, []int32{1, 2})
	fmt.Println(rows, err)
	t, _ := Open(p)
	defer t.Release()
	dst, _ := t.Strings("dst")
	fmt.Println(dst)
	// Output:
	// 2 <nil>
	// [B000000002 000000001X]
}

func TestReadKeepsFirstError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "edges.parquet")
	if _, err := Write(p, Edges, []string{"a"}, []string{"b"}, []string{"g"}, []int32{0}, []int32{1}); err != nil {
		t.Fatal(err)
	}
	var src []string
	var missing []int32
	err := Read(p, func(c *Cols) error {
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
	if _, err := Write(p, Pairs, pairsCols(1234)...); err != nil {
		t.Fatal(err)
	}
	if n, err := NumRows(p); n != 1234 || err != nil {
		t.Fatalf("NumRows = %d, %v", n, err)
	}
	if _, err := NumRows(p + ".missing"); err == nil {
		t.Fatal("missing file: no error")
	}
}

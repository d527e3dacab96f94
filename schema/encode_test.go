package schema

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// stringLists has the catalogue's list columns, beside everyType's.
type stringLists struct {
	ID  []int32      `col:"id"`
	LS  [][]string   `col:"ls"`
	LLS [][][]string `col:"lls"`
}

// stringListsRows has every kind of list: empty, one element, several; a
// list of lists with empty inner lists among full ones.
func stringListsRows(n int) stringLists {
	var c stringLists
	for i := range n {
		var ls []string
		for j := range i % 3 {
			ls = append(ls, fmt.Sprintf("t%d.%d", i, j))
		}
		var lls [][]string
		for j := range i % 4 {
			var in []string
			for k := range (i + j) % 3 {
				in = append(in, fmt.Sprintf("c%d.%d.%d", i, j, k))
			}
			lls = append(lls, in)
		}
		c.ID, c.LS, c.LLS = append(c.ID, int32(i)), append(c.LS, ls), append(c.LLS, lls)
	}
	return c
}

// TestSameBytesAsPqarrow checks the writer that encodes columns side by
// side against pqarrow's own FileWriter given the same rows as Arrow
// record batches, which is how every file was written before: the bytes
// must be equal, so files do not change with the writer, and equal at
// any GOMAXPROCS. The shapes cross row groups (7 rows each), hold no rows,
// fill several pages of a list column, and overflow a dictionary page (a
// dictionary column falls back to plain encoding).
func TestSameBytesAsPqarrow(t *testing.T) {
	dir := t.TempDir()
	big := everyTypeRows(0)
	for i := range 150_000 {
		big.D = append(big.D, fmt.Sprintf("distinct value %09d", i))
		big.LI32 = append(big.LI32, []int32{int32(i), int32(i * 7), int32(i ^ 5)}[:i%4%3])
	}
	type fields struct {
		D    []string  `col:"d,dict"`
		LI32 [][]int32 `col:"li32"`
	}
	cases := []struct {
		name  string
		cols  any
		group int
	}{
		{"every type", everyTypeRows(52), 7},
		{"every type one group", everyTypeRows(52), RowGroupRows},
		{"no rows", everyTypeRows(0), 7},
		{"string lists", stringListsRows(52), 7},
		{"string lists no rows", stringListsRows(0), 7},
		{"pages", fields{big.D, big.LI32}, RowGroupRows},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := oracleWrite(t, filepath.Join(dir, "want.parquet"), c.cols, c.group)
			for _, p := range []int{1, 2, 3, 7} {
				prev := runtime.GOMAXPROCS(p)
				path := filepath.Join(dir, fmt.Sprintf("got%d.parquet", p))
				var err error
				switch v := c.cols.(type) {
				case everyType:
					_, err = write(path, v, c.group)
				case stringLists:
					_, err = write(path, v, c.group)
				case fields:
					_, err = write(path, v, c.group)
				}
				runtime.GOMAXPROCS(prev)
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("GOMAXPROCS=%d: %d bytes differ from pqarrow's %d", p, len(got), len(want))
				}
			}
		})
	}
}

// oracleWrite writes table struct cols with pqarrow.FileWriter, one record
// batch a row group, and returns the file's bytes.
func oracleWrite(t *testing.T, path string, cols any, group int) []byte {
	t.Helper()
	idx, s, err := layout(reflect.TypeOf(cols))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fw, err := pqarrow.NewFileWriter(s, f, writerProps(s), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(cols)
	n := v.Field(idx[0]).Len()
	for lo := 0; lo < n; lo += group {
		hi := min(lo+group, n)
		b := array.NewRecordBuilder(memory.DefaultAllocator, s)
		for k, i := range idx {
			oracleAppend(t, b.Field(k), v.Field(i).Slice(lo, hi).Interface())
		}
		rec := b.NewRecordBatch()
		b.Release()
		if err := fw.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// oracleAppend appends column c to Arrow builder fb the way the Arrow
// builders of lists take rows: one Append per list.
func oracleAppend(t *testing.T, fb array.Builder, c any) {
	t.Helper()
	switch v := c.(type) {
	case []string:
		fb.(*array.StringBuilder).AppendValues(v, nil)
	case []bool:
		fb.(*array.BooleanBuilder).AppendValues(v, nil)
	case []int8:
		fb.(*array.Int8Builder).AppendValues(v, nil)
	case []int32:
		fb.(*array.Int32Builder).AppendValues(v, nil)
	case []int64:
		fb.(*array.Int64Builder).AppendValues(v, nil)
	case []float32:
		fb.(*array.Float32Builder).AppendValues(v, nil)
	case []float64:
		fb.(*array.Float64Builder).AppendValues(v, nil)
	case [][]int32:
		oracleList(fb, v, (*array.Int32Builder).AppendValues)
	case [][]int64:
		oracleList(fb, v, (*array.Int64Builder).AppendValues)
	case [][]float32:
		oracleList(fb, v, (*array.Float32Builder).AppendValues)
	case [][]float64:
		oracleList(fb, v, (*array.Float64Builder).AppendValues)
	case [][]string:
		oracleList(fb, v, (*array.StringBuilder).AppendValues)
	case [][][]string:
		lb := fb.(*array.ListBuilder)
		ib := lb.ValueBuilder().(*array.ListBuilder)
		for _, row := range v {
			lb.Append(true)
			for _, l := range row {
				ib.Append(true)
				ib.ValueBuilder().(*array.StringBuilder).AppendValues(l, nil)
			}
		}
	default:
		t.Fatalf("no oracle for %T", c)
	}
}

func oracleList[B array.Builder, T any](fb array.Builder, rows [][]T, add func(B, []T, []bool)) {
	lb := fb.(*array.ListBuilder)
	vb := lb.ValueBuilder().(B)
	for _, r := range rows {
		lb.Append(true)
		add(vb, r, nil)
	}
}

// TestDictionaryDoesNotFallBack: a dictionary column of 150,000 distinct
// strings (3.5 MB, beyond arrow-go's default 1 MiB limit) keeps one data
// page encoding. A column that fell back to plain had two, which arrow-go
// lists in Go map order, so its footer's bytes could differ between runs.
func TestDictionaryDoesNotFallBack(t *testing.T) {
	type dict struct {
		D []string `col:"d,dict"`
	}
	var c dict
	for i := range 150_000 {
		c.D = append(c.D, fmt.Sprintf("distinct value %09d", i))
	}
	p := filepath.Join(t.TempDir(), "d.parquet")
	if _, err := Write(p, c); err != nil {
		t.Fatal(err)
	}
	rdr, err := file.OpenParquetFile(p, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	cc, err := rdr.MetaData().RowGroup(0).ColumnChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	data := map[parquet.Encoding]bool{}
	for _, st := range cc.EncodingStats() {
		if st.PageType.String() != "DICTIONARY_PAGE" {
			data[st.Encoding] = true
		}
	}
	if len(data) != 1 || !cc.HasDictionaryPage() {
		t.Fatalf("data page encodings %v, dictionary page %v: want one, dictionary-encoded", data, cc.HasDictionaryPage())
	}
}

// TestLeafRefusesMismatch: a Go slice whose type is not the column's is
// refused, not written as something else.
func TestLeafRefusesMismatch(t *testing.T) {
	for _, c := range []struct {
		v  any
		dt arrow.DataType
	}{
		{[]int32{1}, arrow.PrimitiveTypes.Int64},
		{[][]int32{{1}}, arrow.PrimitiveTypes.Int32},
		{[]uint16{1}, arrow.PrimitiveTypes.Uint16},
	} {
		if _, ok := leafOf(c.v, c.dt, 0, 1); ok {
			t.Errorf("%T as %s accepted", c.v, c.dt)
		}
	}
}

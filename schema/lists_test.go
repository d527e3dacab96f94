package schema

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// oracleRead reads every column of T through pqarrow's record reader and
// the Table's typed readers, the way every read went before list columns
// were decoded by lists.go.
func oracleRead[T any](t *testing.T, path string) T {
	t.Helper()
	var out T
	v := reflect.ValueOf(&out).Elem()
	idx, want, err := layout(v.Type())
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	for k, i := range idx {
		col, err := tbl.read(want.Field(k))
		if err != nil {
			t.Fatal(err)
		}
		v.Field(i).Set(reflect.ValueOf(col))
	}
	return out
}

// TestListsAsPqarrow: list columns of numbers read through the typed
// column-chunk readers give what pqarrow's record reader gave (values,
// empty rows, row order), over one row group and many, lists spread over
// many pages, no rows, at any GOMAXPROCS; and every row is capped at its
// own end.
func TestListsAsPqarrow(t *testing.T) {
	dir := t.TempDir()
	big := everyTypeRows(150_000)
	for i := range big.LI32 { // a few long rows among the short ones
		if i%10_007 == 0 {
			big.LF64[i] = make([]float64, 3000+i%17)
			for j := range big.LF64[i] {
				big.LF64[i][j] = float64(i) - float64(j)/3
			}
		}
	}
	cases := []struct {
		name  string
		cols  everyType
		group int
	}{
		{"groups of 7", everyTypeRows(52), 7},
		{"one group", everyTypeRows(52), RowGroupRows},
		{"no rows", everyTypeRows(0), 7},
		{"pages", big, RowGroupRows},
		{"pages and groups", big, 40_000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".parquet")
			if _, err := write(path, c.cols, c.group); err != nil {
				t.Fatal(err)
			}
			want := oracleRead[everyType](t, path)
			if !reflect.DeepEqual(want, c.cols) && len(c.cols.S) > 0 {
				t.Fatal("the oracle does not read back what was written")
			}
			for _, p := range []int{1, 2, 3, 7, 16} {
				prev := runtime.GOMAXPROCS(p)
				got, err := ReadAll[everyType](context.Background(), path)
				var side everyType
				if err == nil {
					err = ReadFieldsSideBySide(context.Background(), path, &side, &side.I32, &side.LI32, &side.LF64)
				}
				runtime.GOMAXPROCS(prev)
				if err != nil {
					t.Fatalf("GOMAXPROCS=%d: %v", p, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("GOMAXPROCS=%d: ReadAll differs from pqarrow's read", p)
				}
				if !reflect.DeepEqual(side.LI32, want.LI32) || !reflect.DeepEqual(side.LF64, want.LF64) || !reflect.DeepEqual(side.I32, want.I32) || side.LI64 != nil {
					t.Fatalf("GOMAXPROCS=%d: ReadFieldsSideBySide differs from pqarrow's read", p)
				}
			}
			got, err := ReadAll[everyType](context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got.LI64 {
				if cap(got.LI64[i]) != len(got.LI64[i]) || cap(got.LF32[i]) != len(got.LF32[i]) {
					t.Fatalf("row %d is not capped at its end", i)
				}
			}
		})
	}
}

// writeArrow writes one record batch of a one-column table with pqarrow,
// the way another tool (pyarrow, Spark) would: the column's list may be
// null and its elements too.
func writeArrow(t *testing.T, path string, rows [][]*int32, nullRows map[int]bool) {
	t.Helper()
	s := arrow.NewSchema([]arrow.Field{{Name: "li32", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	lb := b.Field(0).(*array.ListBuilder)
	vb := lb.ValueBuilder().(*array.Int32Builder)
	for i, r := range rows {
		if nullRows[i] {
			lb.AppendNull()
			continue
		}
		lb.Append(true)
		for _, x := range r {
			if x == nil {
				vb.AppendNull()
			} else {
				vb.Append(*x)
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	writeRecord(t, path, rec)
}

// TestListsOfOtherWriters: a file whose list column may be null (an
// optional group, as pyarrow writes it) reads a null row as an empty one,
// as pqarrow's reader did; a null element, which a Go slice of numbers
// cannot hold, fails with the file, column and row.
func TestListsOfOtherWriters(t *testing.T) {
	type table struct {
		LI32 [][]int32 `col:"li32"`
	}
	dir := t.TempDir()
	one, two := int32(1), int32(2)
	path := filepath.Join(dir, "nullable.parquet")
	writeArrow(t, path, [][]*int32{{&one, &two}, nil, {}, {&two}, nil}, map[int]bool{1: true, 4: true})
	var got table
	if err := ReadFields(context.Background(), path, &got, &got.LI32); err != nil {
		t.Fatal(err)
	}
	want := oracleRead[table](t, path)
	if !reflect.DeepEqual(got, want) || fmt.Sprint(got.LI32) != "[[1 2] [] [] [2] []]" {
		t.Fatalf("read %v, pqarrow read %v", got.LI32, want.LI32)
	}

	path = filepath.Join(dir, "null-element.parquet")
	writeArrow(t, path, [][]*int32{{&one}, {}, {&two, nil}}, nil)
	err := ReadFields(context.Background(), path, &got, &got.LI32)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "li32") || !strings.Contains(err.Error(), "row 2: a null element") {
		t.Fatalf("a null element read with error %v", err)
	}
}

// TestListsCorrupt: a list column's file with any byte changed reads with
// an error or with what pqarrow's reader makes of the same bytes, never a
// panic (the decoders run off the caller's goroutine, where a panic would
// end the process).
func TestListsCorrupt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bow.parquet")
	want := everyTypeRows(300)
	if _, err := write(path, want, 100); err != nil {
		t.Fatal(err)
	}
	clean, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.parquet")
	errs := 0
	// The column chunks, not the footer: a changed footer is
	// TestCorruptFooter's.
	for at := 4; at < footerStart(clean); at += max(1, len(clean)/600) {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			b := append([]byte(nil), clean...)
			b[at] ^= flip
			if err := os.WriteFile(bad, b, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadAll[everyType](context.Background(), bad)
			if err != nil {
				errs++
				if !strings.Contains(err.Error(), bad) {
					t.Fatalf("byte %d ^ %#x: error %q does not name the file", at, flip, err)
				}
				continue
			}
			if oracle, ok := tryOracle(bad); ok && !reflect.DeepEqual(got.LI32, oracle.LI32) {
				t.Fatalf("byte %d ^ %#x: read differs from pqarrow's read of the same bytes", at, flip)
			}
		}
	}
	if errs == 0 {
		t.Fatal("no changed byte gave an error")
	}
}

// tryOracle is oracleRead of everyType's LI32 where pqarrow reads the file
// without an error or a panic.
func tryOracle(path string) (out everyType, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	tbl, err := Open(context.Background(), path)
	if err != nil {
		return out, false
	}
	defer tbl.Release()
	out.LI32, err = tbl.Int32Lists("li32")
	return out, err == nil
}

// footerStart is where a Parquet file's footer begins: its length is the
// four bytes before the closing magic.
func footerStart(b []byte) int {
	return len(b) - 8 - int(binary.LittleEndian.Uint32(b[len(b)-8:]))
}

// TestCorruptFooter: a file with any byte of its footer inverted reads
// with an error naming it, or reads, but does not panic (arrow-go panics
// on an unknown logical type). The stored Arrow schema inside the footer
// is base64 here, so inverting its bytes only breaks the encoding: its
// flatbuffer is changed byte by byte in TestStoredSchemaDamaged.
func TestCorruptFooter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.parquet")
	if _, err := write(path, everyTypeRows(30), 10); err != nil {
		t.Fatal(err)
	}
	clean, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.parquet")
	corrupt := 0
	for at := footerStart(clean); at < len(clean)-8; at++ {
		b := append([]byte(nil), clean...)
		b[at] ^= 0xff
		if err := os.WriteFile(bad, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadAll[everyType](context.Background(), bad)
		if _, nerr := NumRows(bad); err == nil {
			err = nerr
		}
		if err == nil {
			continue
		}
		if !strings.Contains(err.Error(), bad) {
			t.Fatalf("byte %d: error %q does not name the file", at, err)
		}
		if strings.Contains(err.Error(), "corrupt footer") {
			corrupt++
		}
	}
	if corrupt == 0 {
		t.Fatal("no inverted byte reached arrow-go's panic: the test no longer covers it")
	}
}

package schema

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func reviewsCols(n int) ReviewsCols {
	c := ReviewsCols{ASIN: make([]string, n), Summary: make([]string, n), Text: make([]string, n)}
	for i := range n {
		c.ASIN[i] = fmt.Sprintf("B%09d", i/3)
		c.Summary[i] = []string{"", "Great", "Five Stars"}[i%3]
		c.Text[i] = strings.Repeat(fmt.Sprintf("word%d ", i), i%5)
	}
	return c
}

func slice(c ReviewsCols, lo, hi int) ReviewsCols {
	return ReviewsCols{ASIN: c.ASIN[lo:hi], Summary: c.Summary[lo:hi], Text: c.Text[lo:hi]}
}

// A streamed table's bytes depend on its rows and group length alone, not
// on how the rows were batched; with groups of RowGroupRows they are those
// of Write. Batches reads it back one row group at a time.
func TestWriterBatches(t *testing.T) {
	const n, group = 1000, 128
	rows := reviewsCols(n)
	dir := t.TempDir()
	write := func(name string, group, batch int) []byte {
		t.Helper()
		p := filepath.Join(dir, name)
		w, err := NewWriter[ReviewsCols](p, group)
		if err != nil {
			t.Fatal(err)
		}
		for lo := 0; lo < n; lo += batch {
			if err := w.Append(slice(rows, lo, min(n, lo+batch))); err != nil {
				t.Fatal(err)
			}
			// Memory holds at most one group: a full one is written.
			if w.n >= group {
				t.Fatalf("%s: %d rows buffered after an append, groups of %d", name, w.n, group)
			}
		}
		if got, err := w.Close(); got != n || err != nil {
			t.Fatalf("%s: Close = %d, %v", name, got, err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := write("b1.parquet", group, 1)
	for _, batch := range []int{7, group, 500, n} {
		if b := write(fmt.Sprintf("b%d.parquet", batch), group, batch); !bytes.Equal(b, first) {
			t.Errorf("batches of %d: other bytes than batches of 1", batch)
		}
	}
	whole := filepath.Join(dir, "whole.parquet")
	if _, err := Write(whole, rows); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(whole)
	if b := write("max.parquet", RowGroupRows, 333); !bytes.Equal(b, want) {
		t.Error("groups of RowGroupRows: other bytes than Write")
	}

	var got ReviewsCols
	var sizes []int
	for b, err := range Batches[ReviewsCols](context.Background(), filepath.Join(dir, "b1.parquet")) {
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(b.ASIN))
		got.ASIN, got.Summary, got.Text = append(got.ASIN, b.ASIN...), append(got.Summary, b.Summary...), append(got.Text, b.Text...)
	}
	wantSizes := []int{128, 128, 128, 128, 128, 128, 128, 104}
	if !slices.Equal(sizes, wantSizes) {
		t.Errorf("row groups of %v rows, want %v", sizes, wantSizes)
	}
	if !slices.Equal(got.ASIN, rows.ASIN) || !slices.Equal(got.Summary, rows.Summary) || !slices.Equal(got.Text, rows.Text) {
		t.Error("rows read back differ from those written")
	}
}

// Breaking out of Batches stops reading; an empty table has no batch.
func TestBatchesStopAndEmpty(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.parquet")
	w, err := NewWriter[ReviewsCols](p, 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(reviewsCols(35)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	k := 0
	for range Batches[ReviewsCols](context.Background(), p) {
		if k++; k == 2 {
			break
		}
	}
	if k != 2 {
		t.Fatalf("%d batches before the break", k)
	}
	empty := filepath.Join(dir, "empty.parquet")
	w, err = NewWriter[ReviewsCols](empty, 10)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := w.Close(); n != 0 || err != nil {
		t.Fatalf("empty: Close = %d, %v", n, err)
	}
	for b, err := range Batches[ReviewsCols](context.Background(), empty) {
		t.Fatalf("empty table: batch %v, %v", b, err)
	}
	if n, err := NumRows(empty); n != 0 || err != nil {
		t.Fatalf("empty table: NumRows = %d, %v", n, err)
	}
}

func TestStreamErrors(t *testing.T) {
	dir := t.TempDir()
	edges := filepath.Join(dir, "edges.parquet")
	if _, err := Write(edges, EdgesCols{Src: []string{"a"}, Dst: []string{"b"}, Graph: []string{"g"}, SrcIdx: []int32{0}, DstIdx: []int32{1}}); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.parquet")
	if err := os.WriteFile(garbage, []byte("not parquet at all, just bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	firstErr := func(path string) error {
		for _, err := range Batches[ReviewsCols](context.Background(), path) {
			return err
		}
		return nil
	}
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"group 0", func() error { _, err := NewWriter[ReviewsCols](filepath.Join(dir, "g0.parquet"), 0); return err }, "0 rows per row group"},
		{"group too long", func() error {
			_, err := NewWriter[ReviewsCols](filepath.Join(dir, "g1.parquet"), RowGroupRows+1)
			return err
		}, "want 1 to"},
		{"not a table", func() error { _, err := NewWriter[[]string](filepath.Join(dir, "s.parquet"), 10); return err }, "is not a struct of columns"},
		{"length after an empty column", func() error {
			w, err := NewWriter[ReviewsCols](filepath.Join(dir, "len0.parquet"), 1) // 1 row a group is allowed
			if err != nil {
				return err
			}
			defer w.Close()
			return w.Append(ReviewsCols{ASIN: []string{}, Summary: []string{"s"}, Text: []string{"t"}})
		}, "len0.parquet column summary: 1 rows, want 0"},
		{"length", func() error {
			w, err := NewWriter[ReviewsCols](filepath.Join(dir, "len.parquet"), 10)
			if err != nil {
				return err
			}
			err = w.Append(ReviewsCols{ASIN: []string{"a"}, Summary: []string{"s"}, Text: []string{"t", "u"}})
			if _, cerr := w.Close(); cerr != err {
				return fmt.Errorf("Close returned %v after Append's %v", cerr, err)
			}
			return err
		}, "len.parquet column text: 2 rows, want 1"},
		{"missing", func() error { return firstErr(filepath.Join(dir, "nope.parquet")) }, "nope.parquet"},
		{"garbage", func() error { return firstErr(garbage) }, "garbage.parquet"},
		{"other table", func() error { return firstErr(edges) }, "want those of schema.ReviewsCols"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.err(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func ExampleBatches() {
	dir, _ := os.MkdirTemp("", "schema")
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "reviews.parquet")
	w, _ := NewWriter[ReviewsCols](p, 2) // row groups of 2 rows
	for _, a := range []string{"B1", "B2", "B3"} {
		w.Append(ReviewsCols{ASIN: []string{a}, Summary: []string{""}, Text: []string{"review of " + a}})
	}
	fmt.Println(w.Close())
	for b, err := range Batches[ReviewsCols](context.Background(), p) {
		fmt.Println(b.ASIN, b.Text, err)
	}
	// Output:
	// 3 <nil>
	// [B1 B2] [review of B1 review of B2] <nil>
	// [B3] [review of B3] <nil>
}

// EndGroup ends a row group where the caller says (publish keeps each
// query's list in one group); a group still fills up at groupRows.
func TestWriterEndGroup(t *testing.T) {
	rows := reviewsCols(20)
	p := filepath.Join(t.TempDir(), "g.parquet")
	w, err := NewWriter[ReviewsCols](p, 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range [][2]int{{0, 3}, {3, 5}, {5, 15}, {15, 20}} {
		if err := w.Append(slice(rows, cut[0], cut[1])); err != nil {
			t.Fatal(err)
		}
		if err := w.EndGroup(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.EndGroup(); err != nil { // nothing buffered: no empty group
		t.Fatal(err)
	}
	if n, err := w.Close(); n != 20 || err != nil {
		t.Fatalf("Close = %d, %v", n, err)
	}
	var sizes []int
	var asin []string
	for b, err := range Batches[ReviewsCols](context.Background(), p) {
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(b.ASIN))
		asin = append(asin, b.ASIN...)
	}
	if want := []int{3, 2, 8, 2, 5}; !slices.Equal(sizes, want) {
		t.Errorf("row groups of %v rows, want %v", sizes, want)
	}
	if !slices.Equal(asin, rows.ASIN) {
		t.Error("rows read back differ from those written")
	}
	if err := w.EndGroup(); err == nil {
		t.Error("EndGroup after Close: no error")
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"monomer/schema"
)

type showCols struct {
	ASIN  []string    `col:"asin"`
	Score []float64   `col:"score"`
	Top   [][]float32 `col:"top"`
}

// TestShow: a table's head as text, CSV and JSON, bytes exactly; what is
// not a table exits 3, what is not a file 2.
func TestShow(t *testing.T) {
	dir := t.TempDir()
	if _, err := schema.Write(filepath.Join(dir, "t.parquet"), showCols{
		ASIN:  []string{"B01", "B02, \"x\"", "B03"},
		Score: []float64{0.1, 2.5e-7, -3},
		Top:   [][]float32{{1, 2}, {}, {0.25}},
	}); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "bad.parquet"), "not a table\n")
	tests := []struct {
		args   []string
		code   int
		stdout string
	}{
		{[]string{"t.parquet", "--rows", "2"}, 0, "" +
			"t.parquet: 3 rows, 3 columns\n" +
			"asin          score    top\n" +
			"utf8          float64  list<element: float32, nullable>\n" +
			"\"B01\"         0.1      [1,2]\n" +
			"\"B02, \\\"x\\\"\"  2.5e-07  []\n"},
		{[]string{"t.parquet", "--format", "csv", "--rows", "-1"}, 0, "" +
			"asin,score,top\n" +
			"B01,0.1,\"[1,2]\"\n" +
			"\"B02, \"\"x\"\"\",2.5e-07,[]\n" +
			"B03,-3,[0.25]\n"},
		{[]string{"t.parquet", "--format", "json", "--rows", "1"}, 0, `{"asin":"B01","score":0.1,"top":[1,2]}` + "\n"},
		{[]string{"t.parquet", "--rows", "0", "--format", "csv"}, 0, "asin,score,top\n"},
		{[]string{"bad.parquet"}, 3, ""},
		{[]string{"gone.parquet"}, 2, ""},
		{[]string{"."}, 2, ""},
		{[]string{"t.parquet", "--format", "xml"}, 2, ""},
		{[]string{"t.parquet", "--rows", "-2"}, 2, ""},
	}
	for _, tc := range tests {
		r := monomer(t, dir, "fake", nil, append([]string{"show"}, tc.args...)...)
		if r.code != tc.code || r.stdout != tc.stdout || (tc.code != 0) != (r.stderr != "") {
			t.Errorf("show %v: exit %d, stdout\n%s\nstderr %q\nwant exit %d, stdout\n%s", tc.args, r.code, r.stdout, r.stderr, tc.code, tc.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "gone.parquet")); err == nil {
		t.Error("show made a file")
	}
}

// TestShowDamaged: show on damaged pyarrow files exits 3 with one line
// naming the file, never a panic's goroutine dump (the old code panicked
// in (*DataPageHeader).GetNumValues on byte 11 and exited 2); a flipped
// value in a page with a CRC is refused; a named pipe exits 2 before it
// is opened (the old code blocked in open until a writer came); a
// duration column, alone or in a list, prints (the old code exited 3);
// a symbolic link loop exits 3, as run's does.
func TestShowDamaged(t *testing.T) {
	dir := t.TempDir()
	clean, err := os.ReadFile("../../testdata/damage/items-crc.parquet")
	if err != nil {
		t.Fatal(err)
	}
	header := bytes.Clone(clean)
	header[11] ^= 0xff
	write(t, filepath.Join(dir, "header.parquet"), string(header))
	page := bytes.Clone(clean)
	page[bytes.Index(page, []byte("Title 17"))] ^= 0x01
	write(t, filepath.Join(dir, "page.parquet"), string(page))
	types, err := os.ReadFile("../../testdata/damage/types-crc.parquet")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "types.parquet"), string(types))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop2.parquet", filepath.Join(dir, "loop1.parquet")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop1.parquet", filepath.Join(dir, "loop2.parquet")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args   []string
		code   int
		stderr string // a part of the one line
		stdout string // a part
	}{
		{[]string{"header.parquet", "--rows", "-1"}, 3, "header.parquet", ""},
		{[]string{"page.parquet", "--rows", "-1"}, 3, "page.parquet: damaged data: column title, row group 0, page at byte ", ""},
		{[]string{"fifo.parquet"}, 2, "fifo.parquet is a named pipe", ""},
		{[]string{"loop1.parquet"}, 3, "symbolic link loop", ""},
		{[]string{"types.parquet"}, 0, "", "took          at               price          day         laps\n" +
			"utf8  duration[ms]  time64[us]       decimal(9, 2)  date32      list<element: int64, nullable>\n" +
			"\"a\"   1500ms        01:02:03.000000  1              2014-05-06  [60,61]\n"},
		{[]string{"types.parquet", "--rows", "0x10"}, 2, "--rows", ""},
	}
	for _, tc := range tests {
		r := monomer(t, dir, "fake", nil, append([]string{"show"}, tc.args...)...)
		lines := strings.Count(r.stderr, "\n")
		if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) || !strings.Contains(r.stdout, tc.stdout) ||
			tc.code != 0 && lines != 1 || tc.code == 0 && lines != 0 {
			t.Errorf("show %v: exit %d, stderr %q, stdout\n%s\nwant exit %d, one line with %q", tc.args, r.code, r.stderr, r.stdout, tc.code, tc.stderr)
		}
	}
	if r := monomer(t, dir, "fake", nil, "show", "types.parquet", "--format", "json", "--rows", "1"); r.stdout != `{"name":"a","took":"1500ms","at":"01:02:03","price":"1","day":"2014-05-06","laps":[60,61]}`+"\n" {
		t.Errorf("json: %q, want the keys in column order", r.stdout)
	}
}

// TestShowTextStreams: the text layout writes each batch's rows as it
// gets them, so --rows -1 on a large table does not hold every row (the
// old textOut held all in its tabwriter until end); a tab or a newline
// in a column's name is escaped, not a broken column.
func TestShowTextStreams(t *testing.T) {
	var buf bytes.Buffer
	o := &textOut{path: "t.parquet", w: tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)}
	sc := arrow.NewSchema([]arrow.Field{{Name: "a\tb", Type: arrow.BinaryTypes.String}, {Name: "c\nd", Type: arrow.PrimitiveTypes.Int64}}, nil)
	if err := o.header(2, sc); err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"x", "yy"}, nil)
	b.Field(1).(*array.Int64Builder).AppendValues([]int64{1, 22}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := o.batch(rec); err != nil {
		t.Fatal(err)
	}
	want := "t.parquet: 2 rows, 2 columns\n" +
		`a\tb  c\nd` + "\n" +
		"utf8  int64\n" +
		`"x"   1` + "\n" +
		`"yy"  22` + "\n"
	if buf.String() != want {
		t.Errorf("after the first batch, before end:\n%q\nwant\n%q", buf.String(), want)
	}
}

// TestShowCancelled: a done context (what SIGINT and SIGTERM make of the
// command's, main.go) stops show with exit 130, not as a damaged table:
// the guards around arrow-go's reads leave a cancellation unclassed.
func TestShowCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	err := execute(ctx, root, []string{"show", "../../testdata/damage/items-crc.parquet", "--rows", "-1"})
	if code := exitCode(err); code != exitInterrupted || strings.Contains(out.String(), "I00") {
		t.Errorf("cancelled: exit %d (%v), stdout %q; want exit %d before any row", code, err, out.String(), exitInterrupted)
	}
}

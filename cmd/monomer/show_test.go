package main

import (
	"os"
	"path/filepath"
	"testing"

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

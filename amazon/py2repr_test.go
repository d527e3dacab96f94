package amazon

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// TestPy2Repr parses lines written the way Python 2 printed dicts of str
// and unicode values (random text with quotes, escapes, control bytes,
// Latin-1 and UTF-8 bytes, astral characters, HTML entities; see
// testdata/py2repr.py, which regenerates both files) and compares them with
// the values Python decoded.
func TestPy2Repr(t *testing.T) {
	lines := readLinesOf(t, "testdata/py2repr_meta.txt")
	wants := readLinesOf(t, "testdata/py2repr_want.jsonl")
	if len(lines) != len(wants) || len(lines) == 0 {
		t.Fatalf("%d lines, %d expectations", len(lines), len(wants))
	}
	for i, line := range lines {
		var w struct {
			ASIN           string     `json:"asin"`
			Title          string     `json:"title"`
			Brand          string     `json:"brand"`
			ImURL          string     `json:"imUrl"`
			Price          *float64   `json:"price"`
			SalesRank      [][2]any   `json:"salesRank"`
			Categories     [][]string `json:"categories"`
			AlsoBought     []string   `json:"also_bought"`
			AlsoViewed     []string   `json:"also_viewed"`
			BoughtTogether []string   `json:"bought_together"`
		}
		if err := json.Unmarshal([]byte(wants[i]), &w); err != nil {
			t.Fatal(err)
		}
		want := Product{ASIN: w.ASIN, Title: w.Title, Brand: w.Brand, ImURL: w.ImURL,
			Categories: w.Categories, AlsoBought: w.AlsoBought, AlsoViewed: w.AlsoViewed, BoughtTogether: w.BoughtTogether}
		if w.Price != nil {
			want.Price, want.HasPrice = *w.Price, true
		}
		for _, r := range w.SalesRank {
			want.SalesRank = append(want.SalesRank, Rank{r[0].(string), int64(r[1].(float64))})
		}
		got, err := parseMetaLine(line)
		if err != nil {
			t.Errorf("line %d: %v\n%s", i+1, err, line)
			continue
		}
		if g, w := normalized(got), normalized(&want); !reflect.DeepEqual(g, w) {
			t.Errorf("line %d: %s\ngot  %#v\nwant %#v", i+1, line, g, w)
		}
	}
}

func readLinesOf(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

package stages

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"monomer/job"
	"monomer/pipeline"
)

// A hand-written 2023 data set: Men with three subcategories, an item of
// another category, one without a subcategory, a bad line and a repeated
// line in the metadata, a bad line in the reviews.
var meta2023Lines = []string{
	`{"main_category": "AMAZON FASHION", "title": "Watch One", "store": "Timex", "price": 20.0, "images": [{"large": "https://x/1.jpg", "variant": "MAIN"}], "categories": ["Clothing, Shoes & Jewelry", "Men", "Watches"], "details": {}, "parent_asin": "W1", "bought_together": null}`,
	`{"main_category": "AMAZON FASHION", "title": "Watch Two", "store": "Casio", "price": null, "categories": ["Clothing, Shoes & Jewelry", "Men", "Watches"], "parent_asin": "W2", "bought_together": null}`,
	`{"main_category": "AMAZON FASHION", "title": "Shoe", "store": null, "categories": ["Clothing, Shoes & Jewelry", "Men", "Shoes", "Athletic"], "parent_asin": "S1", "bought_together": null}`,
	`{"main_category": "AMAZON FASHION", "title": "Bag", "store": "Acme", "categories": ["Clothing, Shoes & Jewelry", "Men", "Bags"], "parent_asin": "B1", "bought_together": null}`,
	`{"main_category": "AMAZON FASHION", "title": "Dress", "categories": ["Clothing, Shoes & Jewelry", "Women", "Dresses"], "parent_asin": "X1", "bought_together": null}`,
	`{"main_category": "AMAZON FASHION", "title": "Men, no deeper", "categories": ["Clothing, Shoes & Jewelry", "Men"], "parent_asin": "N1", "bought_together": null}`,
	`{"parent_asin": "BAD", "title": `,
	`{"main_category": "AMAZON FASHION", "title": "Watch One", "store": "Timex", "price": 20.0, "images": [{"large": "https://x/1.jpg", "variant": "MAIN"}], "categories": ["Clothing, Shoes & Jewelry", "Men", "Watches"], "details": {}, "parent_asin": "W1", "bought_together": null}`,
}

// review2023Line writes a 2023 review of item by user at t0 plus days
// (and ms milliseconds).
func review2023Line(item, user string, days, ms int64) string {
	const t0, day = 1600000000000, 86400000
	return fmt.Sprintf(`{"rating": 4.0, "title": "t %s", "text": "text of %s by %s", "images": [], "asin": "%sv", "parent_asin": "%s", "user_id": "%s", "timestamp": %d, "helpful_vote": 0, "verified_purchase": true}`,
		item, item, user, item, item, user, t0+days*day+ms)
}

// Co-reviews with a 7-day window and two users (see the test for the
// edges they make).
var reviews2023Lines = []string{
	review2023Line("W1", "u1", 0, 0), review2023Line("S1", "u1", 1, 0), // W1→S1
	review2023Line("W1", "u2", 10, 0), review2023Line("S1", "u2", 12, 0), // W1→S1
	review2023Line("S1", "u3", 0, 0), review2023Line("B1", "u3", 0, 0), // tie: S1→B1, B1→S1
	review2023Line("B1", "u4", 5, 0), review2023Line("S1", "u4", 5, 0), // tie again
	review2023Line("W1", "u5", 0, 0), review2023Line("W2", "u5", 0, 0), // same subcategory
	review2023Line("W1", "u6", 0, 0), review2023Line("W2", "u6", 0, 0),
	review2023Line("B1", "u7", 0, 0), review2023Line("X1", "u7", 1, 0), // X1 is out of scope
	review2023Line("B1", "u8", 0, 0), review2023Line("X1", "u8", 1, 0),
	review2023Line("W2", "u9", 0, 0), review2023Line("B1", "u9", 7, 0), // exactly 7 days: W2→B1
	review2023Line("W2", "u10", 1, 0), review2023Line("B1", "u10", 2, 0), // W2→B1
	review2023Line("W2", "u11", 0, 0), review2023Line("S1", "u11", 7, 1000), // a second late: no vote
	`{"parent_asin": "S1", "user_id": "u13", "timestamp": "soon"}`,
	review2023Line("W2", "u12", 0, 0), review2023Line("S1", "u12", 3, 0), // W2→S1: one vote only
	review2023Line("N1", "u12", 3, 0), // N1 has no subcategory
}

const job2023 = `
name: ingest-2023
data:
  meta: META
  reviews: REVIEWS
  format: "2023"
settings:
  reject_ratio: 0.1
  co_review_window: 7
  co_review_min_users: 2
experiments:
  - name: men
    category: "Clothing, Shoes & Jewelry > Men"
    graph: co_review
    features: bow
`

func TestIngest2023CoReview(t *testing.T) {
	dir := t.TempDir()
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(strings.Join(meta2023Lines, "\n") + "\n"))
	zw.Close()
	meta := filepath.Join(dir, "meta_Men.jsonl.gz")
	reviews := filepath.Join(dir, "Men.jsonl")
	if err := os.WriteFile(meta, zipped.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(reviews, []byte(strings.Join(reviews2023Lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(strings.NewReplacer("META", meta, "REVIEWS", reviews).Replace(job2023)))
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	if _, err := pipeline.Run(context.Background(), j, []pipeline.Stage{Ingest{}}, nil, pipeline.Options{RunDir: run, Only: "ingest"}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(run, "men", "ingest")

	items := open(t, filepath.Join(out, "items.parquet"))
	if got, want := must(items.Strings("asin"))(t), []string{"B1", "S1", "W1", "W2"}; !slices.Equal(got, want) {
		t.Errorf("items %q, want %q", got, want)
	}
	if got, want := must(items.Strings("subcategory"))(t), []string{"Bags", "Shoes", "Watches", "Watches"}; !slices.Equal(got, want) {
		t.Errorf("subcategories %q, want %q", got, want)
	}
	if got, want := must(items.Strings("brand"))(t), []string{"Acme", "", "Timex", "Casio"}; !slices.Equal(got, want) {
		t.Errorf("brands (the store) %q, want %q", got, want)
	}
	if got, want := must(items.Int32s("n_reviews"))(t), []int32{6, 6, 4, 6}; !slices.Equal(got, want) {
		t.Errorf("reviews per item %v, want %v (joined on parent_asin)", got, want)
	}

	// W1↔W2 are one subcategory, W2→S1 has one user, u11's pair is a
	// second outside the window, X1 and N1 are not items.
	edges := open(t, filepath.Join(out, "edges.parquet"))
	var got []string
	src, dst, g := must(edges.Strings("src"))(t), must(edges.Strings("dst"))(t), must(edges.Strings("graph"))(t)
	for k := range src {
		got = append(got, src[k]+">"+dst[k]+" "+g[k])
	}
	if want := []string{"B1>S1 co_review", "S1>B1 co_review", "W1>S1 co_review", "W2>B1 co_review"}; !slices.Equal(got, want) {
		t.Errorf("edges %q, want %q", got, want)
	}

	rej := open(t, filepath.Join(out, "rejects.parquet"))
	var rows []string
	files, lines, offs, errs := must(rej.Strings("file"))(t), must(rej.Int64s("line"))(t), must(rej.Int64s("offset"))(t), must(rej.Strings("error"))(t)
	for k := range files {
		rows = append(rows, fmt.Sprintf("%s:%d@%d %s", files[k], lines[k], offs[k], errs[k]))
	}
	metaOff := len(strings.Join(meta2023Lines[:6], "\n")) + 1
	revOff := len(strings.Join(reviews2023Lines[:22], "\n")) + 1
	want := []string{
		fmt.Sprintf("meta_Men.jsonl.gz:7@%d unexpected end of line at byte 32, expected a value", metaOff),
		fmt.Sprintf("Men.jsonl:23@%d field timestamp: expected an integer, found a string at byte 53", revOff),
	}
	if !slices.Equal(rows, want) {
		t.Errorf("rejects\n%q\nwant\n%q", rows, want)
	}

	revs := open(t, filepath.Join(out, reviewsFile))
	if n := len(must(revs.Strings("asin"))(t)); n != 22 {
		t.Errorf("%d reviews kept for bow, want the 22 of items", n)
	}
}

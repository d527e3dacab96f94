package stages

import (
	"bytes"
	"context"
	"encoding/json"
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
  reject_ratio: 0.2 # the metadata's 1 of 8
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
	if _, err := runStages(context.Background(), j, named("ingest"), nil, pipeline.Options{RunDir: run, Only: "ingest"}); err != nil {
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

// TestCoReviewDownstream runs co_review on the demo's 2014-format reviews
// (reviewerID, unixReviewTime) through negatives and split: they take it
// as any other graph, every edge a positive pair, none a negative.
func TestCoReviewDownstream(t *testing.T) {
	data, err := filepath.Abs(testData)
	if err != nil {
		t.Fatal(err)
	}
	src := strings.ReplaceAll(`
name: co-review-demo
seed: 3
data_dir: DATA
data:
  meta: meta_Demo.json.gz
  reviews: reviews_Demo.json.gz
  image_features: image_features_Demo.b
settings:
  co_review_window: 365
  co_review_min_users: 1
  negatives: auto
experiments:
  - name: men-co_review
    category: "Clothing, Shoes & Jewelry > Men"
    graph: co_review
    features: image
    models: [wnn]
`, "DATA", data)
	j, err := job.Parse(filepath.Join(t.TempDir(), "job.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stageSet := named("ingest", "bow-shard", "features", "negatives", "split")
	if _, err := runStages(context.Background(), j, stageSet, nil, pipeline.Options{RunDir: dir}); err != nil {
		t.Fatal(err)
	}
	exp := filepath.Join(dir, "men-co_review")
	edges := open(t, filepath.Join(exp, "ingest", "edges.parquet"))
	subs := must(open(t, filepath.Join(exp, "ingest", "items.parquet")).Strings("subcategory"))(t)
	si, di := must(edges.Int32s("src_idx"))(t), must(edges.Int32s("dst_idx"))(t)
	if len(si) < 50 {
		t.Fatalf("%d co_review edges on the demo; want enough to split", len(si))
	}
	for k := range si {
		if subs[si[k]] == subs[di[k]] {
			t.Fatalf("edge %d joins two items of %s", k, subs[si[k]])
		}
	}
	pos := open(t, filepath.Join(exp, "negatives", "positives.parquet"))
	if g := must(pos.Strings("graph"))(t); len(g) == 0 || g[0] != "co_review" {
		t.Errorf("positives' graph %q, want co_review", g[:min(1, len(g))])
	}
	isEdge := map[[2]int32]bool{}
	for k := range si {
		isEdge[[2]int32{si[k], di[k]}] = true
	}
	pairs := open(t, filepath.Join(exp, "split", "pairs.parquet"))
	x, y, label := must(pairs.Int32s("x_idx"))(t), must(pairs.Int32s("y_idx"))(t), must(pairs.Int8s("label"))(t)
	var npos int
	for k := range x {
		if (label[k] == 1) != isEdge[[2]int32{x[k], y[k]}] {
			t.Fatalf("pair %d (%d, %d): label %d, but edge %v", k, x[k], y[k], label[k], isEdge[[2]int32{x[k], y[k]}])
		}
		if label[k] == 1 {
			npos++
		}
	}
	if npos != len(si) {
		t.Errorf("%d positive pairs, want the %d edges", npos, len(si))
	}
}

// TestIngest2023WithoutFormat: 2023 files named without data.format are
// refused, and the error says which setting is missing.
func TestIngest2023WithoutFormat(t *testing.T) {
	dir := t.TempDir()
	meta := filepath.Join(dir, "meta_Men.jsonl")
	if err := os.WriteFile(meta, []byte(strings.Join(meta2023Lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := strings.NewReplacer("META", meta, "REVIEWS", meta, `  format: "2023"`+"\n", "", "graph: co_review", "graph: bought_together").Replace(job2023)
	j, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, err = runStages(context.Background(), j, named("ingest"), nil, pipeline.Options{RunDir: filepath.Join(dir, "run"), Only: "ingest"})
	const want = `meta_Men.jsonl holds no product records (8 lines); first reject: line 1: field categories: expected a list, found a string at byte 167 (a file of the 2023 release? set data.format: "2023")`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an error containing %q", err, want)
	}

	// And a 2014 file read as 2023.
	old := filepath.Join(dir, "meta_Old.json")
	if err := os.WriteFile(old, []byte("{'asin': 'A1', 'categories': [['Clothing, Shoes & Jewelry', 'Men', 'Shoes']]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src = strings.NewReplacer("META", old, "REVIEWS", old).Replace(job2023)
	if j, err = job.Parse(filepath.Join(dir, "job.yaml"), []byte(src)); err != nil {
		t.Fatal(err)
	}
	_, err = runStages(context.Background(), j, named("ingest"), nil, pipeline.Options{RunDir: filepath.Join(dir, "run2"), Only: "ingest"})
	const want2 = "meta_Old.json holds no product records (1 lines); first reject: line 1: field categories: expected a string, found a list at byte 30 (a file of the 2014 or 2018 release? leave data.format unset)"
	if err == nil || !strings.Contains(err.Error(), want2) {
		t.Fatalf("got %v, want an error containing %q", err, want2)
	}
}

// TestIngestKey: an experiment on a list graph of the 2014/2018 files keys
// ingest exactly as before data.format and co_review existed (so its cached
// outputs stay valid); a co_review experiment keys its settings, and a 2023
// one its format.
func TestIngestKey(t *testing.T) {
	j := loadTestJob(t)
	r := j.Resolve(0)
	key := func(r *job.Resolved) string {
		params := Ingest{}.Params(r)
		b, err := json.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := key(&r), `{"category":"Clothing, Shoes \u0026 Jewelry \u003e Men","depth":1,"graph":"also_bought","features":"image","reject_ratio":0.001}`; got != want {
		t.Errorf("list graph: key %s, want %s", got, want)
	}
	r.Graph = "co_review"
	r.Data.Format = "2023"
	if got, want := key(&r), `{"category":"Clothing, Shoes \u0026 Jewelry \u003e Men","depth":1,"graph":"co_review","features":"image","reject_ratio":0.001,"format":"2023","co_review":{"window_days":30,"min_users":2,"max_user_items":1000}}`; got != want {
		t.Errorf("co_review: key %s, want %s", got, want)
	}
}

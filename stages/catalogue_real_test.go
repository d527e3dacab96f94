package stages

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"monomer/amazon"
	"monomer/job"
	"monomer/pipeline"
	"monomer/schema"
)

// asCatalogue writes the products of the release file meta and the
// reviews of reviews as catalogue tables (Parquet) in dir, exactly as the
// files give them: every product with a category path, every entry of
// every product's three related lists as a pair (also those naming an ASIN in no metadata
// line), every review as a document (also those of such ASINs). extra
// rows are appended to the relations table as they are.
func asCatalogue(t *testing.T, dir, meta, reviews string, extra schema.CatalogueRelationsCols) (items, relations, text string) {
	t.Helper()
	var it schema.CatalogueItemsCols
	var rc schema.CatalogueRelationsCols
	_, err := amazon.ReadMeta(context.Background(), meta, func(p *amazon.Product) error {
		for g, list := range [][]string{p.AlsoBought, p.AlsoViewed, p.BoughtTogether} {
			for _, d := range list {
				rc.Src, rc.Dst = append(rc.Src, p.ASIN), append(rc.Dst, d)
				rc.Relation = append(rc.Relation, []string{"also_bought", "also_viewed", "bought_together"}[g])
			}
		}
		if len(p.Categories) == 0 {
			return nil // the items table's "no categories"; out of every scope on the Amazon path
		}
		it.ID, it.Title, it.Brand = append(it.ID, p.ASIN), append(it.Title, p.Title), append(it.Brand, p.Brand)
		it.Categories = append(it.Categories, p.Clone().Categories)
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rc.Src, rc.Dst, rc.Relation = append(rc.Src, extra.Src...), append(rc.Dst, extra.Dst...), append(rc.Relation, extra.Relation...)
	var tc schema.CatalogueTextCols
	for r, err := range amazon.Reviews(reviews, nil, nil) {
		if err != nil {
			t.Fatal(err)
		}
		tc.ID, tc.Summary, tc.Text = append(tc.ID, r.ASIN), append(tc.Summary, r.Summary), append(tc.Text, r.ReviewText)
	}
	items, relations, text = filepath.Join(dir, "items.parquet"), filepath.Join(dir, "relations.parquet"), filepath.Join(dir, "text.parquet")
	for _, err := range []error{must2(schema.Write(items, it)), must2(schema.Write(relations, rc)), must2(schema.Write(text, tc))} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return items, relations, text
}

func must2(_ int64, err error) error { return err }

// writeShape writes, in dir, a 2014 metadata file and a reviews file of
// the shape of real data: 60 products in three subcategories of Shop and
// 20 of another category, each also_bought list of 12 entries naming
// mostly ASINs in no metadata line (8), then two products of the scope in
// other subcategories, one of its own, one outside the category, and
// reviews of every product and of ASINs outside the metadata.
func writeShape(t *testing.T, dir string) (meta, reviews string) {
	t.Helper()
	asin := func(k int) string { return fmt.Sprintf("B%09d", k) }
	var m, r strings.Builder
	for k := range 80 {
		cat := fmt.Sprintf("[['Shop', 'S%d']]", k%3)
		if k >= 60 {
			cat = "[['Other', 'O']]"
		}
		var rel []string
		for u := range 8 {
			rel = append(rel, "'"+asin(1000+k*8+u)+"'") // in no metadata line
		}
		rel = append(rel, "'"+asin((k+1)%60)+"'", "'"+asin((k+2)%60)+"'", "'"+asin((k+3)%60)+"'", "'"+asin(60+k%20)+"'")
		fmt.Fprintf(&m, "{'asin': '%s', 'title': 'Product %d', 'categories': %s, 'related': {'also_bought': [%s]}}\n", asin(k), k, cat, strings.Join(rel, ", "))
		fmt.Fprintf(&r, `{"asin": "%s", "summary": "Fine", "reviewText": "A soft shirt of cotton %d."}`+"\n", asin(k), k)
		fmt.Fprintf(&r, `{"asin": "%s", "summary": "Gone", "reviewText": "A product no longer listed."}`+"\n", asin(5000+k))
	}
	meta, reviews = filepath.Join(dir, "meta_Shape.json"), filepath.Join(dir, "reviews_Shape.json")
	for p, s := range map[string]string{meta: m.String(), reviews: r.String()} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return meta, reviews
}

// ingestStats reads the stats of an experiment's ingest manifest.
func ingestStats(t *testing.T, run, exp string) map[string]any {
	t.Helper()
	var m struct {
		Stats map[string]any `json:"stats"`
	}
	raw, err := os.ReadFile(filepath.Join(run, exp, "ingest", "manifest.json"))
	if err == nil {
		err = json.Unmarshal(raw, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m.Stats
}

// twoDoors runs ingest on the release files meta and reviews and on the
// same data as catalogue tables (with extra relation rows), and checks
// that both write the same items, edges and reviews tables and count the
// same drops; it returns the catalogue run's directory and log.
func twoDoors(t *testing.T, meta, reviews, category, graph string, extra schema.CatalogueRelationsCols) (string, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	items, relations, text := asCatalogue(t, dir, meta, reviews, extra)
	src := fmt.Sprintf("name: shape\ndata: DATA\nexperiments:\n  - {name: e, category: %q, graph: %s, features: bow}\n", category, graph)
	runs := map[string]string{}
	var logs bytes.Buffer
	for door, data := range map[string]string{
		"amazon":    fmt.Sprintf("{meta: %q, reviews: %q}", meta, reviews),
		"catalogue": fmt.Sprintf("{format: catalogue, items: %q, relations: %q, text: %q}", items, relations, text),
	} {
		j, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(strings.Replace(src, "DATA", data, 1)))
		if err != nil {
			t.Fatal(err)
		}
		run := t.TempDir()
		opts := pipeline.Options{RunDir: run, Only: "ingest"}
		if door == "catalogue" {
			opts.Logger = pipeline.NewLogger(&logs, false)
		}
		if _, err := runStages(context.Background(), j, Experiment(), Job(), opts); err != nil {
			t.Fatalf("%s door: %v", door, err)
		}
		runs[door] = run
	}
	for _, f := range []string{"items.parquet", "edges.parquet", "reviews.parquet"} {
		a, errA := os.ReadFile(filepath.Join(runs["amazon"], "e", "ingest", f))
		b, errB := os.ReadFile(filepath.Join(runs["catalogue"], "e", "ingest", f))
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between the two doors", f)
		}
	}
	am, cat := ingestStats(t, runs["amazon"], "e"), ingestStats(t, runs["catalogue"], "e")
	// A product without a category path is out of scope on the Amazon
	// path and no row of the items table: a pair naming it counts under
	// out_of_scope through one door and unknown through the other.
	n := func(s map[string]any, k string) float64 { v, _ := s[k].(float64); return v }
	for k := range am {
		if !strings.HasPrefix(k, "edges") {
			continue
		}
		a, c := n(am, k), n(cat, k)
		if end, ok := strings.CutPrefix(k, "edges_dropped_"); ok && (strings.HasSuffix(end, "_out_of_scope") || strings.HasSuffix(end, "_unknown")) {
			end, _, _ = strings.Cut(end, "_")
			a = n(am, "edges_dropped_"+end+"_out_of_scope") + n(am, "edges_dropped_"+end+"_unknown")
			c = n(cat, "edges_dropped_"+end+"_out_of_scope") + n(cat, "edges_dropped_"+end+"_unknown")
		}
		if a != c {
			t.Errorf("%s: %v through the Amazon door, %v through the catalogue's", k, a, c)
		}
	}
	return runs["catalogue"], &logs
}

// TestCatalogueRealShape: a relations table written exactly as a 2014
// metadata file gives its related lists, whose pairs mostly name ASINs in
// no metadata line, runs through the catalogue door and gives the Amazon
// door's items, edges and reviews, with every drop counted, and a WARN
// giving the share of pairs naming no item. Pairs of a relation the
// experiment does not read, with ids of no item or none at all, change
// nothing. Before, each such pair was an "unknown item" reject (or a
// "missing src"), and 8 in 12 of them failed ingest over reject_ratio.
func TestCatalogueRealShape(t *testing.T) {
	meta, reviews := writeShape(t, t.TempDir())
	other := schema.CatalogueRelationsCols{
		Src:      []string{"RETIRED1", "", "B000000001"},
		Dst:      []string{"B000000002", "B000000003", ""},
		Relation: []string{"returned_together", "returned_together", "returned_together"},
	}
	run, logs := twoDoors(t, meta, reviews, "Shop", "also_bought", other)
	st := ingestStats(t, run, "e")
	want := map[string]float64{
		// 60 in-scope lists of 12: 8 unknown, 1 out of the category,
		// 2 of 3 in-scope targets in other subcategories (k+3 shares k's).
		"edges":                             120,
		"edges_dropped_target_unknown":      480,
		"edges_dropped_target_out_of_scope": 60,
		"edges_dropped_same_subcategory":    60,
		"edges_dropped_source_out_of_scope": 20 * 12,
		"edges_dropped_source_unknown":      0,
		"text_docs_dropped_unknown":         80,
	}
	for k, v := range want {
		if st[k] != v {
			t.Errorf("%s = %v, want %v", k, st[k], v)
		}
	}
	var found bool
	for _, w := range warnings(t, logs, "ingest") {
		if msg := fmt.Sprint(w["msg"]); strings.Contains(msg, "relations.parquet: 640 of 960 also_bought pairs (66.7%) name an id that is in no row of items.parquet (0 as src, 640 as dst)") {
			found = true
		}
	}
	if !found {
		t.Errorf("no WARN giving the share of pairs naming no item: %s", logs)
	}
	if rejected := must(schema.NumRows(filepath.Join(run, "e", "ingest", "rejects.parquet")))(t); rejected != 0 {
		t.Errorf("%d rejects, want none: the other relation's rows are not the experiment's", rejected)
	}
}

// TestCatalogueRealSample: the real 2018 Magazine Subscriptions sample
// (../shared/realdata), its related lists and reviews written as
// catalogue tables exactly as the files give them, gives the Amazon
// door's items, edges and reviews.
func TestCatalogueRealSample(t *testing.T) {
	data := realDataDir(t)
	twoDoors(t, filepath.Join(data, "meta_Magazine_Subscriptions.json.gz"), filepath.Join(data, "Magazine_Subscriptions_5.json.gz"),
		"Magazine Subscriptions", "also_bought", schema.CatalogueRelationsCols{})
}

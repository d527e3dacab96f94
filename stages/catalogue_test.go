package stages

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"monomer/amazon"
	"monomer/job"
	"monomer/pipeline"
	"monomer/schema"
)

// demoAsCatalogue writes the committed demo's 2014 files as catalogue
// tables in dir: every product with all its category paths, the pairs of
// its three related lists naming a product of the file (ingest drops the
// others through both doors alike: TestCatalogueRealShape), and every
// review of a product as a document with its summary and text, in the
// files' order. Products without a
// category path, which the 2014 reader keeps and no experiment scopes,
// are left out, as the items table would reject them. It returns the
// three tables' paths, Parquet or (csv) CSV with categories as JSON.
func demoAsCatalogue(t *testing.T, dir string, asCSV bool) (items, relations, text string) {
	t.Helper()
	data, err := filepath.Abs(testData)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var it schema.CatalogueItemsCols
	type lists struct {
		asin string
		ab   [3][]string
	}
	var rel []lists
	known := map[string]bool{}
	skipped := 0
	_, err = amazon.ReadMeta(ctx, filepath.Join(data, "meta_Demo.json.gz"), func(p *amazon.Product) error {
		if len(p.Categories) == 0 || slices.ContainsFunc(p.Categories, func(c []string) bool { return len(c) == 0 || slices.Contains(c, "") }) {
			skipped++
			return nil
		}
		known[p.ASIN] = true
		it.ID, it.Title, it.Brand = append(it.ID, p.ASIN), append(it.Title, p.Title), append(it.Brand, p.Brand)
		it.Categories = append(it.Categories, p.Clone().Categories) // the reader reuses its slices
		rel = append(rel, lists{p.ASIN, [3][]string{slices.Clone(p.AlsoBought), slices.Clone(p.AlsoViewed), slices.Clone(p.BoughtTogether)}})
		return nil
	}, func(amazon.Reject) {})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d products without a category path left out", skipped)
	var rc schema.CatalogueRelationsCols
	for _, r := range rel {
		for g, name := range []string{"also_bought", "also_viewed", "bought_together"} {
			for _, d := range r.ab[g] {
				if known[d] {
					rc.Src, rc.Dst, rc.Relation = append(rc.Src, r.asin), append(rc.Dst, d), append(rc.Relation, name)
				}
			}
		}
	}
	var tc schema.CatalogueTextCols
	for r, err := range amazon.Reviews(filepath.Join(data, "reviews_Demo.json.gz"), func(amazon.Reject) {}, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if known[r.ASIN] {
			tc.ID, tc.Summary, tc.Text = append(tc.ID, r.ASIN), append(tc.Summary, r.Summary), append(tc.Text, r.ReviewText)
		}
	}
	items, relations, text = filepath.Join(dir, "items"), filepath.Join(dir, "relations"), filepath.Join(dir, "text")
	if !asCSV {
		for _, w := range []func() (int64, error){
			func() (int64, error) { return schema.Write(items, it) },
			func() (int64, error) { return schema.Write(relations, rc) },
			func() (int64, error) { return schema.Write(text, tc) },
		} {
			if _, err := w(); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	writeCSVFile := func(path string, header []string, n int, row func(i int) []string) {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		w.Write(header)
		for i := range n {
			w.Write(row(i))
		}
		w.Flush()
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeCSVFile(items, []string{"id", "title", "brand", "categories"}, len(it.ID), func(i int) []string {
		c, _ := json.Marshal(it.Categories[i])
		return []string{it.ID[i], it.Title[i], it.Brand[i], string(c)}
	})
	writeCSVFile(relations, []string{"src", "dst", "relation"}, len(rc.Src), func(i int) []string {
		return []string{rc.Src[i], rc.Dst[i], rc.Relation[i]}
	})
	writeCSVFile(text, []string{"id", "summary", "text"}, len(tc.ID), func(i int) []string {
		return []string{tc.ID[i], tc.Summary[i], tc.Text[i]}
	})
	return
}

// demoJob is jobs/demo.yaml with a short training budget (the tables
// compared do not depend on it), reading the catalogue tables if items
// is not "".
func demoJob(t *testing.T, items, relations, text string) *job.Job {
	t.Helper()
	j, err := job.Load("../jobs/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j.Settings.K, j.Settings.MonomerK, j.Settings.N = 6, 2, 2
	j.Settings.Topics = 5
	j.Settings.Lambdas = []float64{1e-4}
	j.Settings.MaxIter = 15
	if items != "" {
		data, err := filepath.Abs(testData)
		if err != nil {
			t.Fatal(err)
		}
		j.Data = job.Data{Format: job.FormatCatalogue, Items: items, Relations: relations, Text: text,
			ImageFeatures: filepath.Join(data, "image_features_Demo.b")}
	}
	if err := j.Validate(); err != nil {
		t.Fatal(err)
	}
	return j
}

// TestCatalogueTwoDoors: the committed demo read as its 2014 files and
// as catalogue tables holding the same data (Parquet, and CSV) gives
// byte-identical items, edges and reviews tables for both of its
// experiments (image and bag of words, also_bought), and hence, through
// training and evaluation, byte-identical metrics and predictions.
func TestCatalogueTwoDoors(t *testing.T) {
	through := slices.IndexFunc(Experiment(), func(s Stage) bool { return s.Name() == "evaluate" })
	run := func(j *job.Job, stages []Stage) string {
		dir := t.TempDir()
		if _, err := runStages(t.Context(), j, stages, nil, pipeline.Options{RunDir: dir}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	amazonRun := run(demoJob(t, "", "", ""), Experiment()[:through+1])
	tables := []string{"ingest/items.parquet", "ingest/edges.parquet", "ingest/reviews.parquet"}
	outputs := append(slices.Clone(tables), "evaluate/metrics.parquet", "evaluate/predictions.parquet")
	for _, format := range []string{"parquet", "csv"} {
		t.Run(format, func(t *testing.T) {
			items, relations, text := demoAsCatalogue(t, t.TempDir(), format == "csv")
			stages, compare := Experiment()[:through+1], outputs
			if format == "csv" {
				stages, compare = Experiment()[:1], tables // the same tables, so the same rest
			}
			catRun := run(demoJob(t, items, relations, text), stages)
			for _, exp := range []string{"men-also_bought-image", "men-also_bought-bow"} {
				for _, f := range compare {
					a, errA := os.ReadFile(filepath.Join(amazonRun, exp, f))
					b, errB := os.ReadFile(filepath.Join(catRun, exp, f))
					if errors.Is(errA, os.ErrNotExist) && errors.Is(errB, os.ErrNotExist) && strings.HasSuffix(f, "reviews.parquet") && strings.Contains(exp, "image") {
						continue // an image experiment keeps no reviews
					}
					if errA != nil || errB != nil {
						t.Fatal(errA, errB)
					}
					if !bytes.Equal(a, b) {
						t.Errorf("%s %s differs between the two doors", exp, f)
					}
				}
			}
		})
	}
}

// TestCatalogueIngestErrors: a graph naming a relation the table lacks
// (or has in another case) fails listing the names it holds, quoted, and
// how to fix it; rejects over the ratio fail with the file, row and reason
// and keep the rejects table; a table without a required column, without a
// valid row or with an unclosed quote is bad input, a missing one missing
// input; under the ratio the rejects are the
// stage's rejects table.
func TestCatalogueIngestErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("items.csv", "id,title,categories\nA1,Shirt,Shop > Men > Shirts\nA2,Shoe,Shop > Men > Shoes\nA3,Hat,Shop > Men > Hats\n,Nameless,Shop > Men > Hats\n")
	write("pairs.csv", "src,dst,relation\nA1,A2,bought_together\nA2,A3,bought_together\nA1,A3,returned_together\n")
	write("noid.csv", "sku,title,categories\nA1,Shirt,Shop > Men\n")
	write("noids.csv", "id,title,categories\n,Shirt,Shop > Men > Shirts\n,Shoe,Shop > Men > Shoes\n")
	write("open.csv", "id,title,categories\nA1,\"Shirt,Shop > Men > Shirts\nA2,Shoe,Shop > Men > Shoes\nA3,Hat,Shop > Men > Hats\n")
	write("text.csv", "id,text\nA1,Soft cotton\nA2,Warm leather\nA3,Wool\n")
	for _, tc := range []struct {
		name, graph, ratio, items string
		want                      []string // in the error; none: it runs
	}{
		{"unknown relation", "viewed_together", "0.5", "items.csv",
			[]string{`graph "viewed_together": pairs.csv holds no valid pair of that relation; its relations are "bought_together" (2 pairs), "returned_together" (1 pair); set the experiment's graph to one of them`}},
		{"relation of another case", "Bought_Together", "0.5", "items.csv",
			[]string{`graph "Bought_Together": pairs.csv holds no valid pair of that relation; its relations are "bought_together" (2 pairs)`}},
		{"over the ratio", "bought_together", "0.05", "items.csv",
			[]string{"items.csv: 1 of 4 lines rejected (over reject_ratio 0.05); first: line 5 (byte 101): missing id", "ingest.failed.rejects.parquet"}},
		{"no id column", "bought_together", "0.5", "noid.csv", []string{"noid.csv: no column id in the header (sku, title, categories)"}},
		{"no valid row", "bought_together", "0.5", "noids.csv",
			[]string{"noids.csv holds no items (2 rows read, 2 rejected); first reject: line 2 (byte 20): missing id"}},
		{"unclosed quote", "bought_together", "0.5", "open.csv",
			[]string{"open.csv: unclosed quote: a quoted field of the row at line 2 is never closed, so lines 2..4 were read as one cell"}},
		{"missing table", "bought_together", "0.5", "gone.csv", []string{"gone.csv"}},
		{"under the ratio", "bought_together", "0.5", "items.csv", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "name: shop\ndata: {format: catalogue, items: " + tc.items + ", relations: pairs.csv, text: text.csv}\nsettings: {reject_ratio: " + tc.ratio + "}\n" +
				"experiments:\n  - {name: men, category: Shop > Men, graph: " + tc.graph + ", features: bow}\n"
			j, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			run := t.TempDir()
			_, err = runStages(context.Background(), j, Experiment(), Job(), pipeline.Options{RunDir: run, Only: "ingest"})
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				tb := open(t, filepath.Join(run, "men", "ingest", "rejects.parquet"))
				if lines := must(tb.Int64s("line"))(t); len(lines) != 1 || lines[0] != 5 {
					t.Errorf("rejects at lines %v, want [5]", lines)
				}
				if n := must(schema.NumRows(filepath.Join(run, "men", "ingest", "edges.parquet")))(t); n != 2 {
					t.Errorf("%d edges, want the 2 bought_together pairs", n)
				}
				return
			}
			want := pipeline.ErrBadInput
			if tc.items == "gone.csv" {
				want = pipeline.ErrMissingInput // exit 5: retryable
			}
			if !errors.Is(err, want) {
				t.Fatalf("%v, want %v", err, want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nwant %q in it", err, w)
				}
			}
		})
	}
}

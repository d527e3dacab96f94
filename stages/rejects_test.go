package stages

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"monomer/job"
	"monomer/pipeline"
	"monomer/schema"
)

// warnings returns the WARN lines a stage logged, as decoded JSON.
func warnings(t *testing.T, logs *bytes.Buffer, stage string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if l["level"] == slog.LevelWarn.String() && l["stage"] == stage {
			out = append(out, l)
		}
	}
	return out
}

// runIngest runs ingest alone on the job src (data paths relative to
// data), logging into logs.
func runIngest(t *testing.T, data, src string, logs *bytes.Buffer) error {
	t.Helper()
	j, err := job.Parse(filepath.Join(data, "job.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	opts := pipeline.Options{RunDir: t.TempDir(), Only: "ingest", Logger: pipeline.NewLogger(logs, false)}
	_, err = runStages(context.Background(), j, Experiment(), Job(), opts)
	return err
}

// TestRejectRatioPerFile: reject_ratio applies to each input file against
// its own lines. One broken metadata line of three is a third of that file
// even beside twenty good review lines (which once diluted it to 4 %), and
// under the ratio every file with rejects gets one WARN naming it.
func TestRejectRatioPerFile(t *testing.T) {
	data := t.TempDir()
	meta := "{'asin': 'B000000001', 'title': 'Shirt', 'categories': [['Clothing, Shoes & Jewelry', 'Men', 'Shirts']], 'related': {'also_bought': ['B000000002']}}\n" +
		"{'asin': 'B000000002', 'title': 'Shoe', 'categories': [['Clothing, Shoes & Jewelry', 'Men', 'Shoes']]}\n" +
		"{'asin': 'B000000003', 'title': 'unterminated}\n"
	var reviews strings.Builder
	for k := range 20 {
		fmt.Fprintf(&reviews, `{"asin": "B00000000%d", "reviewText": "Soft cotton shirt %d.", "overall": 5}`+"\n", 1+k%2, k)
	}
	reviews.WriteString("not json\n")
	if err := os.WriteFile(filepath.Join(data, "meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "reviews.json"), []byte(reviews.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "name: rejects\ndata: {meta: meta.json, reviews: reviews.json}\nsettings: {reject_ratio: RATIO}\n" +
		"experiments:\n  - {name: men, category: \"Clothing, Shoes & Jewelry > Men\", graph: also_bought, features: bow}\n"

	var logs bytes.Buffer
	err := runIngest(t, data, strings.Replace(src, "RATIO", "0.1", 1), &logs)
	if !errors.Is(err, pipeline.ErrBadInput) || !strings.Contains(err.Error(), "meta.json: 1 of 3 lines rejected (over reject_ratio 0.1)") {
		t.Fatalf("err = %v, want the metadata's own share over the ratio", err)
	}

	logs.Reset()
	if err := runIngest(t, data, strings.Replace(src, "RATIO", "0.5", 1), &logs); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, w := range warnings(t, &logs, "ingest") {
		file, _ := w["file"].(string)
		n, _ := w["rejects"].(float64)
		got[filepath.Base(file)] = n
		if !strings.Contains(fmt.Sprint(w["msg"]), filepath.Base(file)+": 1 of ") {
			t.Errorf("warning %q does not name the file and count", w["msg"])
		}
	}
	if want := map[string]float64{"meta.json": 1, "reviews.json": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("warned rejects %v, want one WARN per file %v", got, want)
	}
}

// TestCoReviewRejects: in a co_review experiment a review without a time
// or a user, or with a time outside the release's span, is a reject with
// its reason, counted against reject_ratio (it was once a review at 1970
// or of nobody, dropped uncounted); a file whose times are all seconds
// where the 2023 release has milliseconds fails with exit 3 saying so.
func TestCoReviewRejects(t *testing.T) {
	dir := t.TempDir()
	meta := filepath.Join(dir, "meta_Men.jsonl")
	if err := os.WriteFile(meta, []byte(strings.Join(slicesWithout(meta2023Lines, `"BAD"`), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := slicesWithout(reviews2023Lines, `"timestamp": "soon"`)
	broken := append([]string(nil), good...)
	broken[0] = strings.Replace(broken[0], `, "timestamp": 1600000000000`, "", 1)
	broken[2] = strings.Replace(broken[2], `"user_id": "u2"`, `"user_id": ""`, 1)
	broken[4] = strings.Replace(broken[4], `"timestamp": 1600000000000`, `"timestamp": 1600000000`, 1)
	var seconds []string
	for _, l := range good {
		i := strings.Index(l, `"timestamp": `) + len(`"timestamp": `)
		j := i + strings.IndexByte(l[i:], ',')
		seconds = append(seconds, l[:j-3]+l[j:]) // milliseconds cut to seconds
	}
	for _, tc := range []struct {
		name    string
		lines   []string
		ratio   string
		wantErr string
	}{
		{"under the ratio", broken, "0.2", ""},
		{"over the ratio", broken, "0.1", "Men.jsonl: 3 of 25 lines rejected (over reject_ratio 0.1); first: line 1"},
		{"seconds", seconds, "0.2", "25 of 25 timestamp values lie in 1995-01-01 to 2024-01-01 only read as seconds, but this release gives milliseconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reviews := filepath.Join(dir, "Men.jsonl")
			if err := os.WriteFile(reviews, []byte(strings.Join(tc.lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			src := strings.NewReplacer("META", meta, "REVIEWS", reviews, "reject_ratio: 0.2 # the metadata's 1 of 8", "reject_ratio: "+tc.ratio).Replace(job2023)
			j, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			run := filepath.Join(t.TempDir(), "run")
			_, err = runStages(context.Background(), j, named("ingest"), nil, pipeline.Options{RunDir: run, Only: "ingest"})
			if tc.wantErr != "" {
				if !errors.Is(err, pipeline.ErrBadInput) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want exit 3 with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rej := open(t, filepath.Join(run, "men", "ingest", "rejects.parquet"))
			var rows []string
			files, lines, errs := must(rej.Strings("file"))(t), must(rej.Int64s("line"))(t), must(rej.Strings("error"))(t)
			for k := range files {
				if files[k] == "Men.jsonl" {
					rows = append(rows, fmt.Sprintf("%d %s", lines[k], errs[k]))
				}
			}
			want := []string{
				"1 no timestamp (co_review needs the review's time)",
				"3 no user_id (co_review relates items through their reviewer)",
				"5 timestamp 1600000000 outside the release's span, 1995-01-01 to 2024-01-01, in milliseconds (in seconds?)",
			}
			if fmt.Sprint(rows) != fmt.Sprint(want) {
				t.Errorf("review rejects\n%q\nwant\n%q", rows, want)
			}
		})
	}
}

// slicesWithout is lines without those containing s.
func slicesWithout(lines []string, s string) []string {
	var out []string
	for _, l := range lines {
		if !strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// TestTooFewEdges: the demo's co_review graph at the default settings has
// a single edge. It once failed at negatives as "too dense" (exit 1,
// retried), and negatives: auto then trained on 6 pairs with test errors
// of 0 and 1; now negatives fails with exit 3, the counts and the cause,
// whatever the negatives method.
func TestTooFewEdges(t *testing.T) {
	data, err := filepath.Abs(testData)
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"rewire", "auto"} {
		t.Run(method, func(t *testing.T) {
			src := strings.NewReplacer("DATA", data, "METHOD", method).Replace(`
name: co-review-defaults
data_dir: DATA
data: {meta: meta_Demo.json.gz, reviews: reviews_Demo.json.gz, image_features: image_features_Demo.b}
settings: {negatives: METHOD}
experiments:
  - {name: men, category: "Clothing, Shoes & Jewelry > Men", graph: co_review, features: image, models: [wnn]}
`)
			j, err := job.Parse(filepath.Join(t.TempDir(), "job.yaml"), []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			_, err = runStages(context.Background(), j, named("ingest", "bow-shard", "features", "negatives", "split"), nil, pipeline.Options{RunDir: t.TempDir()})
			if !errors.Is(err, pipeline.ErrBadInput) || !strings.Contains(err.Error(), "graph co_review has 1 edges between items with features (of 1 from ingest), fewer than the 9") ||
				!strings.Contains(err.Error(), "co_review_min_users too strict") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// TestCatalogueRejectPlaces: a file's first reject, in its WARN and in the
// failure over the ratio, is that file's own, placed as rows for a Parquet
// table and as lines for CSV. Two inputs with one base name in different
// folders once reported each other's first reject (matched by base name),
// and a Parquet table's WARN said "line" for a row.
func TestCatalogueRejectPlaces(t *testing.T) {
	data := t.TempDir()
	write := func(name, content string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(data, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// a/data.csv: 1 of 4 rows rejected; b/data.csv: 1 of 3.
	write("a/data.csv", "id,title,categories\nA1,Shirt,Shop > Men > Shirts\nA2,Shoe,Shop > Men > Shoes\nA3,Hat,Shop > Men > Hats\n,Nameless,Shop > Men > Hats\n")
	write("b/data.csv", "src,dst,relation\nA1,A2,bought_together\nA1,,bought_together\nA2,A3,bought_together\n")
	write("text.csv", "id,text\nA1,Soft cotton\nA2,Warm leather\nA3,Wool\n")
	if _, err := schema.Write(filepath.Join(data, "items.parquet"), schema.CatalogueItemsCols{
		ID:         []string{"A1", "A2", "A3", ""},
		Title:      []string{"Shirt", "Shoe", "Hat", "Nameless"},
		Brand:      []string{"", "", "", ""},
		Categories: [][][]string{{{"Shop", "Men", "Shirts"}}, {{"Shop", "Men", "Shoes"}}, {{"Shop", "Men", "Hats"}}, {{"Shop", "Men", "Hats"}}},
	}); err != nil {
		t.Fatal(err)
	}
	src := "name: shop\ndata: {format: catalogue, items: ITEMS, relations: b/data.csv, text: text.csv}\nsettings: {reject_ratio: RATIO}\n" +
		"experiments:\n  - {name: men, category: Shop > Men, graph: bought_together, features: bow}\n"
	job := func(items, ratio string) string {
		return strings.NewReplacer("ITEMS", items, "RATIO", ratio).Replace(src)
	}
	for _, tc := range []struct {
		items string
		want  []string // the WARN lines
	}{
		{"a/data.csv", []string{
			"data.csv: 1 of 4 lines rejected (first: line 5 (byte 101): missing id)",
			"data.csv: 1 of 3 lines rejected (first: line 3 (byte 39): missing dst",
		}},
		{"items.parquet", []string{
			"items.parquet: 1 of 4 lines rejected (first: row 4: missing id)",
			"data.csv: 1 of 3 lines rejected (first: line 3 (byte 39): missing dst",
		}},
	} {
		var logs bytes.Buffer
		if err := runIngest(t, data, job(tc.items, "0.5"), &logs); err != nil {
			t.Fatal(err)
		}
		ws := warnings(t, &logs, "ingest")
		if len(ws) != len(tc.want) {
			t.Fatalf("%s: %d WARN lines %v, want %d", tc.items, len(ws), ws, len(tc.want))
		}
		for k, w := range ws {
			if msg := fmt.Sprint(w["msg"]); !strings.Contains(msg, tc.want[k]) {
				t.Errorf("%s: WARN %q\nwant %q in it", tc.items, msg, tc.want[k])
			}
		}
	}
	// Over a ratio the relations table (1 of 3) passes and the items (1
	// of 4) do not: the failure names the relations' own first reject.
	err := runIngest(t, data, job("a/data.csv", "0.3"), &bytes.Buffer{})
	if want := "data.csv: 1 of 3 lines rejected (over reject_ratio 0.3); first: line 3 (byte 39): missing dst"; !errors.Is(err, pipeline.ErrBadInput) || !strings.Contains(err.Error(), want) {
		t.Errorf("%v\nwant %q in it", err, want)
	}
}

package stages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"monomer/job"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// writeShop writes a catalogue of 20 items in four subcategories of Shop
// (items.csv), the relation rows given and one text row per item, in dir.
// An item row holding "BAD" in place of its categories is rejected.
func writeShop(t *testing.T, dir string, bad map[int]bool, pairs [][3]string) {
	t.Helper()
	var items, rels, text strings.Builder
	items.WriteString("id,title,categories\n")
	text.WriteString("id,text\n")
	for k := range 20 {
		cat := fmt.Sprintf("Shop > S%d", k%4)
		if bad[k] {
			cat = `"[[""Shop"", 3]]"`
		}
		fmt.Fprintf(&items, "I%02d,Shirt %d,%s\n", k, k, cat)
		fmt.Fprintf(&text, "I%02d,Soft cotton shirt %d\n", k, k)
	}
	rels.WriteString("src,dst,relation\n")
	for _, p := range pairs {
		fmt.Fprintf(&rels, "%s,%s,%s\n", p[0], p[1], p[2])
	}
	for name, s := range map[string]string{"items.csv": items.String(), "relations.csv": rels.String(), "text.csv": text.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const shopJob = "name: shop\ndata: {format: catalogue, items: items.csv, relations: relations.csv, text: text.csv}\nsettings: {reject_ratio: 0.1}\n" +
	"experiments:\n  - {name: e, category: Shop, graph: bought_together, features: bow}\n"

// TestCatalogueRejectNoCascade: one items row of 20 rejected (under the
// ratio 0.1) drops the 4 of 10 pairs and the document naming it without
// weighing them against the relations' and text's own ratios, and the
// WARN saying so names the items table first. Before, they were 4
// "unknown item" rejects of relations.csv, over its ratio: ingest failed
// naming relations.csv, and items.csv, the cause, not at all.
func TestCatalogueRejectNoCascade(t *testing.T) {
	dir := t.TempDir()
	var pairs [][3]string
	for k := range 6 {
		pairs = append(pairs, [3]string{fmt.Sprintf("I%02d", k), fmt.Sprintf("I%02d", k+1), "bought_together"})
	}
	pairs = append(pairs, [3]string{"I07", "I00", "bought_together"}, [3]string{"I00", "I09", "bought_together"},
		[3]string{"I07", "I10", "bought_together"}, [3]string{"I11", "I07", "bought_together"})
	writeShop(t, dir, map[int]bool{7: true}, pairs)
	var logs bytes.Buffer
	if err := runIngest(t, dir, shopJob, &logs); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, w := range warnings(t, &logs, "ingest") {
		msgs = append(msgs, fmt.Sprint(w["msg"]))
	}
	want := []string{
		"items.csv: 1 of 20 lines rejected (first: line 9 (byte ",
		"items.csv: its rejected rows are named by 3 bought_together pairs of relations.csv and 1 document of text.csv, dropped with them",
	}
	if len(msgs) != len(want) {
		t.Fatalf("WARN lines %q, want %d", msgs, len(want))
	}
	for k, w := range want {
		if !strings.HasPrefix(msgs[k], w) {
			t.Errorf("WARN %q\nwant %q", msgs[k], w)
		}
	}
}

// TestCatalogueSameSubcategoryGraph: a relation whose pairs all join items
// of one subcategory fails at ingest, exit 3, saying that the pairs join
// items of one subcategory and what to change. Before, ingest wrote an
// empty graph and the negatives stage failed after the features stage,
// blaming "the metadata's bought_together lists".
func TestCatalogueSameSubcategoryGraph(t *testing.T) {
	dir := t.TempDir()
	var pairs [][3]string
	for k := range 16 {
		pairs = append(pairs, [3]string{fmt.Sprintf("I%02d", k), fmt.Sprintf("I%02d", k+4), "bought_together"}) // k and k+4 share S(k%4)
	}
	pairs = append(pairs, [3]string{"I01", "I02", "viewed_together"})
	writeShop(t, dir, nil, pairs)
	err := runIngest(t, dir, shopJob, &bytes.Buffer{})
	want := `experiment e: graph "bought_together": the 16 bought_together pairs of relations.csv leave no edge between two items of the experiment in different subcategories: 16 join two items of one subcategory (depth 1 under "Shop")`
	if !errors.Is(err, pipeline.ErrBadInput) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "pair items of different subcategories") {
		t.Fatalf("%v\nwant exit 3 with %q", err, want)
	}
}

// TestMethodUsedAuto: negatives: auto that rewires says so, method_used
// "rewire" beside method "auto". It once said "auto", the setting, in the
// field that names the method that ran.
func TestMethodUsedAuto(t *testing.T) {
	j := demoJob(t, "", "", "")
	j.Experiments = j.Experiments[:1] // image features: no text to read
	j.Settings.Negatives = "auto"
	if err := j.Validate(); err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	for _, stage := range []string{"ingest", "features", "negatives"} {
		if _, err := runStages(t.Context(), j, Experiment(), Job(), pipeline.Options{RunDir: run, Only: stage}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(run, j.Experiments[0].Name, "negatives", cache.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m cache.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Stats["method"] != "auto" || m.Stats["method_used"] != "rewire" || m.Stats["fallback"] != nil {
		t.Errorf("stats method %v, method_used %v, fallback %v; want auto, rewire and none", m.Stats["method"], m.Stats["method_used"], m.Stats["fallback"])
	}
}

// TestItemsWithoutTerms: items whose text yields no vocabulary term (only
// stop words, a name such as "7UP") are counted and warned of at the
// features stage, naming the first of them; they once left
// feature_items without a word in the log.
func TestItemsWithoutTerms(t *testing.T) {
	dir := t.TempDir()
	var pairs [][3]string
	for k := range 19 {
		pairs = append(pairs, [3]string{fmt.Sprintf("I%02d", k), fmt.Sprintf("I%02d", k+1), "bought_together"})
	}
	writeShop(t, dir, nil, pairs)
	text, err := os.ReadFile(filepath.Join(dir, "text.csv"))
	if err != nil {
		t.Fatal(err)
	}
	text = bytes.Replace(text, []byte("I03,Soft cotton shirt 3"), []byte("I03,It is what it is."), 1)
	text = bytes.Replace(text, []byte("I05,Soft cotton shirt 5"), []byte("I05,7UP"), 1)
	if err := os.WriteFile(filepath.Join(dir, "text.csv"), text, 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(shopJob))
	if err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	var logs bytes.Buffer
	for _, stage := range []string{"ingest", "features"} {
		if _, err := runStages(t.Context(), j, Experiment(), Job(), pipeline.Options{RunDir: run, Only: stage, Logger: pipeline.NewLogger(&logs, false)}); err != nil {
			t.Fatal(err)
		}
	}
	kept := must(schema.NumRows(filepath.Join(run, "e", "features", "feature_items.parquet")))(t)
	ws := warnings(t, &logs, "features")
	want := fmt.Sprintf(`%d of 20 items have no vocabulary term in their text ("I03"`, 20-kept)
	if kept > 19 || len(ws) != 1 || !strings.HasPrefix(fmt.Sprint(ws[0]["msg"]), want) {
		t.Fatalf("%d items kept, WARN lines %v; want one starting %q", kept, ws, want)
	}
	t.Log(ws[0]["msg"])
}

// TestCatalogueEmptyText: a text table of no rows fails in a text table's
// words; it was "holds no review records (0 lines)".
func TestCatalogueEmptyText(t *testing.T) {
	dir := t.TempDir()
	writeShop(t, dir, nil, [][3]string{{"I00", "I01", "bought_together"}})
	if err := os.WriteFile(filepath.Join(dir, "text.csv"), []byte("id,text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := runIngest(t, dir, shopJob, &bytes.Buffer{})
	if want := "text.csv holds no documents (0 rows read)"; !errors.Is(err, pipeline.ErrBadInput) || !strings.Contains(err.Error(), want) {
		t.Fatalf("%v, want exit 3 with %q", err, want)
	}
}

// TestCatalogueLatin1: a Latin-1 byte in an items row is read as U+FFFD,
// as the Amazon readers read it, in the items table ingest writes, and a
// WARN names the table; it was written as it came (invalid UTF-8 in an
// Arrow string column) without a word.
func TestCatalogueLatin1(t *testing.T) {
	dir := t.TempDir()
	var pairs [][3]string
	for k := range 19 {
		pairs = append(pairs, [3]string{fmt.Sprintf("I%02d", k), fmt.Sprintf("I%02d", k+1), "bought_together"})
	}
	writeShop(t, dir, nil, pairs)
	items, err := os.ReadFile(filepath.Join(dir, "items.csv"))
	if err != nil {
		t.Fatal(err)
	}
	items = bytes.Replace(items, []byte("I04,Shirt 4,"), []byte("I04,Caf\xe9 4,"), 1)
	if err := os.WriteFile(filepath.Join(dir, "items.csv"), items, 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(shopJob))
	if err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	var logs bytes.Buffer
	if _, err := runStages(t.Context(), j, Experiment(), Job(), pipeline.Options{RunDir: run, Only: "ingest", Logger: pipeline.NewLogger(&logs, false)}); err != nil {
		t.Fatal(err)
	}
	titles := must(open(t, filepath.Join(run, "e", "ingest", "items.parquet")).Strings("title"))(t)
	if !slices.Contains(titles, "Caf\uFFFD 4") {
		t.Errorf("titles %q, want Caf\uFFFD 4 among them", titles)
	}
	ws := warnings(t, &logs, "ingest")
	if want := "items.csv: 1 of 20 rows hold invalid UTF-8, read as U+FFFD"; len(ws) != 1 || !strings.HasPrefix(fmt.Sprint(ws[0]["msg"]), want) {
		t.Errorf("WARN lines %v, want one starting %q", ws, want)
	}
}

// TestCatalogueRejectsTable: a catalogue's rejects table gives each
// reject's fixed reason in error, the row's id in id and what varies in
// detail, so that rejects group by reason or by item. The reason once
// held the id and the row, which made every duplicate id its own group.
func TestCatalogueRejectsTable(t *testing.T) {
	dir := t.TempDir()
	writeShop(t, dir, map[int]bool{7: true}, [][3]string{{"I00", "I01", "bought_together"}, {"I01", "", "bought_together"}})
	items, err := os.ReadFile(filepath.Join(dir, "items.csv"))
	if err != nil {
		t.Fatal(err)
	}
	items = append(items, "I03,Another shirt,Shop > S3\n"...)
	if err := os.WriteFile(filepath.Join(dir, "items.csv"), items, 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(strings.Replace(shopJob, "reject_ratio: 0.1", "reject_ratio: 0.5", 1)))
	if err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	if _, err := runStages(t.Context(), j, Experiment(), Job(), pipeline.Options{RunDir: run, Only: "ingest"}); err != nil {
		t.Fatal(err)
	}
	tb := open(t, filepath.Join(run, "e", "ingest", "rejects.parquet"))
	got := [][]string{must(tb.Strings("error"))(t), must(tb.Strings("id"))(t), must(tb.Strings("detail"))(t)}
	want := [][]string{
		{"bad categories", "duplicate id", "missing dst"},
		{"I07", "I03", "I01"},
		{"not a JSON list of paths (lists of strings) or of strings", `"I03" first seen at row 5 with other content`, ""},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rejects (error, id, detail)\n got %q\nwant %q", got, want)
	}
}

// TestCatalogueTruncatedItems: an items table cut within its last row
// rejects that row as a bad row under its id, and the pairs naming it
// are dropped with it, the WARN naming the items table; the cut once
// failed ingest as a relations table over its reject_ratio.
func TestCatalogueTruncatedItems(t *testing.T) {
	dir := t.TempDir()
	var pairs [][3]string
	for k := range 19 {
		pairs = append(pairs, [3]string{fmt.Sprintf("I%02d", k), fmt.Sprintf("I%02d", k+1), "bought_together"})
	}
	writeShop(t, dir, nil, pairs)
	path := filepath.Join(dir, "items.csv")
	items, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.LastIndex(items, []byte(",Shop > S3\n")) // the last row: I19
	if err := os.WriteFile(path, items[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	if err := runIngest(t, dir, shopJob, &logs); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, w := range warnings(t, &logs, "ingest") {
		msgs = append(msgs, fmt.Sprint(w["msg"]))
	}
	want := []string{
		"items.csv: 1 of 20 lines rejected (first: line 21 (byte ",
		"items.csv: its rejected rows are named by 1 bought_together pair of relations.csv and 1 document of text.csv, dropped with them",
	}
	if len(msgs) != 2 || !strings.HasPrefix(msgs[0], want[0]) || !strings.HasPrefix(msgs[1], want[1]) {
		t.Errorf("WARN lines %q\nwant %q", msgs, want)
	}
}

package stages

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"monomer/pipeline"
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

package catalogue

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"monomer/amazon"
	"monomer/schema"
)

// writeFile writes content to name in a temporary directory.
func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readItems reads an items table, returning its items and rejects.
func readItems(t testing.TB, path string) ([]Item, []amazon.Reject, Stats, error) {
	t.Helper()
	var items []Item
	var rej []amazon.Reject
	st, err := ReadItems(context.Background(), path, func(it *Item) error {
		items = append(items, *it)
		return nil
	}, func(r amazon.Reject) { rej = append(rej, r) })
	return items, rej, st, err
}

// TestItemRejects: each rule of the items table rejects its row with the
// file, the row's line and the reason, and the valid rows go through.
func TestItemRejects(t *testing.T) {
	const head = "id,title,categories,brand,price\n"
	good := "A1,Shirt,Shop > Men > Shirts,Acme,9.99\n" // line 2
	tests := []struct {
		name, row, reason string
	}{
		{"missing id", ",Shoe,Shop > Men > Shoes,,1\n", ReasonMissingID},
		{"no categories", "A2,Shoe,,,1\n", ReasonNoCategories},
		{"blank categories", "A2,Shoe,  ,,1\n", ReasonNoCategories},
		{"empty JSON list", "A2,Shoe,[],,1\n", ReasonNoCategories},
		{"bad JSON", "A2,Shoe,\"[[\"\"Shop\"\", 3]]\",,1\n", ReasonBadCategories},
		{"empty path", "A2,Shoe,\"[[\"\"Shop\"\"], []]\",,1\n", ReasonEmptyPath},
		{"empty level", "A2,Shoe,Shop >  > Shoes,,1\n", ReasonEmptyPath},
		{"empty JSON level", "A2,Shoe,\"[\"\"Shop\"\", \"\"\"\"]\",,1\n", ReasonEmptyPath},
		{"duplicate id", "A1,Shirt,Shop > Men > Shirts,Other brand,9.99\n", ReasonDuplicateID},
		{"short row", "A2,Shoe\n", ReasonBadRow},
		{"bare quote", "A2,Sh\"oe,Shop,,1\n", ReasonBadRow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeFile(t, dir, "items.csv", head+good+tc.row+"A3,Hat,Shop > Men > Hats,,1\n")
			items, rej, st, err := readItems(t, path)
			if err != nil {
				t.Fatal(err)
			}
			if len(rej) != 1 {
				t.Fatalf("rejects %+v", rej)
			}
			j := rej[0]
			if j.File != "items.csv" || j.Line != 3 || !strings.HasPrefix(j.Err, tc.reason) || j.Offset != int64(len(head+good)) {
				t.Errorf("reject %+v, want items.csv line 3 at byte %d: %s", j, len(head+good), tc.reason)
			}
			if st.Rows != 3 || st.Records != 2 || st.Rejected != 1 || st.Reasons[tc.reason] != 1 {
				t.Errorf("stats %+v", st)
			}
			if len(items) != 2 || items[0].ID != "A1" || items[1].ID != "A3" {
				t.Errorf("items %+v", items)
			}
		})
	}
}

// TestItemCategories: the forms of the categories cell give the same
// paths; an exact repeat of a row is a duplicate, not a reject.
func TestItemCategories(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "items.csv", "title,id,categories\n"+
		"Shirt,A1,Shop > Men > Shirts\n"+
		"Shirt,A2,\" Shop>Men >  Shirts \"\n"+
		"Shirt,A3,\"[\"\"Shop\"\", \"\"Men\"\", \"\"Shirts\"\"]\"\n"+
		"Shirt,A4,\"[[\"\"Shop\"\", \"\"Men\"\", \"\"Shirts\"\"], [\"\"Gifts\"\"]]\"\n"+
		"Shirt,A4,\"[[\"\"Shop\"\", \"\"Men\"\", \"\"Shirts\"\"], [\"\"Gifts\"\"]]\"\n")
	items, rej, st, err := readItems(t, path)
	if err != nil || len(rej) > 0 {
		t.Fatal(err, rej)
	}
	want := [][]string{{"Shop", "Men", "Shirts"}}
	for _, it := range items[:3] {
		if !reflect.DeepEqual(it.Categories, want) {
			t.Errorf("%s: %q, want %q", it.ID, it.Categories, want)
		}
	}
	if want := append(want, []string{"Gifts"}); len(items) != 4 || !reflect.DeepEqual(items[3].Categories, want) {
		t.Errorf("items %+v", items)
	}
	if st.Duplicates != 1 || st.Records != 4 || st.Rows != 5 {
		t.Errorf("stats %+v", st)
	}
}

// TestRelationAndTextRejects: each rule of the relations and text tables.
// Ids naming no item are the caller's to drop (no reject here), and rows
// of a relation not asked for are skipped unchecked, so that a relation
// the experiment does not read can never fail it (once "unknown item"
// rejects of any relation counted against the experiment's ratio).
func TestRelationAndTextRejects(t *testing.T) {
	rels := []struct{ row, reason, id string }{
		{",A2,bought\n", ReasonMissingSrc, "A2"},
		{"A1,,bought\n", ReasonMissingDst, "A1"},
		{"A1,A2,\n", ReasonMissingRelation, "A1"},
		{"A1,A2\n", ReasonBadRow, "A1"},
	}
	for _, tc := range rels {
		dir := t.TempDir()
		path := writeFile(t, dir, "pairs.csv", "src,dst,relation\nA1,A2,bought\n"+tc.row+"A2,A1,viewed\nZ9,,viewed\n")
		var got []Relation
		var rej []amazon.Reject
		st, err := ReadRelations(context.Background(), path, "bought", func(r *Relation) error { got = append(got, *r); return nil },
			func(r amazon.Reject) { rej = append(rej, r) })
		if err != nil {
			t.Fatal(err)
		}
		if len(rej) != 1 || rej[0].Line != 3 || rej[0].Err != tc.reason || rej[0].ID != tc.id || (tc.reason == ReasonBadRow) != (rej[0].Detail != "") {
			t.Errorf("%q: rejects %+v, want line 3: %s of %q", tc.row, rej, tc.reason, tc.id)
		}
		want := []Relation{{"A1", "A2", "bought"}}
		if !reflect.DeepEqual(got, want) || st.Relations["bought"] != 1 || st.Relations["viewed"] != 1 || st.Skipped != 2 || st.Records != 1 {
			t.Errorf("%q: pairs %v, stats %+v", tc.row, got, st)
		}
	}
	texts := []struct{ row, reason string }{
		{",good,Fine,1\n", ReasonMissingID},
		{"  ,good,Fine,1\n", ReasonMissingID},
	}
	for _, tc := range texts {
		dir := t.TempDir()
		path := writeFile(t, dir, "text.csv", "id,summary,text,stars\nA1,,\n"+tc.row+"Z9,Nice,Soft cotton,5\n")
		var got []Doc
		var rej []amazon.Reject
		st, err := ReadText(context.Background(), path, func(d *Doc) error { got = append(got, *d); return nil },
			func(r amazon.Reject) { rej = append(rej, r) })
		if err != nil {
			t.Fatal(err)
		}
		if len(rej) != 2 || rej[0].Line != 2 || rej[0].Err != ReasonBadRow || rej[0].Detail != "wrong number of fields" || rej[1].Line != 3 || rej[1].Err != tc.reason {
			t.Errorf("%q: rejects %+v", tc.row, rej)
		}
		if want := []Doc{{"Z9", "Nice", "Soft cotton"}}; !reflect.DeepEqual(got, want) || st.Rows != 3 {
			t.Errorf("%q: docs %v, stats %+v", tc.row, got, st)
		}
	}
}

// TestIDsAndUTF8: ids are trimmed of surrounding spaces (one of spaces is
// missing) and keep a CR LF as LF, and invalid UTF-8 in any cell becomes
// U+FFFD (one per run, as the Amazon readers make it), the same in
// Parquet and CSV. Before, " A1 " and "A1" were two items, a blank id was
// an item, a Parquet "A\r\n2" was not the CSV's "A\n2", and a Latin-1
// byte went into every output table as it was.
func TestIDsAndUTF8(t *testing.T) {
	items := schema.CatalogueItemsCols{
		ID:         []string{" A1 ", "A\r\n2", "   ", "Caf\xe9"},
		Title:      []string{"Shirt \xe9\xe9 x", "Shoe", "Blank", "Latin-1"},
		Brand:      []string{"", "\xff", "", ""},
		Categories: [][][]string{{{"Shop", "Men\xe9"}}, {{"Shop", "Men"}}, {{"Shop", "Men"}}, {{"Shop", "Men"}}},
	}
	rels := schema.CatalogueRelationsCols{Src: []string{"A1 ", "\tA\r\n2"}, Dst: []string{"A\r\n2", "Caf\xe9"}, Relation: []string{"b\r\nt", "b\r\nt"}}
	text := schema.CatalogueTextCols{ID: []string{" Caf\xe9"}, Summary: []string{"\xe9"}, Text: []string{"ok"}}
	want := []any{
		Item{ID: "A1", Title: "Shirt \uFFFD x", Categories: [][]string{{"Shop", "Men\uFFFD"}}},
		Item{ID: "A\n2", Title: "Shoe", Brand: "\uFFFD", Categories: [][]string{{"Shop", "Men"}}},
		"missing id", "",
		Item{ID: "Caf\uFFFD", Title: "Latin-1", Categories: [][]string{{"Shop", "Men"}}},
		Relation{"A1", "A\n2", "b\nt"}, Relation{"A\n2", "Caf\uFFFD", "b\nt"},
		Doc{"Caf\uFFFD", "\uFFFD", "ok"},
	}
	for _, format := range []string{"parquet", "csv"} {
		dir := t.TempDir()
		ip, rp, tp := filepath.Join(dir, "items"), filepath.Join(dir, "relations"), filepath.Join(dir, "text")
		if format == "parquet" {
			for _, err := range []error{must(schema.Write(ip, items)), must(schema.Write(rp, rels)), must(schema.Write(tp, text))} {
				if err != nil {
					t.Fatal(err)
				}
			}
		} else {
			var rows [][]string
			for i := range items.ID {
				c, _ := json.Marshal(items.Categories[i]) // json.Marshal makes invalid UTF-8 U+FFFD itself: write the cell by hand
				if i == 0 {
					c = []byte("Shop > Men\xe9")
				}
				rows = append(rows, []string{items.ID[i], items.Title[i], items.Brand[i], string(c)})
			}
			writeCSV(t, ip, []string{"id", "title", "brand", "categories"}, rows, false)
			writeCSV(t, rp, []string{"src", "dst", "relation"}, [][]string{{rels.Src[0], rels.Dst[0], rels.Relation[0]}, {rels.Src[1], rels.Dst[1], rels.Relation[1]}}, false)
			writeCSV(t, tp, []string{"id", "summary", "text"}, [][]string{{text.ID[0], text.Summary[0], text.Text[0]}}, false)
		}
		var got []any
		var fixed []int64
		st, err := ReadItems(context.Background(), ip, func(it *Item) error { got = append(got, *it); return nil },
			func(r amazon.Reject) { got = append(got, r.Err, r.ID) })
		fixed = append(fixed, st.InvalidUTF8)
		if err != nil {
			t.Fatal(err)
		}
		st, err = ReadRelations(context.Background(), rp, "b\nt", func(r *Relation) error { got = append(got, *r); return nil }, nil)
		fixed = append(fixed, st.InvalidUTF8)
		if err != nil {
			t.Fatal(err)
		}
		st, err = ReadText(context.Background(), tp, func(d *Doc) error { got = append(got, *d); return nil }, nil)
		fixed = append(fixed, st.InvalidUTF8)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", format, got, want)
		}
		if !reflect.DeepEqual(fixed, []int64{3, 1, 1}) {
			t.Errorf("%s: rows with invalid UTF-8 %v, want [3 1 1]", format, fixed)
		}
	}
}

// TestCSVEncodings: a UTF-16 CSV file and one with CR-only line endings
// fail naming what they are, without echoing NUL bytes (they once gave a
// header error with the NULs in it, or a quote error).
func TestCSVEncodings(t *testing.T) {
	dir := t.TempDir()
	utf16 := []byte{0xFF, 0xFE}
	for _, c := range "id,title,categories\nA1,T,S\n" {
		utf16 = append(utf16, byte(c), 0)
	}
	for _, tc := range []struct{ name, content, want string }{
		{"utf-16", string(utf16), "items.csv: UTF-16 text"},
		{"utf-16 without a mark", string(utf16[2:]), "items.csv: UTF-16 text"},
		{"CR only", "id,title,categories\rA1,\"T\",S\rA2,T,S\r", "items.csv: lines end with a carriage return alone"},
	} {
		path := writeFile(t, dir, "items.csv", tc.content)
		_, _, _, err := readItems(t, path)
		if !errors.Is(err, ErrTable) || !strings.Contains(err.Error(), tc.want) || strings.ContainsRune(err.Error(), 0) {
			t.Errorf("%s: %q, want ErrTable with %q", tc.name, err, tc.want)
		}
	}
}

// TestTableErrors: a file that is no usable table fails as a whole,
// naming the file and the column.
func TestTableErrors(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("PAR1 not really"))
	zw.Close()
	tests := []struct{ name, content, want string }{
		{"no header", "", "items.csv: empty file"},
		{"no id", "title,categories\nShirt,A\n", "items.csv: no column id in the header (title, categories)"},
		{"two ids", "id,title,id,categories\n", "items.csv: two columns named id"},
		{"gzipped parquet", gz.String(), "a gzip-compressed Parquet file"},
	}
	for _, tc := range tests {
		path := writeFile(t, dir, "items.csv", tc.content)
		_, _, _, err := readItems(t, path)
		if !errors.Is(err, ErrTable) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrTable with %q", tc.name, err, tc.want)
		}
	}
	// A Parquet table whose title column holds lists.
	path := filepath.Join(dir, "items.parquet")
	if _, err := schema.Write(path, struct {
		ID         []string   `col:"id"`
		Title      [][]string `col:"title"`
		Categories []string   `col:"categories"`
	}{ID: []string{"A"}, Title: [][]string{{"x"}}, Categories: []string{"S"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := readItems(t, path); !errors.Is(err, ErrTable) || !strings.Contains(err.Error(), "column title holds lists") {
		t.Errorf("list title: %v", err)
	}
	if _, _, _, err := readItems(t, filepath.Join(dir, "absent.csv")); err == nil || errors.Is(err, ErrTable) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want the not-exist error", err)
	}
}

// sample is a catalogue of a few items, pairs and documents with one
// reject of each table, the same content in every format.
var sample = struct {
	items     schema.CatalogueItemsCols
	relations schema.CatalogueRelationsCols
	text      schema.CatalogueTextCols
}{
	items: schema.CatalogueItemsCols{
		ID:         []string{"A1", "A2", "", "A3", "A1"},
		Title:      []string{"Shirt, \"oxford\"", "Shoe\nwith a newline", "Nameless", "Hat", "Shirt, \"oxford\""},
		Brand:      []string{"Acme", "", "", "Zeta", "Acme"},
		Categories: [][][]string{{{"Shop", "Men", "Shirts"}, {"Gifts", "For him"}}, {{"Shop", "Men", "Shoes"}}, {{"Shop"}}, {{"Shop", "Women", "Hats"}}, {{"Shop", "Men", "Shirts"}, {"Gifts", "For him"}}},
	},
	relations: schema.CatalogueRelationsCols{
		Src:      []string{"A1", "A2", "A1", "A9"},
		Dst:      []string{"A2", "A1", "A3", "A1"},
		Relation: []string{"bought_together", "bought_together", "viewed_together", "bought_together"},
	},
	text: schema.CatalogueTextCols{
		ID:      []string{"A1", "A2", "A1", ""},
		Summary: []string{"Great", "", "Too big", "x"},
		Text:    []string{"Soft, warm.", "Comfortable", "Runs large\nsecond line", "y"},
	},
}

// writeCSV writes rows as CSV (categories as JSON), gzipped if gz.
func writeCSV(t testing.TB, path string, header []string, rows [][]string, gz bool) {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(header)
	w.WriteAll(rows)
	b := buf.Bytes()
	if gz {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(b)
		zw.Close()
		b = z.Bytes()
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeSample writes the sample in format ("parquet", "csv", "csv.gz")
// under dir, with names that do not tell the format.
func writeSample(t testing.TB, dir, format string) (items, relations, text string) {
	t.Helper()
	items, relations, text = filepath.Join(dir, "items.dat"), filepath.Join(dir, "relations.dat"), filepath.Join(dir, "text.dat")
	s := &sample
	if format == "parquet" {
		for _, err := range []error{
			must(schema.Write(items, s.items)), must(schema.Write(relations, s.relations)), must(schema.Write(text, s.text)),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	gz := format == "csv.gz"
	var rows [][]string
	for i := range s.items.ID {
		cats, _ := json.Marshal(s.items.Categories[i])
		// Columns in another order than the Parquet file's, with an extra.
		rows = append(rows, []string{string(cats), "x", s.items.Brand[i], s.items.Title[i], s.items.ID[i]})
	}
	writeCSV(t, items, []string{"categories", "extra", "brand", "title", "id"}, rows, gz)
	rows = nil
	for i := range s.relations.Src {
		rows = append(rows, []string{s.relations.Relation[i], s.relations.Src[i], s.relations.Dst[i]})
	}
	writeCSV(t, relations, []string{"relation", "src", "dst"}, rows, gz)
	rows = nil
	for i := range s.text.ID {
		rows = append(rows, []string{s.text.ID[i], s.text.Text[i], s.text.Summary[i]})
	}
	writeCSV(t, text, []string{"id", "text", "summary"}, rows, gz)
	return
}

func must(_ int64, err error) error { return err }

// readAll reads the three tables: what each reader hands over, and the
// rejects without their positions (a Parquet row has no byte offset).
func readAll(t testing.TB, items, relations, text string) (out []any, formats []string) {
	t.Helper()
	ctx := context.Background()
	known := map[string]bool{}
	reject := func(r amazon.Reject) { out = append(out, r.File, r.Err) }
	st, err := ReadItems(ctx, items, func(it *Item) error {
		known[it.ID] = true
		out = append(out, *it)
		return nil
	}, reject)
	if err != nil {
		t.Fatal(err)
	}
	formats = append(formats, st.Format)
	st.Format = ""
	out = append(out, st)
	st, err = ReadRelations(ctx, relations, "", func(r *Relation) error { out = append(out, *r); return nil }, reject)
	if err != nil {
		t.Fatal(err)
	}
	formats = append(formats, st.Format)
	st.Format = ""
	out = append(out, st)
	st, err = ReadText(ctx, text, func(d *Doc) error { out = append(out, *d); return nil }, reject)
	if err != nil {
		t.Fatal(err)
	}
	formats = append(formats, st.Format)
	st.Format = ""
	out = append(out, st)
	return out, formats
}

// TestFormatsAgree: the same tables as Parquet, CSV and gzipped CSV, in
// files whose names say nothing, give the same items, pairs, documents,
// rejects and counts; the format is told from the content.
func TestFormatsAgree(t *testing.T) {
	var want []any
	for _, format := range []string{"parquet", "csv", "csv.gz"} {
		items, relations, text := writeSample(t, t.TempDir(), format)
		got, formats := readAll(t, items, relations, text)
		for _, f := range formats {
			if f != format {
				t.Errorf("%s read as %s", format, f)
			}
		}
		if want == nil {
			want = got
			if n := len(got); n != 3+2+1+4+1+3+2+1 { // items and text: 3 rows, a reject (file, reason), the stats; relations: 4 pairs (one naming no item: the caller's to drop), the stats
				t.Errorf("%d values read: %v", n, got)
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", format, got, want)
		}
	}
}

// TestUnclosedQuote: a quoted field left open in a CSV table swallows the
// lines after it into one cell, which was once one reject: a 100-row table
// with an open quote at row 91 read as 90 records and 1 reject, its last 9
// rows counted nowhere. A quote error in a record over several lines fails
// the file naming its lines; on one line it stays a bad row, and a quoted
// cell over several lines is still a cell.
func TestUnclosedQuote(t *testing.T) {
	dir := t.TempDir()
	table := func(edit func(k int) string) string {
		var b strings.Builder
		b.WriteString("id,title,categories\n")
		for k := 1; k <= 100; k++ {
			b.WriteString(edit(k))
		}
		return b.String()
	}
	plain := func(k int) string { return fmt.Sprintf("A%d,Item %d,Shop > Men\n", k, k) }
	for _, tc := range []struct {
		name string
		edit func(k int) string
		want string // in the error; "": read with one reject
	}{
		{"open to the end", func(k int) string {
			if k == 91 {
				return "A91,\"Item 91,Shop > Men\n"
			}
			return plain(k)
		}, `items.csv: unclosed quote: a quoted field of the row at line 92 is never closed, so lines 92..101 were read as one cell`},
		{"closed by a stray quote", func(k int) string {
			switch k {
			case 40:
				return "A40,\"Item 40,Shop > Men\n"
			case 45:
				return "A45,\"Item\" 45,Shop > Men\n"
			}
			return plain(k)
		}, `items.csv: unclosed quote: a quoted field of the row at line 41 runs to a stray quote at line 46, column 5, so lines 41..46 were read as one cell`},
		{"one line", func(k int) string {
			if k == 91 {
				return "A91,\"Item\" 91,Shop > Men\n"
			}
			return plain(k)
		}, ""},
		{"a cell over lines, too many fields", func(k int) string {
			if k == 91 {
				return "A91,\"Item\n91\",Shop > Men,extra\n"
			}
			return plain(k)
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, dir, "items.csv", table(tc.edit))
			items, rej, st, err := readItems(t, path)
			if tc.want != "" {
				if !errors.Is(err, ErrTable) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("%v (stats %+v)\nwant ErrTable with %q", err, st, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Rows != 100 || st.Records != 99 || st.Rejected != 1 || len(items) != 99 || len(rej) != 1 || rej[0].Line != 92 {
				t.Errorf("stats %+v, %d items, rejects %+v; want 99 items and a reject at line 92", st, len(items), rej)
			}
		})
	}
}

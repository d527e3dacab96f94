package catalogue

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"monomer/amazon"
)

// FuzzCatalogueCSV reads arbitrary bytes as each of the three tables:
// the readers must not panic, must fail only with ErrTable, and must
// account for every row (read = handed over + rejected + duplicates +
// skipped), each reject placed on a line of the file with a one-line
// reason and a valid UTF-8 excerpt, each item with an id and non-empty
// paths, every string handed over valid UTF-8 and every id trimmed.
func FuzzCatalogueCSV(f *testing.F) {
	for _, s := range []string{
		"id,title,categories,brand\nA1,Shirt,Shop > Men > Shirts,Acme\nA2,Shoe,\"[[\"\"Shop\"\",\"\"Men\"\"]]\",\n",
		"id,title,categories\n,x,\nA1,\"unterminated\n",
		"\uFEFFid,title,categories\r\nA1,T,\"[\"\"A\"\", \"\"\"\"]\"\r\nA1,T,A\r\n",
		"src,dst,relation\nA1,A2,bought_together\nA2,,x\nA1,A9,y\n",
		"id,text,summary\nA1,\"Soft, warm\",Great\nA9,x,y\n,z,w\n",
		"id,title,categories\n\" A\r\n1 \",Caf\xe9,Shop > Caf\xe9\n  ,x,A\n",
		"id,title,categories\nA1,T,[[]]\nA2,T,[\"a\",[1]]\nA3,T,>>\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "t.csv")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		lines := int64(1)
		for _, c := range data {
			if c == '\n' {
				lines++
			}
		}
		var rej []amazon.Reject
		reject := func(r amazon.Reject) { rej = append(rej, r) }
		valid := func(what string, ss ...string) {
			for _, s := range ss {
				if !utf8.ValidString(s) {
					t.Fatalf("%s %q: invalid UTF-8", what, s)
				}
			}
		}
		isID := func(id string) bool { return id != "" && id == ID(id) }
		check := func(table string, st Stats, handed int64, err error) {
			if err != nil {
				if !errors.Is(err, ErrTable) {
					t.Fatalf("%s: %v, not ErrTable", table, err)
				}
				return
			}
			if st.Records != handed || st.Rows != st.Records+st.Rejected+st.Duplicates+st.Skipped || int64(len(rej)) != st.Rejected {
				t.Fatalf("%s: stats %+v, %d handed over, %d rejects", table, st, handed, len(rej))
			}
			for _, j := range rej {
				if j.File != "t.csv" || j.Line < 2 || j.Line > lines || j.Offset < 0 || j.Offset > int64(len(data)) || j.Err == "" || !utf8.ValidString(j.Excerpt) {
					t.Fatalf("%s: reject %+v of %d lines, %d bytes", table, j, lines, len(data))
				}
			}
		}
		var n int64
		st, err := ReadItems(context.Background(), path, func(it *Item) error {
			n++
			if !isID(it.ID) || len(it.Categories) == 0 {
				t.Fatalf("item %+v", it)
			}
			valid("item", it.ID, it.Title, it.Brand)
			for _, p := range it.Categories {
				if len(p) == 0 {
					t.Fatalf("item %+v has an empty path", it)
				}
				valid("category", p...)
			}
			return nil
		}, reject)
		check("items", st, n, err)
		rej, n = nil, 0
		st, err = ReadRelations(context.Background(), path, "", func(r *Relation) error {
			n++
			if !isID(r.Src) || !isID(r.Dst) || r.Name == "" {
				t.Fatalf("pair %+v", r)
			}
			valid("pair", r.Src, r.Dst, r.Name)
			return nil
		}, reject)
		check("relations", st, n, err)
		rej, n = nil, 0
		st, err = ReadText(context.Background(), path, func(d *Doc) error {
			n++
			if !isID(d.ID) {
				t.Fatalf("document %+v", d)
			}
			valid("document", d.ID, d.Summary, d.Text)
			return nil
		}, reject)
		check("text", st, n, err)
	})
}

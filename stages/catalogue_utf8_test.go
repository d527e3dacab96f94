package stages

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"monomer/pipeline"
)

// latin1 rewrites the demo's catalogue CSV tables with Latin-1 bytes, as
// a shop's export in Windows-1252 has them: in an item's id (in every
// table naming it), in titles, brands, a subcategory and review text.
func latin1(t *testing.T, items, relations, text string) {
	t.Helper()
	b, err := os.ReadFile(items)
	if err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(string(b), "\n", 3)[1]
	id := first[:strings.IndexByte(first, ',')] // the first item's id
	edit := func(path string, pairs ...string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.ReplaceAll(b, []byte(id+","), []byte(id+"\xe9,"))
		b = []byte(strings.NewReplacer(pairs...).Replace(string(b)))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit(items, "Shirts", "Shirts \xe9t\xe9", "Leather", "Le\xe0ther", "Men's", "Men\x92s")
	edit(relations)
	edit(text, " the ", " th\xe9 ", "soft", "s\xf6ft")
}

// TestCatalogueUTF8 runs the whole experiment DAG on catalogue tables
// holding Latin-1 bytes and checks that every string of every table the
// run writes is valid UTF-8 (Arrow's string type requires it), and, where
// a Python with pyarrow is found (GO_MONOMER_PYTHON, else python3), that
// pyarrow's full validation passes on each. Before, the bytes were
// written as they came, and ten tables failed pyarrow's validation
// ("Invalid UTF8 sequence"), where the Amazon readers make U+FFFD of them.
func TestCatalogueUTF8(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole run")
	}
	items, relations, text := demoAsCatalogue(t, t.TempDir(), true)
	latin1(t, items, relations, text)
	j := demoJob(t, items, relations, text)
	j.Experiments = j.Experiments[1:] // the bag of words: the text's bytes reach the vocabulary too
	run := t.TempDir()
	if _, err := runStages(t.Context(), j, Experiment(), Job(), pipeline.Options{RunDir: run}); err != nil {
		t.Fatal(err)
	}
	var tables []string
	replaced := 0
	err := filepath.WalkDir(run, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		tables = append(tables, p)
		tb := open(t, p)
		for _, f := range tb.Schema().Fields() {
			if f.Type.ID() != arrow.STRING {
				continue
			}
			col := must(tb.Strings(f.Name))(t)
			for i, s := range col {
				if !utf8.ValidString(s) {
					t.Errorf("%s: column %s row %d: invalid UTF-8 %q", p, f.Name, i, s)
					break
				}
				replaced += strings.Count(s, "\uFFFD")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 10 || replaced == 0 {
		t.Fatalf("%d tables, %d U+FFFD in them: the run did not carry the Latin-1 bytes through", len(tables), replaced)
	}
	py := os.Getenv("GO_MONOMER_PYTHON")
	if py == "" {
		py = "python3"
	}
	if err := exec.Command(py, "-c", "import pyarrow").Run(); err != nil {
		t.Skipf("no pyarrow in %s (%v): checked in Go only; set GO_MONOMER_PYTHON to a Python with pyarrow", py, err)
	}
	const check = `import sys, pyarrow.parquet as pq
for p in sys.argv[1:]:
    pq.read_table(p).validate(full=True)
print(len(sys.argv) - 1)`
	out, err := exec.Command(py, append([]string{"-c", check}, tables...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("pyarrow's full validation: %v\n%s", err, out)
	}
	t.Logf("pyarrow validated %s tables", bytes.TrimSpace(out))
}

package stages

import (
	"errors"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"monomer/models"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// checkDeclared checks that every Parquet table under dir has the columns
// (names, order, types) of a table declared in package schema: the stages
// write only declared tables, each through its typed struct.
func checkDeclared(t *testing.T, dir string) {
	t.Helper()
	same := func(a, b *arrow.Schema) bool {
		return slices.EqualFunc(a.Fields(), b.Fields(), func(f, g arrow.Field) bool {
			return f.Name == g.Name && arrow.TypeEqual(f.Type, g.Type)
		})
	}
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		tb, err := schema.Open(t.Context(), p)
		if err != nil {
			return err
		}
		defer tb.Release()
		n++
		if !slices.ContainsFunc(schema.Tables(), func(d schema.NamedSchema) bool { return same(tb.Schema(), d.Schema) }) {
			t.Errorf("%s: columns %v match no declared table", p, tb.Schema())
		}
		return nil
	})
	if err != nil || n < 20 {
		t.Fatalf("%d tables: %v", n, err)
	}
}

// fewerDeps is a real stage declaring fewer inputs than it reads.
type fewerDeps struct {
	Stage
	deps []string
}

func (s fewerDeps) Deps() []string { return s.deps }

// The stages read their inputs through what env serves: split declaring
// ingest alone fails on reading negatives' tables, naming them.
func TestStageReadsOnlyDeclaredInputs(t *testing.T) {
	job := loadTestJob(t)
	st := Experiment()[:5]
	if st[4].Name() != "split" {
		t.Fatalf("stage 4 is %s", st[4].Name())
	}
	st[4] = fewerDeps{st[4], []string{"ingest"}}
	_, err := runStages(t.Context(), job, st, nil, pipeline.Options{RunDir: t.TempDir(), Experiments: []string{"men-image"}})
	if !errors.Is(err, pipeline.ErrUndeclaredInput) || !strings.Contains(err.Error(), "men-image/split reads men-image/negatives") {
		t.Fatalf("err = %v, want an undeclared input", err)
	}
}

// checkTablesAgree checks that report/index.html and report/tables.md show
// the same paper tables and data sets, cell for cell (issue 22: the
// bag-of-words Dataset cell read "—" in one and "Women" in the other).
func checkTablesAgree(t *testing.T, dir string) {
	t.Helper()
	page := string(must(os.ReadFile(filepath.Join(dir, "report", "index.html")))(t))
	md := string(must(os.ReadFile(filepath.Join(dir, "report", "tables.md")))(t))
	cell := regexp.MustCompile(`<td[^>]*>([^<]*)</td>`)
	htmlRows := func(class string) [][]string {
		var rows [][]string
		for _, tb := range regexp.MustCompile(`(?s)<table class="`+class+`">(.*?)</table>`).FindAllStringSubmatch(page, -1) {
			for _, tr := range strings.Split(tb[1], "<tr>") {
				var r []string
				for _, c := range cell.FindAllStringSubmatch(tr, -1) {
					r = append(r, html.UnescapeString(c[1]))
				}
				if len(r) > 0 {
					rows = append(rows, r)
				}
			}
		}
		return rows
	}
	// mdRows are the body rows of the markdown tables under headings
	// starting with one of prefixes.
	mdRows := func(prefixes ...string) [][]string {
		var rows [][]string
		in := false
		for _, line := range strings.Split(md, "\n") {
			if h, ok := strings.CutPrefix(line, "## "); ok {
				in = slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(h, p) })
				continue
			}
			if !in || !strings.HasPrefix(line, "| ") {
				continue
			}
			r := strings.Split(strings.Trim(line, "| "), " | ")
			if r[0] == "Experiment" {
				continue
			}
			rows = append(rows, r)
		}
		return rows
	}
	for _, c := range []struct {
		class    string
		headings []string
	}{
		{"paper", []string{"Image features", "Bag-of-words features"}},
		{"datasets", []string{"Data sets"}},
	} {
		h, m := htmlRows(c.class), mdRows(c.headings...)
		if len(h) == 0 || !slices.EqualFunc(h, m, slices.Equal) {
			t.Errorf("%s tables differ:\nindex.html %q\ntables.md  %q", c.class, h, m)
		}
	}
	// The seeds' spread (with two seeds or more) and the paired tests.
	h, m := append(htmlRows("seeds"), htmlRows("comparisons")...), mdRows("Over seeds", "Paired tests")
	if len(h) == 0 || !slices.EqualFunc(h, m, slices.Equal) {
		t.Errorf("seeds and comparisons tables differ:\nindex.html %q\ntables.md  %q", h, m)
	}
}

// checkProvenance: the report says what it is a report of (job, hash,
// seed, BLAS) in index.html, tables.md and metrics.parquet, and its
// manifest names the run and the build that rendered it (the build is not
// on the page: the report's key does not hold it); the pages of two runs with
// different run IDs are the same bytes (checkReport compares them).
func checkProvenance(t *testing.T, dirs [2]string) {
	t.Helper()
	dir := filepath.Join(dirs[0], "report")
	page := string(must(os.ReadFile(filepath.Join(dir, "index.html")))(t))
	md := string(must(os.ReadFile(filepath.Join(dir, "tables.md")))(t))
	job := loadTestJob(t)
	for _, want := range []string{"<th>Seed</th><td>7</td>", "<th>BLAS</th><td>" + models.BLAS().String() + "</td>", "<th>Job</th><td>stages-test</td>", jobHash(job)} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	for _, want := range []string{"seed 7", models.BLAS().String(), jobHash(job)} {
		if !strings.Contains(md, want) {
			t.Errorf("tables.md lacks %q", want)
		}
	}
	for i, d := range dirs {
		m := must(cache.ReadManifest(filepath.Join(d, "report")))(t)
		if m.RunID != runID(d) || m.Stats["job_hash"] != jobHash(job) || m.Stats["version"] != cache.Version() {
			t.Errorf("run %d: report/manifest.json: run_id %q, job_hash %v, version %v", i, m.RunID, m.Stats["job_hash"], m.Stats["version"])
		}
	}
	if d, err := pipeline.Diff(t.Context(), dirs[0], dirs[1], pipeline.DiffOptions{}); err != nil || !d.Identical {
		t.Errorf("runs %s and %s: diff says %v, %v", runID(dirs[0]), runID(dirs[1]), d, err)
	}
	tb := open(t, filepath.Join(dirs[0], "metrics.parquet"))
	hashes := must(tb.Strings("job_hash"))(t)
	if len(hashes) == 0 || hashes[0] != jobHash(job) || must(tb.Strings("job"))(t)[0] != "stages-test" {
		t.Errorf("metrics.parquet job_hash %v", hashes)
	}
}

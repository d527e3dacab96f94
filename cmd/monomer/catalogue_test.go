package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"monomer/schema"
)

// TestCatalogueEndToEnd: monomer gen --format catalogue writes the tiny
// planted world as catalogue tables, and jobs/catalogue-demo.yaml runs on
// them through every stage (a short training budget in short mode); the
// same world as CSV tables (--csv) gives byte-identical ingest tables.
func TestCatalogueEndToEnd(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../jobs/catalogue-demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "jobs"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "jobs", "catalogue-demo.yaml"), string(src))
	gen := func(out string, args ...string) {
		root := newRootCommand()
		root.SetOut(&bytes.Buffer{})
		args = append([]string{"gen", "--scale", "tiny", "--seed", "1", "--format", "catalogue", "--dim", "64", "--name", "Shop", "--out", out}, args...)
		if err := execute(context.Background(), root, args); err != nil {
			t.Fatal(err)
		}
	}
	gen(filepath.Join(dir, "data", "catalogue"))
	gen(filepath.Join(dir, "data", "catalogue-csv"), "--csv")
	for _, f := range []string{"items_Shop.csv", "relations_Shop.csv", "text_Shop.csv", "embeddings_Shop.parquet"} {
		if _, err := os.Stat(filepath.Join(dir, "data", "catalogue-csv", f)); err != nil {
			t.Error(err)
		}
	}
	args := []string{"run", "jobs/catalogue-demo.yaml", "--run-dir", "runs", "--run-id", "parquet"}
	if testing.Short() {
		args = append(args, "--set", "settings.max_iter=20", "--set", "settings.lambdas=[0.0001]", "--set", "settings.topics=5")
	}
	if r := monomer(t, dir, "real", nil, args...); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	run := filepath.Join(dir, "runs", "parquet")
	exps := []string{"men-bought_together-embeddings", "men-bought_together-bow"}
	for _, exp := range exps {
		for _, f := range []string{"ingest/edges.parquet", "evaluate/metrics.parquet", "recommend/recommendations.parquet"} {
			n, err := schema.NumRows(filepath.Join(run, exp, f))
			if err != nil || n == 0 {
				t.Errorf("%s %s: %d rows (%v)", exp, f, n, err)
			}
		}
	}
	// The CSV tables, through ingest only.
	csvArgs := []string{"run", "jobs/catalogue-demo.yaml", "--run-dir", "runs", "--run-id", "csv", "--only", "ingest",
		"--set", "data_dir=" + filepath.Join(dir, "data", "catalogue-csv"),
		"--set", "data.items=items_Shop.csv", "--set", "data.relations=relations_Shop.csv", "--set", "data.text=text_Shop.csv"}
	if r := monomer(t, dir, "real", nil, csvArgs...); r.code != 0 {
		t.Fatalf("run on CSV: exit %d\n%s", r.code, r.stderr)
	}
	for _, exp := range exps {
		for _, f := range []string{"items.parquet", "edges.parquet", "reviews.parquet"} {
			a, errA := os.ReadFile(filepath.Join(run, exp, "ingest", f))
			b, errB := os.ReadFile(filepath.Join(dir, "runs", "csv", exp, "ingest", f))
			if os.IsNotExist(errA) && os.IsNotExist(errB) && strings.Contains(exp, "embeddings") && f == "reviews.parquet" {
				continue
			}
			if errA != nil || errB != nil || !bytes.Equal(a, b) {
				t.Errorf("%s %s: the Parquet and CSV tables give different ingest tables (%v, %v)", exp, f, errA, errB)
			}
		}
	}
}

// TestEmbeddingsFileFirst: with the catalogue's tables there, a missing
// embeddings file exits 5 and a named pipe in its place exits 2 before
// ingest runs (they were found at the features stage, after ingest).
func TestEmbeddingsFileFirst(t *testing.T) {
	dir := t.TempDir()
	root := newRootCommand()
	root.SetOut(&bytes.Buffer{})
	if err := execute(context.Background(), root, []string{"gen", "--scale", "tiny", "--fraction", "0.05", "--seed", "1",
		"--format", "catalogue", "--dim", "8", "--name", "Shop", "--out", dir}); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "job.yaml"), `name: shop
data: {format: catalogue, items: items_Shop.parquet, relations: relations_Shop.parquet, embeddings: emb.parquet}
experiments:
  - {name: e, category: "Clothing, Shoes & Jewelry", graph: bought_together, features: embeddings, models: [wnn]}
`)
	emb := filepath.Join(dir, "emb.parquet")
	for _, tc := range []struct {
		name string
		make func() error
		code int
		msg  string
	}{
		{"missing", func() error { return nil }, exitInputMissing, "input file " + emb + " does not exist"},
		{"fifo", func() error { return syscall.Mkfifo(emb, 0o644) }, exitUsage, "input file " + emb + " is a named pipe"},
	} {
		if err := tc.make(); err != nil {
			t.Fatal(err)
		}
		r := monomer(t, dir, "real", nil, "run", "job.yaml", "--run-dir", "runs")
		if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%s: exit %d, stderr %s; want %d and %q", tc.name, r.code, r.stderr, tc.code, tc.msg)
		}
		if _, err := os.Stat(filepath.Join(dir, "runs", "e", "ingest")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: ingest ran (%v)", tc.name, err)
		}
	}
}

// TestDamagedCatalogueParquet: a catalogue items table or embeddings
// table with a damaged page header (pyarrow's files with page CRCs,
// byte 11 flipped) fails its stage with exit 3 naming the file; the old
// code's reader panicked in (*DataPageHeader).GetNumValues, which the
// runner turned into "stage panicked" and exit 1, a retry forever.
func TestDamagedCatalogueParquet(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../jobs/catalogue-demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "job.yaml"), strings.Replace(string(src), "../data/catalogue", "data", 1))
	root := newRootCommand()
	root.SetOut(&bytes.Buffer{})
	if err := execute(context.Background(), root, []string{"gen", "--scale", "tiny", "--seed", "1", "--format", "catalogue", "--dim", "64", "--name", "Shop", "--out", filepath.Join(dir, "data")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ seed, file, stage string }{
		{"items-crc.parquet", "items_Shop.parquet", "ingest"},
		{"emb-crc.parquet", "embeddings_Shop.parquet", "features"},
	} {
		b, err := os.ReadFile(filepath.Join("../../testdata/damage", tc.seed))
		if err != nil {
			t.Fatal(err)
		}
		b[11] ^= 0xff
		path := filepath.Join(dir, "data", tc.file)
		keep, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if tc.stage != "ingest" {
			if r := monomer(t, dir, "real", nil, "run", "job.yaml", "--experiment", "men-bought_together-embeddings", "--only", "ingest"); r.code != 0 {
				t.Fatalf("ingest: exit %d\n%s", r.code, r.stderr)
			}
		}
		write(t, path, string(b))
		r := monomer(t, dir, "real", nil, "run", "job.yaml", "--experiment", "men-bought_together-embeddings", "--only", tc.stage)
		last := r.stderr[strings.LastIndex(strings.TrimSuffix(r.stderr, "\n"), "\n")+1:]
		if r.code != 3 || !strings.HasPrefix(last, "monomer: ") || !strings.Contains(last, tc.file) || !strings.Contains(last, "damaged data") || strings.Contains(r.stderr, "panicked") {
			t.Errorf("%s damaged: exit %d\n%s\nwant exit 3 naming the file", tc.file, r.code, r.stderr)
		}
		write(t, path, string(keep))
	}
}

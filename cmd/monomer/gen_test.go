package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenTextScale: a text scale writes its category's 2014 file names and
// no image file; --fraction outside (0, 1] is a usage error.
func TestGenTextScale(t *testing.T) {
	out := t.TempDir()
	gen := func(args ...string) error {
		root := newRootCommand()
		root.SetOut(&bytes.Buffer{})
		return execute(context.Background(), root, append([]string{"gen", "--out", out, "--seed", "1"}, args...))
	}
	if err := gen("--scale", "games", "--fraction", "0.02"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"meta_Video_Games.json.gz", "reviews_Video_Games.json.gz"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "image_features_Video_Games.b")); err == nil {
		t.Error("a text scale wrote an image feature file")
	}
	for _, f := range []string{"0", "1.5"} {
		if err := gen("--scale", "games", "--fraction", f); exitCode(err) != exitUsage {
			t.Errorf("--fraction %s: %v (exit %d)", f, err, exitCode(err))
		}
	}
}

// TestGen2023: --format 2023 writes the 2023 layout's files (and none of
// the 2014 layout's) with the embeddings table; another format or a
// negative --dim is a usage error.
func TestGen2023(t *testing.T) {
	out := t.TempDir()
	gen := func(args ...string) error {
		root := newRootCommand()
		root.SetOut(&bytes.Buffer{})
		return execute(context.Background(), root, append([]string{"gen", "--out", out, "--seed", "1", "--scale", "tiny", "--fraction", "0.1", "--name", "Demo"}, args...))
	}
	if err := gen("--format", "2023", "--dim", "8"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"meta_Demo.jsonl.gz", "Demo.jsonl.gz", "embeddings_Demo.parquet"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	for _, f := range []string{"meta_Demo.json.gz", "reviews_Demo.json.gz", "image_features_Demo.b"} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("--format 2023 wrote %s", f)
		}
	}
	for _, args := range [][]string{{"--format", "2018"}, {"--dim", "-1"}} {
		if err := gen(args...); exitCode(err) != exitUsage {
			t.Errorf("%v: %v (exit %d)", args, err, exitCode(err))
		}
	}
}

// TestGenDim: a --dim run cannot read is refused before anything is
// written, with exit 2: above the largest embedding dimension run reads,
// and other than 4096 for the 2014 layout, whose .b records run reads as
// 4096 floats. --out is not created.
func TestGenDim(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"--format", "2023", "--dim", "2000000"}, "usage: --dim 2000000 is above 1048576, the largest embedding dimension run reads"},
		{[]string{"--dim", "8"}, "usage: --dim 8: the 2014 layout's .b file holds 4096 floats per record, the only dimension run reads from it; use --format 2023 or catalogue for another dimension"},
	}
	for _, tt := range tests {
		root := newRootCommand()
		root.SetOut(&bytes.Buffer{})
		err := execute(context.Background(), root, append([]string{"gen", "--out", out, "--seed", "1", "--scale", "tiny", "--fraction", "0.01", "--name", "Demo"}, tt.args...))
		if exitCode(err) != exitUsage || !strings.HasPrefix(fmt.Sprint(err), tt.msg) {
			t.Errorf("%v: %v (exit %d), want exit 2 and %q", tt.args, err, exitCode(err), tt.msg)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: --out created", tt.args)
			os.RemoveAll(out)
		}
	}
}

// TestGenBadOut: an --out that cannot be a folder and a --name that would
// leave it exit 2 (they exited 1, a retry's code), and nothing is written
// outside --out.
func TestGenBadOut(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "FILE")
	write(t, file, "mine\n")
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--out", file}, "usage: --out " + file + " cannot be made a folder: "},
		{[]string{"--out", filepath.Join(file, "sub")}, "usage: --out " + filepath.Join(file, "sub") + " cannot be made a folder: "},
		{[]string{"--out", filepath.Join(dir, "out"), "--name", "../x"}, `usage: --name "../x": letters, digits`},
		{[]string{"--out", filepath.Join(dir, "out"), "--name", "a/b"}, `usage: --name "a/b": letters, digits`},
		{[]string{"--out", filepath.Join(dir, "out"), "--day", "3"}, "usage: --day 3: 1 (the world of --seed) or 2"},
	} {
		root := newRootCommand()
		root.SetOut(&bytes.Buffer{})
		err := execute(context.Background(), root, append([]string{"gen", "--seed", "1", "--scale", "tiny", "--fraction", "0.01"}, tt.args...))
		if exitCode(err) != exitUsage || !strings.HasPrefix(fmt.Sprint(err), tt.msg) {
			t.Errorf("%v: %v (exit %d), want exit 2 and %q", tt.args, err, exitCode(err), tt.msg)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d entries in the folder, want FILE alone", len(entries))
	}
}

// TestGenCatalogue: --format catalogue prints each table's rows and bytes
// as written; the relations line counts every pair of the table (it once
// printed the also_bought count, which held them all by accident of the
// writer, with no size).
func TestGenCatalogue(t *testing.T) {
	out := t.TempDir()
	r := monomer(t, out, "real", nil, "gen", "--out", out, "--seed", "1", "--scale", "tiny", "--fraction", "0.1", "--name", "Shop", "--format", "catalogue", "--csv")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	printed := map[string][2]int64{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var rows, size int64
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("line %q: want path, rows and bytes", line)
		}
		if _, err := fmt.Sscanf(f[1]+" "+f[2], "%d rows %d bytes", &rows, &size); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		printed[filepath.Base(f[0])] = [2]int64{rows, size}
	}
	for _, name := range []string{"items_Shop.csv", "relations_Shop.csv", "text_Shop.csv"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if want := [2]int64{int64(len(recs) - 1), int64(len(b))}; printed[name] != want {
			t.Errorf("%s: printed %v (rows, bytes), the file holds %v", name, printed[name], want)
		}
	}
}

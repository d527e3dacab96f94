package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"monomer/schema"
)

// TestVerify: verify reproduces a fresh demo run (exit 0), names the table,
// row and column after one Parquet value of the run is edited (exit 1), and
// exits 2 on an unreadable manifest.
// demoNodes counts the demo job's DAG nodes: per experiment ingest,
// features, negatives, split, evaluate, recommend, report-section and a
// train node per model (image: wnn, ct, lmt, monomer; bag of words: lda
// too), then report.
const demoNodes = 7 + 4 + 7 + 5 + 1

func TestVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo job")
	}
	dir, args := demo(t)
	args = append(args, "--run-dir", "run")
	realRun(t, dir, nil, args...)
	r := monomer(t, dir, "real", nil, append([]string{"verify"}, args...)...)
	if r.code != 0 || strings.Count(r.stdout, ": ok (") != demoNodes {
		t.Fatalf("fresh run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// One label of the split, flipped in place.
	const exp = "men-also_bought-image"
	pairs := filepath.Join(dir, "run", exp, "split", "pairs.parquet")
	var x, y, split []string
	var label []int8
	var xi, yi []int32
	err := schema.Read(t.Context(), pairs, func(c *schema.Cols) error {
		x, y, label, split, xi, yi = c.Strings("x"), c.Strings("y"), c.Int8s("label"), c.Strings("split"), c.Int32s("x_idx"), c.Int32s("y_idx")
		return c.Err()
	})
	if err != nil || len(label) < 4 {
		t.Fatalf("%v, %d rows", err, len(label))
	}
	label[3] = 1 - label[3]
	if _, err := schema.Write(pairs, schema.PairsCols{X: x, Y: y, Label: label, Split: split, XIdx: xi, YIdx: yi}); err != nil {
		t.Fatal(err)
	}
	r = monomer(t, dir, "real", nil, append([]string{"verify"}, args...)...)
	want := "monomer: verify: " + exp + "/split: differs: pairs.parquet: row 3, column label: "
	if r.code != 1 || !strings.HasPrefix(r.stderr[strings.LastIndex(r.stderr, "monomer: "):], want) ||
		!strings.Contains(r.stdout, exp+"/split: differs") || !strings.Contains(r.stdout, exp+"/ingest: ok") {
		t.Errorf("edited value: exit %d, want stderr prefix %q\n%s%s", r.code, want, r.stdout, r.stderr)
	}
	// --only selects: the other stages still verify.
	r = monomer(t, dir, "real", nil, append([]string{"verify"}, append(args, "--experiment", exp, "--only", "negatives")...)...)
	if r.code != 0 || strings.TrimSpace(r.stdout) != exp+"/negatives: ok (2 outputs reproduced)" {
		t.Errorf("--only negatives: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if hidden, _ := filepath.Glob(filepath.Join(dir, "run", ".verify*")); len(hidden) > 0 {
		t.Errorf("scratch left behind: %v", hidden)
	}

	write(t, filepath.Join(dir, "run", exp, "negatives", "manifest.json"), "{")
	r = monomer(t, dir, "real", nil, append([]string{"verify"}, append(args, "--only", "negatives")...)...)
	if r.code != 2 || !strings.Contains(r.stderr, "unreadable manifest") {
		t.Errorf("unreadable manifest: exit %d\n%s", r.code, r.stderr)
	}
}

// TestRebuildKeepsStages: a rebuilt binary whose stages behave the same
// (here: the same program with other bytes, as a README-only commit
// stamped into the binary gives) finds every stage up to date.
func TestRebuildKeepsStages(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo job")
	}
	dir, args := demo(t)
	args = append(args, "--run-dir", "run")
	realRun(t, dir, nil, args...)
	rebuilt := filepath.Join(dir, "monomer-rebuilt")
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(rebuilt, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(dst, src)
	src.Close()
	if err == nil {
		_, err = dst.WriteString("\x00another build\x00")
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	self := os.Args[0]
	os.Args[0] = rebuilt
	defer func() { os.Args[0] = self }()
	r := monomer(t, dir, "real", nil, append([]string{"status"}, args...)...)
	if r.code != 0 || strings.Count(r.stdout, "up to date") != demoNodes {
		t.Errorf("status after a rebuild: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = realRun(t, dir, nil, args...)
	if s := started(t, r.stderr); len(s) != 0 {
		t.Errorf("the rebuild reran %v", s)
	}
}

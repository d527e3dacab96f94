package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"monomer/pipeline/cache"
	"monomer/schema"
)

// diffCols is the test tables' schema.
type diffCols struct {
	ASIN []string    `col:"asin"`
	N    []int32     `col:"n"`
	P    []float64   `col:"p"`
	W    [][]float32 `col:"w"`
}

type cols struct {
	asin []string
	n    []int32
	p    []float64
	w    [][]float32
}

func baseTable() cols {
	return cols{
		asin: []string{"A1", "A2", "A3", "A4"},
		n:    []int32{1, 2, 3, 4},
		p:    []float64{0.5, 0.25, 1e-3, 7},
		w:    [][]float32{{1, 2}, {}, {0.5}, {3, 4, 5}},
	}
}

func writeRun(t *testing.T, dir string, tb cols, extra func(dir string)) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Join(dir, "e", "train"), 0o755))
	_, err := schema.Write(filepath.Join(dir, "e", "train", "metrics.parquet"), diffCols{tb.asin, tb.n, tb.p, tb.w})
	must(t, err)
	_, err = schema.Write(filepath.Join(dir, "metrics.parquet"), diffCols{tb.asin[:1], tb.n[:1], tb.p[:1], tb.w[:1]})
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, ".lock"), []byte(dir), 0o644))
	writeStageManifest(t, dir, "e", "train", nil)
	if extra != nil {
		extra(dir)
	}
}

// writeStageManifest writes the manifest of stage directory exp/stage
// (stage alone for a job-level stage) with the given upstream stages and
// outputs, replacing any there.
func writeStageManifest(t *testing.T, dir, exp, stage string, upstream []string, outs ...cache.Output) {
	t.Helper()
	m := &cache.Manifest{Format: 1, Inputs: cache.KeyInputs{Stage: stage, Experiment: exp}, Outputs: outs}
	for _, u := range upstream {
		m.Inputs.Upstream = append(m.Inputs.Upstream, cache.UpstreamHash{Experiment: exp, Stage: u})
	}
	sdir := filepath.Join(dir, exp, stage)
	must(t, os.MkdirAll(sdir, 0o755))
	os.Remove(filepath.Join(sdir, cache.ManifestName))
	must(t, cache.WriteManifest(sdir, m))
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name   string
		change func(tb *cols)
		extra  func(dir string)
		tol    float64
		want   string
		same   bool
	}{
		{name: "identical", same: true, want: "identical (2 tables, 0 other files, 1 manifests)"},
		{name: "string cell", change: func(tb *cols) { tb.asin[2] = "B3" },
			want: `e/train/metrics.parquet: row 2, column asin: "A3" vs "B3"`},
		{name: "first row wins over first column", change: func(tb *cols) { tb.asin[3] = "B4"; tb.p[1] = 0.3 },
			want: "e/train/metrics.parquet: row 1, column p: 0.25 vs 0.3"},
		{name: "list cell", change: func(tb *cols) { tb.w[3][2] = 6 },
			want: "e/train/metrics.parquet: row 3, column w: [3,4,5] vs [3,4,6]"},
		{name: "within tolerance", change: func(tb *cols) { tb.p[2] *= 1 + 1e-9; tb.w[0][1] = 2.000001 }, tol: 1e-6, same: true,
			want: "identical (2 tables, 0 other files, 1 manifests); largest relative difference 4.77e-07 at e/train/metrics.parquet row 0, column w: [1,2] vs [1,2.000001]"},
		{name: "beyond tolerance", change: func(tb *cols) { tb.p[0] = 0.6; tb.p[3] = 7.0000001 }, tol: 1e-6,
			want: "e/train/metrics.parquet: row 0, column p: 0.5 vs 0.6; largest relative difference 0.167 at e/train/metrics.parquet row 0, column p: 0.5 vs 0.6"},
		{name: "exact compare", change: func(tb *cols) { tb.p[3] = 7.000000000000001 },
			want: "e/train/metrics.parquet: row 3, column p: 7 vs 7.000000000000001"},
		{name: "more rows", change: func(tb *cols) {
			tb.asin, tb.n, tb.p, tb.w = append(tb.asin, "A5"), append(tb.n, 5), append(tb.p, 1), append(tb.w, nil)
		}, want: "e/train/metrics.parquet: 4 rows vs 5 (the first 4 are equal)"},
		{name: "table on one side", extra: func(dir string) {
			if strings.HasSuffix(dir, "b") {
				schema.Write(filepath.Join(dir, "e", "train", "extra.parquet"), diffCols{})
			}
		}, want: "e/train/extra.parquet: only in B"},
		{name: "hidden entries", extra: func(dir string) { // a stage being written, on one side
			if strings.HasSuffix(dir, "b") {
				tmp := filepath.Join(dir, "e", ".train.tmp-9")
				must(t, os.MkdirAll(tmp, 0o755))
				schema.Write(filepath.Join(tmp, "metrics.parquet"), diffCols{})
			}
		}, same: true, want: "identical (2 tables, 0 other files, 1 manifests)"},
		{name: "another run below one side", extra: func(dir string) { // --run-id's runs below a base run directory
			if strings.HasSuffix(dir, "a") {
				nested := filepath.Join(dir, "2026-11-28")
				writeRun(t, nested, cols{asin: []string{"Z"}, n: []int32{9}, p: []float64{9}, w: [][]float32{nil}}, nil)
				must(t, os.WriteFile(filepath.Join(nested, RunLogName), []byte("{}\n"), 0o644))
			}
		}, same: true, want: "identical (2 tables, 0 other files, 1 manifests)"},
		{name: "table in a stage's subdirectory", extra: func(dir string) {
			must(t, os.MkdirAll(filepath.Join(dir, "e", "train", "sub"), 0o755))
			schema.Write(filepath.Join(dir, "e", "train", "sub", "t.parquet"), diffCols{[]string{filepath.Base(dir)}, []int32{1}, []float64{1}, [][]float32{nil}})
		}, want: `e/train/sub/t.parquet: row 0, column asin: "a" vs "b"`},
		{name: "table outside any stage directory", extra: func(dir string) {
			must(t, os.MkdirAll(filepath.Join(dir, "other"), 0o755))
			schema.Write(filepath.Join(dir, "other", "t.parquet"), diffCols{[]string{filepath.Base(dir)}, []int32{1}, []float64{1}, [][]float32{nil}})
		}, want: `other/t.parquet: row 0, column asin: "a" vs "b"`},
		{name: "job-level stage's manifest", extra: func(dir string) {
			writeStageManifest(t, dir, "", "report", []string{"train"}, cache.Output{Name: "report.html", SHA256: filepath.Base(dir)})
		}, want: "report/manifest.json: output report.html differs (sha256 a vs b)"},
		{name: "manifest output hash", extra: func(dir string) {
			writeStageManifest(t, dir, "e", "train", nil, cache.Output{Name: "metrics.parquet", SHA256: "x"}, cache.Output{Name: "plot.png", SHA256: filepath.Base(dir)})
		}, want: "e/train/manifest.json: output plot.png differs (sha256 a vs b)"},
	}
	for _, tt := range tests {
		root := t.TempDir()
		a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
		writeRun(t, a, baseTable(), tt.extra)
		tb := baseTable()
		if tt.change != nil {
			tt.change(&tb)
		}
		writeRun(t, b, tb, tt.extra)
		res, err := Diff(t.Context(), a, b, DiffOptions{Tolerance: tt.tol, Compare: compareTables})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got := strings.ReplaceAll(res.String(), b, "B")
		if res.Identical != tt.same || got != tt.want {
			t.Errorf("%s:\n got %q (identical %v)\nwant %q", tt.name, got, res.Identical, tt.want)
		}
	}
	if _, err := Diff(t.Context(), t.TempDir(), "/nonexistent", DiffOptions{}); !errors.Is(err, ErrUsage) {
		t.Errorf("missing directory: %v", err)
	}
}

// TestDiffNotRunDirectory: two directories that hold no stage directory
// are not "identical" (a CI check with a wrong path must fail), nor is the
// parent of run directories a run directory.
func TestDiffNotRunDirectory(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	must(t, os.MkdirAll(filepath.Join(a, "docs"), 0o755))
	must(t, os.MkdirAll(b, 0o755))
	for _, pair := range [][2]string{{a, b}, {b, a}} {
		_, err := Diff(t.Context(), pair[0], pair[1], DiffOptions{})
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), pair[0]+" is not a run directory") {
			t.Errorf("Diff(t.Context(), %s, %s): %v", pair[0], pair[1], err)
		}
	}
	runs := filepath.Join(root, "runs")
	writeRun(t, filepath.Join(runs, "demo"), baseTable(), nil)
	writeStageManifest(t, filepath.Join(runs, "demo"), "", "report", []string{"e/train"})
	if _, err := Diff(t.Context(), runs, filepath.Join(runs, "demo"), DiffOptions{}); !errors.Is(err, ErrUsage) {
		t.Errorf("the parent of a run directory: %v", err)
	}
}

// TestDiffDAGOrder: the first difference named is the upstream stage's
// (train.monomer), though evaluate's table comes first in path order, and
// though train.monomer's own upstream stage is in neither run.
func TestDiffDAGOrder(t *testing.T) {
	root := t.TempDir()
	for i, dir := range []string{filepath.Join(root, "a"), filepath.Join(root, "b")} {
		tb := baseTable()
		tb.p[1] += float64(i)
		for _, st := range []string{"train.monomer", "evaluate"} {
			sdir := filepath.Join(dir, "e", st)
			must(t, os.MkdirAll(sdir, 0o755))
			name := map[string]string{"train.monomer": "params.parquet", "evaluate": "metrics.parquet"}[st]
			_, err := schema.Write(filepath.Join(sdir, name), diffCols{tb.asin, tb.n, tb.p, tb.w})
			must(t, err)
		}
		// split is in neither run: it must not hold train.monomer back.
		writeStageManifest(t, dir, "e", "train.monomer", []string{"split"})
		writeStageManifest(t, dir, "e", "evaluate", []string{"train.monomer"})
	}
	res, err := Diff(t.Context(), filepath.Join(root, "a"), filepath.Join(root, "b"), DiffOptions{Compare: compareTables})
	if err != nil {
		t.Fatal(err)
	}
	if want := "e/train.monomer/params.parquet: row 1, column p: 0.25 vs 1.25"; res.String() != want {
		t.Errorf("got %q, want %q", res.String(), want)
	}
}

// TestDiffTolerance: without a tolerance Diff stops at the first
// difference; with one it reads every table, and the largest difference
// may be in a later table than the first.
func TestDiffTolerance(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	writeRun(t, a, baseTable(), nil)
	tb := baseTable()
	tb.p[0] = 0.6
	writeRun(t, b, tb, func(dir string) { // the table outside the stage, compared last
		_, err := schema.Write(filepath.Join(dir, "metrics.parquet"), diffCols{tb.asin[:1], tb.n[:1], []float64{5}, tb.w[:1]})
		must(t, err)
	})
	exact, err := Diff(t.Context(), a, b, DiffOptions{Compare: compareTables})
	must(t, err)
	if exact.Table != "e/train/metrics.parquet" || exact.Row != 0 || exact.Tables != 1 || exact.LargestTable != "" || exact.LargestRow != -1 {
		t.Errorf("without a tolerance: %+v, want the stage's table, one table read, no largest (row -1)", exact)
	}
	tol, err := Diff(t.Context(), a, b, DiffOptions{Compare: compareTables, Tolerance: 1e-6})
	must(t, err)
	if tol.Table != "e/train/metrics.parquet" || tol.Tables != 2 || tol.LargestTable != "metrics.parquet" || tol.LargestRow != 0 || tol.LargestA != "0.5" {
		t.Errorf("with a tolerance: %+v, want the first difference in the stage's table, the largest in metrics.parquet", tol)
	}
}

// TestDiffBytes: without a CompareFunc tables are compared by their bytes,
// past the first 64 KiB block read.
func TestDiffBytes(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	big := make([]byte, 100<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	for _, dir := range []string{a, b} {
		writeRun(t, dir, baseTable(), nil)
		must(t, os.WriteFile(filepath.Join(dir, "e", "train", "big.parquet"), big, 0o644))
	}
	if res, err := Diff(t.Context(), a, b, DiffOptions{}); err != nil || !res.Identical || res.Tables != 3 {
		t.Errorf("same bytes: %v %v", res, err)
	}
	big[90<<10]++
	must(t, os.WriteFile(filepath.Join(b, "e", "train", "big.parquet"), big, 0o644))
	res, err := Diff(t.Context(), a, b, DiffOptions{})
	if want := "e/train/big.parquet: other bytes (no table comparison given)"; err != nil || res.String() != want {
		t.Errorf("a byte changed at 90 KiB: %v %v, want %q", res, err, want)
	}
}

// Issue 37: a non-table output that differs is a difference although both
// manifests record the same hash for it (a bit flipped in
// features/image.arrow, an edited index.html or PNG, a file on one side
// only); the run log is not compared.
func TestDiffEveryFile(t *testing.T) {
	arrow := make([]byte, 200<<10)
	for i := range arrow {
		arrow[i] = byte(i * 13)
	}
	outputs := map[string][]byte{
		"e/features/image.arrow": arrow,
		"report/index.html":      []byte("<html>report</html>\n"),
		"report/plots/auc.png":   []byte("\x89PNG\r\n\x1a\npixels"),
	}
	write := func(dir string, change func(files map[string][]byte)) {
		writeRun(t, dir, baseTable(), nil)
		files := map[string][]byte{}
		for k, v := range outputs {
			files[k] = append([]byte(nil), v...)
		}
		if change != nil {
			change(files)
		}
		for name, b := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(t, os.WriteFile(p, b, 0o644))
		}
		// Both manifests record the original files: what was written.
		writeStageManifest(t, dir, "e", "features", nil, cache.Output{Name: "image.arrow", SHA256: "same"})
		writeStageManifest(t, dir, "", "report", []string{"train"},
			cache.Output{Name: "index.html", SHA256: "same"}, cache.Output{Name: "plots/auc.png", SHA256: "same"})
		must(t, os.WriteFile(filepath.Join(dir, RunLogName), []byte(dir), 0o644))
	}
	for _, tc := range []struct {
		name   string
		change func(files map[string][]byte)
		want   string
	}{
		{"identical", nil, "identical (2 tables, 3 other files, 3 manifests)"},
		{"a bit flipped in image.arrow", func(f map[string][]byte) { f["e/features/image.arrow"][150<<10] ^= 1 },
			"e/features/image.arrow: other bytes from byte 153600"},
		{"an edited index.html", func(f map[string][]byte) { f["report/index.html"] = []byte("<html>REPORT</html>\n") },
			"report/index.html: other bytes from byte 6"},
		{"a truncated PNG", func(f map[string][]byte) { f["report/plots/auc.png"] = f["report/plots/auc.png"][:8] },
			"report/plots/auc.png: other length: one ends at byte 8, the other goes on"},
		{"a file on one side only", func(f map[string][]byte) { f["report/notes.txt"] = []byte("x") },
			"report/notes.txt: only in B"},
	} {
		root := t.TempDir()
		a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
		write(a, nil)
		write(b, tc.change)
		res, err := Diff(t.Context(), a, b, DiffOptions{Compare: compareTables})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := strings.ReplaceAll(res.String(), b, "B"); got != tc.want || res.Identical != (tc.change == nil) {
			t.Errorf("%s: %q (identical %v), want %q", tc.name, got, res.Identical, tc.want)
		}
	}
}

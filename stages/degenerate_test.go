package stages

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"monomer/imagefeat"
	"monomer/job"
	"monomer/pipeline"
)

// TestDegenerateFitWarned forces degenerate fits by scaling the image
// features down by 1e30: the train stage must log a WARN line naming
// experiment, model, λ and flag for every flagged grid point, fits.parquet
// must flag them and report/tables.md must mark the chosen one. Which flag
// a fit gets depends on the arithmetic: WNN's float32 dense kernels saw
// every squared difference underflow to 0, hence a constant predictor
// (as the demo's LDA+WNN once was, with topic proportions that did not
// separate items); on sparse rows its float64 sums keep the distances,
// and L-BFGS fails its first line search on weights near 1e30. The
// constant flag itself is tested in models (TestDegenerateFlags).
func TestDegenerateFitWarned(t *testing.T) {
	data, err := filepath.Abs(testData)
	if err != nil {
		t.Fatal(err)
	}
	src := testJob[:strings.Index(testJob, "  - name: women-bow")]
	src = strings.ReplaceAll(src, "DATA", data)
	src = strings.Replace(src, "lambdas: [0.0001]", "lambdas: [0.0001, 1000000]\n  image_scale: 1e30", 1)
	// WNN alone keeps it quick: products of the tiny features underflow,
	// which the CPU computes slowly.
	src = strings.Replace(src, "models: [wnn, ct, lmt, monomer]", "models: [wnn, ct]", 1)
	src = strings.Replace(src, "max_iter: 15", "max_iter: 6", 1)
	j, err := job.Parse(filepath.Join(t.TempDir(), "job.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var logs bytes.Buffer
	opts := pipeline.Options{RunDir: dir, Logger: pipeline.NewLogger(&logs, false)}
	if _, err := runStages(context.Background(), j, Experiment(), Job(), opts); err != nil {
		t.Fatal(err)
	}
	warned := map[string]bool{} // "λ flag"
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if l["level"] == slog.LevelWarn.String() && l["stage"] == "train.wnn" {
			if l["experiment"] != "men-image" || l["model"] != "wnn" || l["lambda"] == nil || l["flag"] == nil {
				t.Errorf("warning %s", line)
				continue
			}
			warned[fmt.Sprint(l["lambda"], " ", l["flag"])] = true
		}
	}
	fits := open(t, filepath.Join(dir, "men-image", "train.wnn", "fits.parquet"))
	models := must(fits.Strings("model"))(t)
	flags := must(fits.Strings("flags"))(t)
	md, err := os.ReadFile(filepath.Join(dir, "report", "tables.md"))
	if err != nil {
		t.Fatal(err)
	}
	lambdas := must(fits.Float64s("lambda"))(t)
	for i, m := range models {
		if flags[i] == "" {
			t.Errorf("%s λ=%g: no flag\n%s", m, lambdas[i], logs.String())
		}
		for _, f := range strings.Split(flags[i], ",") {
			if f != "" && !warned[fmt.Sprint(lambdas[i], " ", f)] {
				t.Errorf("%s λ=%g: flag %q not warned\n%s", m, lambdas[i], f, logs.String())
			}
		}
	}
	// The chosen WNN row carries its markers, with their legend.
	row := regexp.MustCompile(`\| men-image \| Men \| WNN \| 0\.0001 \| \d+\.\d\d% [†‡§]+ \|`)
	if !row.Match(md) || !bytes.Contains(md, []byte("Markers: ")) {
		t.Errorf("tables.md lacks the marked WNN row or the legend:\n%s", md)
	}
}

// TestConstantImageFeaturesRefused: a .b file whose every record holds the
// same vector (the demo's first, in every record) stops features with
// ErrBadInput (exit 3) and the zero-variance reason; the demo's own file
// passes (TestPipelineDeterministic and the others run it).
func TestConstantImageFeaturesRefused(t *testing.T) {
	src, err := filepath.Abs(testData)
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	for _, f := range []string{"meta_Demo.json.gz", "reviews_Demo.json.gz"} {
		if err := os.Symlink(filepath.Join(src, f), filepath.Join(data, f)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(filepath.Join(src, "image_features_Demo.b")) // gzip: written out plain
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	rs := imagefeat.RecordSize(imagefeat.Dim)
	for at := rs; at+rs <= len(b); at += rs {
		copy(b[at+imagefeat.ASINLen:at+rs], b[imagefeat.ASINLen:rs])
	}
	if err := os.WriteFile(filepath.Join(data, "image_features_Demo.b"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := job.Parse(filepath.Join(t.TempDir(), "job.yaml"), []byte(strings.ReplaceAll(testJob, "DATA", data)))
	if err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	opts := pipeline.Options{RunDir: run, Only: "ingest", Experiments: []string{"men-image"}}
	if _, err := runStages(context.Background(), j, Experiment(), Job(), opts); err != nil {
		t.Fatal(err)
	}
	opts.Only = "features"
	_, err = runStages(context.Background(), j, Experiment(), Job(), opts)
	if !errors.Is(err, pipeline.ErrBadInput) || !strings.Contains(err.Error(), "every item has the same vector") {
		t.Fatalf("err = %v, want the zero-variance refusal", err)
	}
}

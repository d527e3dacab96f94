package stages

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"monomer/job"
	"monomer/pipeline"
)

// TestConstantPredictorWarned forces constant predictors by scaling the
// image features to zero (every distance is 0, every probability σ(c), as
// the demo's LDA+WNN did with topic proportions that do not separate
// items): the train stage must log a WARN line naming experiment, model
// and λ, fits.parquet must flag the fit and report/tables.md must mark it.
// A huge λ, whose shrunk fits never beat the random start, is flagged
// kept_start the same way.
func TestConstantPredictorWarned(t *testing.T) {
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
	if _, err := pipeline.Run(context.Background(), j, Experiment(), Job(), opts); err != nil {
		t.Fatal(err)
	}
	warned := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if l["level"] == slog.LevelWarn.String() && l["stage"] == "train.wnn" && l["flag"] == "constant" {
			if l["experiment"] != "men-image" || l["lambda"] == nil || !strings.HasPrefix(l["msg"].(string), "constant predictor") {
				t.Errorf("warning %s", line)
			}
			warned[l["model"].(string)] = true
		}
	}
	fits := open(t, filepath.Join(dir, "men-image", "train.wnn", "fits.parquet"))
	models := must(fits.Strings("model"))(t)
	flags := must(fits.Strings("flags"))(t)
	md, err := os.ReadFile(filepath.Join(dir, "report", "tables.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range models {
		if !strings.Contains(flags[i], "constant") || !warned[m] {
			t.Errorf("%s: flags %q, warned %v; want a constant predictor\n%s", m, flags[i], warned[m], logs.String())
		}
	}
	// The chosen WNN row carries the constant marker; which other markers
	// join it depends on how the line search ends on this data.
	row := regexp.MustCompile(`\| men-image \| Men \| WNN \| 0\.0001 \| \d+\.\d\d% [†‡§]*†[†‡§]* \|`)
	if !row.Match(md) || !bytes.Contains(md, []byte("Markers: † constant predictor")) {
		t.Errorf("tables.md lacks the marked WNN row or the legend:\n%s", md)
	}
}

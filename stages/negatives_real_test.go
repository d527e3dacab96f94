package stages

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"monomer/job"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// realDataDir is the folder of real 2018 samples beside the repository
// (../shared/realdata); GO_MONOMER_REALDATA may point elsewhere.
func realDataDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("GO_MONOMER_REALDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "realdata")
	}
	dir, _ = filepath.Abs(dir)
	if _, err := os.Stat(filepath.Join(dir, "meta_Magazine_Subscriptions.json.gz")); err != nil {
		t.Skipf("real 2018 samples not available (%v); they live in ../shared/realdata beside the repository", err)
	}
	return dir
}

const magazineJob = `
name: magazine
data_dir: DATA
data:
  meta: meta_Magazine_Subscriptions.json.gz
  reviews: Magazine_Subscriptions_5.json.gz
settings:
  negatives: NEGATIVES
experiments:
  - name: magazine-also_bought
    category: Magazine Subscriptions
    graph: also_bought
    features: bow
    models: [ct]
`

// TestNegativesAutoOnDenseRealGraph: the also_bought graph of the real
// Magazine Subscriptions sample is too dense to rewire (more than half its
// pairs stay in R). negatives: rewire fails naming the setting to change;
// negatives: auto falls back to uniform negatives with a WARN line and the
// fallback in the stage's stats and manifest.
func TestNegativesAutoOnDenseRealGraph(t *testing.T) {
	data := realDataDir(t)
	load := func(method string) *job.Job {
		src := strings.NewReplacer("DATA", data, "NEGATIVES", method).Replace(magazineJob)
		j, err := job.Parse(filepath.Join(t.TempDir(), "job.yaml"), []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	dir := t.TempDir()
	opts := pipeline.Options{RunDir: dir, Only: "negatives"}
	for _, stage := range []string{"ingest", "features"} {
		o := opts
		o.Only = stage
		if _, err := runStages(context.Background(), load("rewire"), Experiment(), Job(), o); err != nil {
			t.Fatal(err)
		}
	}

	_, err := runStages(context.Background(), load("rewire"), Experiment(), Job(), opts)
	if err == nil || !strings.Contains(err.Error(), "pairs still in R") || !strings.Contains(err.Error(), "set negatives: auto") {
		t.Fatalf("rewire on the dense graph: %v; want the shortfall and the setting to change", err)
	}

	var logs bytes.Buffer
	opts.Logger = pipeline.NewLogger(&logs, false)
	if _, err := runStages(context.Background(), load("auto"), Experiment(), Job(), opts); err != nil {
		t.Fatal(err)
	}
	var warned bool
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if l["level"] == "WARN" && l["stage"] == "negatives" && l["experiment"] == "magazine-also_bought" &&
			strings.Contains(l["msg"].(string), "fell back to uniform negatives") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no fallback WARN line:\n%s", logs.String())
	}
	stageDir := filepath.Join(dir, "magazine-also_bought", "negatives")
	b, err := os.ReadFile(filepath.Join(stageDir, cache.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m cache.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Stats["fallback"] != "uniform" || m.Stats["method_used"] != "uniform" || m.Stats["method"] != "auto" || len(m.Warnings) != 1 {
		t.Errorf("manifest stats %v, warnings %v; want the fallback recorded", m.Stats, m.Warnings)
	}
	pos, err := schema.NumRows(filepath.Join(stageDir, "positives.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	neg, err := schema.NumRows(filepath.Join(stageDir, "negatives.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if pos == 0 || neg != pos {
		t.Errorf("%d negatives for %d positives", neg, pos)
	}
}

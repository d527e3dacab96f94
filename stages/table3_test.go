package stages

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"monomer/job"
	"monomer/pipeline"
	"monomer/report"
	"monomer/synth"
)

// TestTable3Scale generates the seven Table 3 categories at 1 % of their
// size through the code of `monomer gen --scale table3 --fraction 0.01`,
// ingests them with jobs/paper-table4-bow.yaml itself (its categories,
// depths and file names), and checks each experiment against the paper's
// Table 3: the subcategory count exactly, the items with reviews exactly
// (scaled), and the edges within four standard deviations of the scaled
// count (a planted out-degree is negative binomial with shape 1/2, variance
// m + 2m²).
func TestTable3Scale(t *testing.T) {
	const frac = 0.01
	ctx := context.Background()
	data := t.TempDir()
	cfgs, err := synth.ScaleSet("table3")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 7 {
		t.Fatalf("table3 is %d worlds, want 7", len(cfgs))
	}
	for _, c := range cfgs {
		c, err := c.Shrunk(frac)
		if err != nil {
			t.Fatal(err)
		}
		w, err := synth.NewWorld(c, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := synth.Write(ctx, data, c.Name, w, synth.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, _, feats := synth.Files(data, c.Name); fileExists(feats) {
			t.Errorf("%s: a text category got an image feature file", c.Name)
		}
	}
	jobPath := filepath.Join("..", "jobs", "paper-table4-bow.yaml")
	b, err := os.ReadFile(jobPath)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := job.ParseSets([]string{"data_dir=" + data})
	if err != nil {
		t.Fatal(err)
	}
	j, err := job.ParseWith(jobPath, b, sets)
	if err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	if _, err := runStages(ctx, j, Experiment(), Job(), pipeline.Options{RunDir: run, Only: "ingest"}); err != nil {
		t.Fatal(err)
	}
	if len(j.Experiments) != 14 {
		t.Fatalf("%d experiments, want 14", len(j.Experiments))
	}
	for i := range j.Experiments {
		e := j.Resolve(i)
		row, ok := report.PaperFor(e.Category, e.Features)
		if !ok {
			t.Fatalf("%s: no Table 3 row for %q", e.Name, e.Category)
		}
		var m struct {
			Stats map[string]float64 `json:"stats"`
		}
		raw, err := os.ReadFile(filepath.Join(run, e.Name, "ingest", "manifest.json"))
		if err == nil {
			err = json.Unmarshal(raw, &m)
		}
		if err != nil {
			t.Fatal(err)
		}
		items := math.Round(float64(row.Items) * frac)
		if got := m.Stats["subcategories"]; got != float64(row.Subcats) {
			t.Errorf("%s: %v subcategories, Table 3 has %d", e.Name, got, row.Subcats)
		}
		if got := m.Stats["items"]; got != items {
			t.Errorf("%s: %v items, want %v (Table 3's %d × %g)", e.Name, got, items, row.Items, frac)
		}
		want := float64(row.Edges[e.Graph]) * frac
		mean := float64(row.Edges[e.Graph]) / float64(row.Items)
		tol := 4 * math.Sqrt(items*(mean+2*mean*mean))
		if got := m.Stats["edges"]; math.Abs(got-want) > tol {
			t.Errorf("%s: %v %s edges, want %.0f ± %.0f (Table 3's %d × %g)", e.Name, got, e.Graph, want, tol, row.Edges[e.Graph], frac)
		}
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

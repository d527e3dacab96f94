package stages

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"monomer/job"
	"monomer/pipeline"
	"monomer/schema"
)

// readTrace takes the train stage's trace with or without model and lambda
// columns (report.Assemble titles the models, "training" where there is no
// model column), and leaves out a trace it cannot read.
func TestReadTrace(t *testing.T) {
	dir := t.TempDir()
	type fullTrace struct {
		Model      []string  `col:"model"`
		Lambda     []float64 `col:"lambda"`
		Iteration  []int32   `col:"iteration"`
		Objective  []float64 `col:"objective"`
		ValidError []float64 `col:"valid_error"`
		Evals      []int32   `col:"evaluations"`
	}
	p := filepath.Join(dir, "full.parquet")
	if _, err := schema.Write(p, fullTrace{[]string{"lmt", "monomer"}, []float64{0, 1e-4}, []int32{1, 2},
		[]float64{-0.6, -0.5}, []float64{math.NaN(), 0.3}, []int32{3, 5}}); err != nil {
		t.Fatal(err)
	}
	got := readTrace(t.Context(), p)
	if len(got) != 2 || got[1].Model != "monomer" || got[1].Lambda != 1e-4 || got[1].Iteration != 2 || got[1].ValidError != 0.3 {
		t.Errorf("full trace: %+v", got)
	}
	type bareTrace struct {
		Iteration  []int64   `col:"iteration"`
		Objective  []float64 `col:"objective"`
		ValidError []float64 `col:"valid_error"`
	}
	p = filepath.Join(dir, "bare.parquet")
	if _, err := schema.Write(p, bareTrace{[]int64{1}, []float64{-0.6}, []float64{0.4}}); err != nil {
		t.Fatal(err)
	}
	if got := readTrace(t.Context(), p); len(got) != 1 || got[0].Model != "" || got[0].Iteration != 1 {
		t.Errorf("trace without model and lambda: %+v", got)
	}
	if got := readTrace(t.Context(), filepath.Join(dir, "missing.parquet")); got != nil {
		t.Errorf("missing trace: %+v", got)
	}
	type noObj struct {
		Iteration []int64 `col:"iteration"`
	}
	p = filepath.Join(dir, "noobj.parquet")
	if _, err := schema.Write(p, noObj{[]int64{1}}); err != nil {
		t.Fatal(err)
	}
	if got := readTrace(t.Context(), p); got != nil {
		t.Errorf("trace without objective: %+v", got)
	}
}

// TestReportSectionsIncremental changes the training budget of one of the
// test job's two experiments: from the runner's own decisions, the other
// experiment's report section is up to date, and what reruns is that
// experiment's chain, its section and the job-level assembly, which
// copies the other's pictures unchanged.
func TestReportSectionsIncremental(t *testing.T) {
	dir := t.TempDir()
	j := loadTestJob(t)
	runJob(t, j, dir)
	before := must(os.ReadFile(filepath.Join(dir, "report", "e1-map-0.png")))(t)
	y := strings.Replace(strings.ReplaceAll(testJob, "DATA", must(filepath.Abs(testData))(t)),
		"models: [wnn, ct, lmt, monomer]", "models: [wnn, ct, lmt, monomer]\n    settings: {max_iter: 10}", 1)
	changed, err := job.Parse(filepath.Join(t.TempDir(), "job.yaml"), []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := runStages(t.Context(), changed, Experiment(), Job(), pipeline.Options{RunDir: dir, RunID: runID(dir)})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"men-image/report-section", "report"} {
		if !slices.Contains(sum.Stages.Run, id) {
			t.Errorf("%s did not run: %+v", id, sum.Stages)
		}
	}
	for _, id := range sum.Stages.Run {
		if id != "report" && !strings.HasPrefix(id, "men-image/") {
			t.Errorf("%s ran, although only men-image changed", id)
		}
	}
	if !slices.Contains(sum.Stages.Skipped, "women-bow/report-section") {
		t.Errorf("women-bow's section was not up to date: %+v", sum.Stages)
	}
	if after := must(os.ReadFile(filepath.Join(dir, "report", "e1-map-0.png")))(t); !bytes.Equal(before, after) {
		t.Error("women-bow's map changed in the assembled report")
	}
	page := string(must(os.ReadFile(filepath.Join(dir, "report", "index.html")))(t))
	for _, want := range []string{`<h2 id="men-image">`, `<h2 id="women-bow">`, `src="e0-map-0.png"`, `src="e1-map-0.png"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the assembled page has no %s", want)
		}
	}
}

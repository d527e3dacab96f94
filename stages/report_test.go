package stages

import (
	"bytes"
	"encoding/gob"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"monomer/job"
	"monomer/pipeline"
	"monomer/report"
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

// testSection is a section with the values gob must keep bit for bit:
// NaN (of both signs' payloads), infinities, nested lists.
func testSection() *section {
	nan := math.NaN()
	e := &report.Experiment{Name: "x", Features: "image", Items: 3,
		Models:  []report.ModelResult{{Model: "lmt", TestError: 0.25, PaperError: nan, AUC: math.Float64frombits(0xfff8000000000000), Claims: &report.Claims{Same: math.Inf(-1)}}},
		Gate:    &report.Gate{Spaces: 2, Mean: [][]float64{{0.5, 0.5}, {1, 0}}, Subcats: []string{"a", "b"}},
		Queries: []report.QueryLists{{Query: report.Item{ASIN: "q"}, Lists: []report.RecList{{Model: "LMT", Items: []report.RecItem{{Prob: 1e-300, Space: 1}}}}}}}
	return &section{Assembled: &report.Assembled{Page: e, Metrics: []report.JobMetric{{Experiment: "x", PaperError: nan}}, TrainPairs: 7},
		Section: &report.Section{LambdaPNG: "lambda.png", Maps: []report.Image{{Src: "map-0.png", Note: "KL 0.1"}}, Files: []string{"lambda.png", "map-0.png"}}}
}

// TestSectionBytesAnyProcess: section.gob has the same bytes in a process
// that met other gob types first (as a whole run does, after the bag of
// words' tagger), and reads back bit for bit.
func TestSectionBytesAnyProcess(t *testing.T) {
	if out := os.Getenv("GO_MONOMER_SECTION_OUT"); out != "" {
		var b bytes.Buffer
		var m map[string]map[string]float64
		if err := gob.NewEncoder(&b).Encode(map[string]map[string]float64{"a": {"b": 1}}); err != nil {
			t.Fatal(err)
		}
		if err := gob.NewDecoder(&b).Decode(&m); err != nil {
			t.Fatal(err)
		}
		if err := writeSection(out, testSection()); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir := t.TempDir()
	mine, theirs := filepath.Join(dir, "mine.gob"), filepath.Join(dir, "theirs.gob")
	if err := writeSection(mine, testSection()); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSectionBytesAnyProcess$")
	cmd.Env = append(os.Environ(), "GO_MONOMER_SECTION_OUT="+theirs)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if a, b := must(os.ReadFile(mine))(t), must(os.ReadFile(theirs))(t); !bytes.Equal(a, b) {
		t.Fatalf("section.gob differs between processes:\n%x\n%x", a, b)
	}
	got := must(readSection(mine))(t)
	m := got.Assembled.Page.Models[0]
	if math.Float64bits(m.AUC) != 0xfff8000000000000 || math.Float64bits(m.PaperError) != math.Float64bits(math.NaN()) ||
		!math.IsInf(m.Claims.Same, -1) || got.Assembled.Page.Gate.Mean[1][0] != 1 || got.Assembled.Page.Queries[0].Lists[0].Items[0].Prob != 1e-300 ||
		got.Section.Maps[0].Note != "KL 0.1" || got.Assembled.TrainPairs != 7 {
		t.Errorf("read back %+v", got.Assembled.Page)
	}
}

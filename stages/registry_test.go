package stages

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"monomer/job"
	"monomer/models"
	"monomer/pipeline"
	"monomer/pipeline/cache"
)

// checkEveryModel: the test job trains every registered model, and each
// is where checkModels says.
func checkEveryModel(t *testing.T, j *job.Job, dir string) {
	t.Helper()
	var trained []string
	for i := range j.Experiments {
		trained = append(trained, j.Resolve(i).Models...)
	}
	for _, m := range models.Names() {
		if !slices.Contains(trained, m) {
			t.Errorf("registered model %s: the test job does not train it", m)
		}
	}
	checkModels(t, j, dir)
}

// checkModels: each model of an experiment is where the registry says: a
// train node, rows of evaluate's metrics and of the job's metrics table,
// recommendation lists unless it is counted, and a row of the report's
// tables under its title.
func checkModels(t *testing.T, j *job.Job, dir string) {
	t.Helper()
	modelsOf := func(path string) []string {
		ms := must(open(t, path).Strings("model"))(t)
		slices.Sort(ms)
		return slices.Compact(ms)
	}
	jobMetrics := open(t, filepath.Join(dir, "metrics.parquet"))
	jobExp, jobModel := must(jobMetrics.Strings("experiment"))(t), must(jobMetrics.Strings("model"))(t)
	tables := string(must(os.ReadFile(filepath.Join(dir, "report", "tables.md")))(t))
	for i := range j.Experiments {
		e := j.Resolve(i)
		var all, retrieved []string
		for _, name := range e.Models {
			m := must(models.Lookup(name))(t)
			all = append(all, name)
			if !m.Counted {
				retrieved = append(retrieved, name)
			}
			if _, err := os.Stat(filepath.Join(dir, e.Name, "train."+name, cache.ManifestName)); err != nil {
				t.Errorf("%s: no node train.%s: %v", e.Name, name, err)
			}
			// The chosen-λ table names every model's test error by title.
			if !strings.Contains(tables, "| "+e.Name+" | ") || !strings.Contains(tables, " | "+m.Title+" | ") {
				t.Errorf("%s: tables.md has no row of %s (%s)", e.Name, name, m.Title)
			}
		}
		retrieved = append(retrieved, PopularityModel) // the baseline's row
		slices.Sort(all)
		slices.Sort(retrieved)
		if got := modelsOf(filepath.Join(dir, e.Name, "evaluate", "metrics.parquet")); !slices.Equal(got, all) {
			t.Errorf("%s: evaluate scored %v, want %v", e.Name, got, all)
		}
		if got := modelsOf(filepath.Join(dir, e.Name, "recommend", "recommend_metrics.parquet")); !slices.Equal(got, retrieved) {
			t.Errorf("%s: recommend answered with %v, want %v", e.Name, got, retrieved)
		}
		var inJob []string
		for r := range jobModel {
			if jobExp[r] == e.Name && !slices.Contains(inJob, jobModel[r]) {
				inJob = append(inJob, jobModel[r])
			}
		}
		slices.Sort(inJob)
		if !slices.Equal(inJob, all) {
			t.Errorf("%s: the job's metrics have %v, want %v", e.Name, inJob, all)
		}
	}
}

// TestRegisteredModelEverywhere registers a model the code has never
// heard of, WNN under another name and title, and runs a job training it:
// the job file accepts it, it trains, is evaluated, recommends, has a
// column in the report's tables and answers `monomer recommend`. Once
// unregistered, the job file and the command reject it, naming the
// models there are.
func TestRegisteredModelEverywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a pipeline")
	}
	wnn := must(models.Lookup(models.ModelWNN))(t)
	unregister := models.Register(models.Model{Name: "wnn2", Title: "WNN-two", Column: 5, Scorer: models.ModelWNN, Reads: wnn.Reads, Size: wnn.Size})
	defer unregister()
	j := loadTestJob(t)
	j.Experiments = j.Experiments[:1]
	j.Experiments[0].Models = []string{"wnn2", "ct", "lmt"}
	if err := j.Validate(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	runJob(t, j, dir)
	checkModels(t, j, dir)
	tables := string(must(os.ReadFile(filepath.Join(dir, "report", "tables.md")))(t))
	// Its column comes last, by its Column.
	if !strings.Contains(tables, "| Experiment | Dataset | Graph | CT | LMT | WNN-two | impr. |") {
		t.Errorf("tables.md has no WNN-two column after LMT:\n%s", tables)
	}
	e := j.Resolve(0)
	queries := must(open(t, filepath.Join(dir, e.Name, "recommend", "recommendations.parquet")).Strings("query"))(t)
	ans, err := RecommendOne(t.Context(), dir, e.Name, "wnn2", queries[0], 3, false)
	if err != nil || len(ans.Items) != 3 {
		t.Fatalf("recommend --model wnn2: %+v, %v", ans, err)
	}
	if !strings.Contains(RetrievableNames(), "wnn2") {
		t.Errorf("the --model help %q lacks wnn2", RetrievableNames())
	}

	unregister()
	if err := j.Validate(); err == nil || !strings.Contains(err.Error(), `"wnn2" is not one of wnn, ct, lmt, monomer, lda`) {
		t.Errorf("job with an unregistered model: %v", err)
	}
	_, err = RecommendOne(t.Context(), dir, e.Name, "wnn2", queries[0], 3, false)
	if !errors.Is(err, pipeline.ErrUsage) || !strings.Contains(err.Error(), "--model wnn2 is not a model (use wnn, lda, lmt or monomer)") {
		t.Errorf("recommend --model wnn2 unregistered: %v", err)
	}
}

// Issue 37: an experiment named like a file or stage directory beside the
// experiments in the run directory (the run log, a job-level stage, a
// published file), in any case, is refused with ErrConfig (exit 2) before
// any run.
func TestGraphReservedNames(t *testing.T) {
	for _, name := range []string{"runlog.jsonl", "RunLog.jsonl", "report", "Report", "metrics.parquet", "METRICS.parquet"} {
		j := loadTestJob(t)
		j.Experiments[0].Name = name
		_, err := Graph(j, Experiment(), Job())
		if !errors.Is(err, job.ErrConfig) || !strings.Contains(err.Error(), "is reserved for") {
			t.Errorf("experiment %q: %v", name, err)
		}
	}
}

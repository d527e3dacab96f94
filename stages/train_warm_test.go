package stages

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"monomer/graph"
	"monomer/job"
	"monomer/models"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// warmJob is the test job trained as one day (dir) and then again with
// warm_from naming it.
func warmJob(t *testing.T, from string) *job.Job {
	t.Helper()
	j := loadTestJob(t)
	j.WarmFrom = from
	for i := range j.Experiments {
		j.Experiments[i].Models = []string{"wnn", "lmt", "monomer"}
		if j.Experiments[i].Features == "bow" {
			j.Experiments[i].Models = []string{"wnn", "lda", "lmt"}
		}
	}
	j.Settings.MaxIter, j.Settings.Lambdas = 60, []float64{0, 1e-4}
	return j
}

func trainNodes(t *testing.T, j *job.Job, dir string) *pipeline.Summary {
	t.Helper()
	s, err := runStages(t.Context(), j, named("ingest", "bow-shard", "features", "negatives", "split", "train"), nil,
		pipeline.Options{RunDir: dir, RunID: runID(dir)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWarmFromRun: a run warm from an earlier run of the same data starts
// each model at the λ that run chose, from its parameters (the trace's
// first validation error is the earlier fit's), in fewer evaluations there;
// LDA+WNN starts cold with a WARN saying why; a rerun is byte-identical and
// up to date; a changed predecessor (its params.parquet rewritten) makes
// the warm nodes stale; a predecessor of another Features version starts
// cold with a WARN, one of another Train version maps with a WARN.
func TestWarmFromRun(t *testing.T) {
	if testing.Short() {
		t.Skip("three runs of the test job's training, about 50 CPU-s")
	}
	day1, day2 := t.TempDir(), t.TempDir()
	trainNodes(t, warmJob(t, ""), day1)
	j := warmJob(t, day1)
	trainNodes(t, j, day2)
	for _, tc := range []struct{ exp, model string }{{"men-image", "wnn"}, {"men-image", "lmt"}, {"men-image", "monomer"}, {"women-bow", "lmt"}} {
		prev, cur := filepath.Join(day1, tc.exp, "train."+tc.model), filepath.Join(day2, tc.exp, "train."+tc.model)
		fp := must(readFits(t.Context(), prev))(t)[tc.model]
		trace := must(schema.ReadAll[schema.TraceCols](t.Context(), filepath.Join(cur, "trace.parquet")))(t)
		if trace.Lambda[0] != fp.lambda || trace.Iteration[0] != 0 {
			t.Errorf("%s %s: the warm fit starts at λ %g iteration %d, want the predecessor's λ %g", tc.exp, tc.model, trace.Lambda[0], trace.Iteration[0], fp.lambda)
		}
		var pv float64
		for i, g := range fp.grid {
			if g.Lambda == fp.lambda {
				pv = fp.grid[i].ValidError
			}
		}
		if d := trace.ValidError[0] - pv; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s %s: warm start's validation error %v, the predecessor kept %v", tc.exp, tc.model, trace.ValidError[0], pv)
		}
		ev := func(dir string) int32 {
			f := must(schema.ReadAll[schema.FitsCols](t.Context(), filepath.Join(dir, "fits.parquet")))(t)
			return f.Evaluations[slices.Index(f.Lambda, fp.lambda)]
		}
		if ev(cur) >= ev(prev) {
			t.Errorf("%s %s: %d evaluations warm at λ %g, %d cold", tc.exp, tc.model, ev(cur), fp.lambda, ev(prev))
		}
		m := must(cache.ReadManifest(cur))(t)
		if _, ok := m.Stats["warm_from"]; !ok {
			t.Errorf("%s %s: no warm_from in the stats", tc.exp, tc.model)
		}
		for _, w := range m.Warnings {
			if w.Attrs["flag"] == models.FlagKeptStart {
				t.Errorf("%s %s: warm fit warned %s", tc.exp, tc.model, w.Msg)
			}
		}
	}
	// The test job splits as the paper does: the warm fits say their test
	// error is optimistic.
	if m := must(cache.ReadManifest(filepath.Join(day2, "men-image", "train.lmt")))(t); !slices.ContainsFunc(m.Warnings, func(w pipeline.Warning) bool {
		return strings.Contains(w.Msg, "split: stable")
	}) {
		t.Errorf("train.lmt warnings %v, want the split's leak named", m.Warnings)
	}
	lda := must(cache.ReadManifest(filepath.Join(day2, "women-bow", "train.lda")))(t)
	if len(lda.Warnings) == 0 || !strings.Contains(lda.Warnings[0].Msg, "cold start") || !strings.Contains(lda.Warnings[0].Msg, "LDA") {
		t.Errorf("train.lda warnings %v, want a cold start for its topics", lda.Warnings)
	}

	// A rerun elsewhere gives the same bytes; in place it is up to date.
	again := t.TempDir()
	trainNodes(t, j, again)
	a, b := parquetFiles(t, day2), parquetFiles(t, again)
	for name, x := range a {
		if !slices.Equal(x, b[name]) {
			t.Errorf("%s differs on a rerun of the warm job", name)
		}
	}
	if s := trainNodes(t, j, day2); s.Run != 0 {
		t.Errorf("rerun in place ran %d stages: %v", s.Run, s.Stages)
	}

	// A changed predecessor retrains what read it.
	path := filepath.Join(day1, "men-image", "train.lmt", "params.parquet")
	p := must(schema.ReadAll[schema.ParamsCols](t.Context(), path))(t)
	p.Values[1][0] += 0.5
	must(schema.Write(path, p))(t)
	steps := must(planStages(j, named("ingest", "bow-shard", "features", "negatives", "split", "train"), nil, pipeline.Options{RunDir: day2}))(t)
	for _, s := range steps {
		stale := s.State != pipeline.UpToDate
		if want := s.ID == "men-image/train.lmt"; stale != want {
			t.Errorf("%s after changing the predecessor's LMT: %s %v", s.ID, s.State, s.Reasons)
		}
	}

	// Another Features version: cold; another Train version: mapped.
	w := warmFor(ptr(j.Resolve(0)), "lmt")
	spec := specFor(Train{}.PartParams(ptr(j.Resolve(0)), "lmt"), "lmt")
	w.FeaturesVersion = "0.0.1"
	st, warns, err := warmStart(t.Context(), w, spec, "lmt", 4096, nil)
	if err != nil || st != nil || len(warns) != 1 || !strings.Contains(warns[0].Msg, "features 0.0.1") {
		t.Errorf("another features version: start %v, warnings %v, %v", st != nil, warns, err)
	}
	w.FeaturesVersion, w.TrainVersion, w.Leak = Features{}.Version(), "0.0.1", ""
	st, warns, err = warmStart(t.Context(), w, spec, "lmt", 4096, nil)
	if err != nil || st == nil || len(warns) != 1 || !strings.Contains(warns[0].Msg, "train 0.0.1") {
		t.Errorf("another train version: start %v, warnings %v, %v", st != nil, warns, err)
	}
	// Another K: cold, naming the shapes.
	spec.K++
	if st, warns, _ = warmStart(t.Context(), w, spec, "lmt", 4096, nil); st != nil || len(warns) == 0 {
		t.Errorf("another K: start %v, warnings %v", st != nil, warns)
	}
	if _, err := os.Stat(filepath.Join(day1, "men-image", "train.lmt", "manifest.json")); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestVocabularyFrom: a bag-of-words experiment with vocabulary_from
// vectorises over the earlier run's vocabulary (the same terms in the same
// order, written again with today's document frequencies), says in its stats how
// much of the text falls outside it (on the same reviews: what its own
// leaves out), keys the vocabulary's content, and without a predecessor
// counts its own with a WARN.
func TestVocabularyFrom(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs of the test job's features, about 15 CPU-s")
	}
	day1, day2 := t.TempDir(), t.TempDir()
	stages := named("ingest", "bow-shard", "features")
	j := loadTestJob(t)
	j.Experiments = j.Experiments[1:] // women-bow
	if _, err := runStages(t.Context(), j, stages, nil, pipeline.Options{RunDir: day1}); err != nil {
		t.Fatal(err)
	}
	j.VocabularyFrom = day1
	if _, err := runStages(t.Context(), j, stages, nil, pipeline.Options{RunDir: day2}); err != nil {
		t.Fatal(err)
	}
	read := func(dir string) schema.VocabularyCols {
		return must(schema.ReadAll[schema.VocabularyCols](t.Context(), filepath.Join(dir, "women-bow", "features", "vocabulary.parquet")))(t)
	}
	v1, v2 := read(day1), read(day2)
	if len(v1.Term) == 0 || !slices.Equal(v1.Term, v2.Term) || !slices.Equal(v1.Kind, v2.Kind) {
		t.Errorf("vocabularies differ: %d and %d terms", len(v1.Term), len(v2.Term))
	}
	m := must(cache.ReadManifest(filepath.Join(day2, "women-bow", "features")))(t)
	cov, ok := m.Stats["vocabulary_from"].(map[string]any)
	if !ok || cov["outside"] != cov["own_outside"] || cov["candidates"].(float64) <= cov["outside"].(float64) {
		t.Errorf("vocabulary_from stats %v", m.Stats["vocabulary_from"])
	}
	if len(m.Inputs.Files) != 1 || !strings.HasSuffix(m.Inputs.Files[0].Path, "vocabulary.parquet") {
		t.Errorf("features keys files %v, want the fixed vocabulary", m.Inputs.Files)
	}
	j.VocabularyFrom = t.TempDir() // no run there
	p := Features{}.Params(ptr(j.Resolve(0)))
	if p.Vocabulary != "" || !strings.Contains(p.VocabularyMissing, "has no vocabulary") {
		t.Errorf("no predecessor: %+v", p)
	}
}

// TestWarmFromOwnRunDir: warm_from naming the run's own --run-dir (no
// --run-id), by another spelling or through a symlink, starts cold with
// the "own directory" WARN rather than from the run's previous outputs,
// whose every change would retrain it.
func TestWarmFromOwnRunDir(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{dir, dir + "/", filepath.Join(dir, "x", ".."), link} {
		j := loadTestJob(t)
		j.RunDir, j.WarmFrom = dir, from
		w := warmFor(ptr(j.Resolve(0)), "lmt")
		if w.Dir != "" || !strings.Contains(w.Missing, "this run's own directory") {
			t.Errorf("warm_from %s in run dir %s: %+v, want a cold start naming its own directory", from, dir, w)
		}
	}
	// Not yet made: the paths compare.
	j := loadTestJob(t)
	j.RunDir, j.WarmFrom = filepath.Join(dir, "new"), filepath.Join(dir, "new")+"/"
	if w := warmFor(ptr(j.Resolve(0)), "lmt"); !strings.Contains(w.Missing, "own directory") {
		t.Errorf("a run dir not made yet: %+v", w)
	}
}

// TestSplitLeak: a warm start warns of pairs its predecessor trained on in
// tonight's test split unless both runs split stable.
func TestSplitLeak(t *testing.T) {
	if w := splitLeak("", t.TempDir()); !strings.Contains(w, "splits paper") {
		t.Errorf("paper split: %q", w)
	}
	if w := splitLeak(graph.SplitStable, t.TempDir()); !strings.Contains(w, "predecessor did not split stable (its split unread)") {
		t.Errorf("no predecessor manifest: %q", w)
	}
	for _, p := range []string{graph.SplitGrouped, graph.SplitStable} {
		dir := t.TempDir()
		if err := cache.WriteManifest(dir, &cache.Manifest{Stats: map[string]any{"protocol": p}}); err != nil {
			t.Fatal(err)
		}
		if w := splitLeak(graph.SplitStable, dir); (w == "") != (p == graph.SplitStable) {
			t.Errorf("predecessor split %s: %q", p, w)
		}
	}
}

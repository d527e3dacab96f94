package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"monomer/job"
	"monomer/pipeline/cache"
)

var allStages = []string{"a/evaluate", "a/features", "a/ingest", "a/negatives", "a/split", "a/train",
	"b/evaluate", "b/features", "b/ingest", "b/negatives", "b/split", "b/train", "report"}

func TestSkipLogic(t *testing.T) {
	f := newFixture(t)
	steps := []struct {
		name   string
		before func(t *testing.T)
		sets   []string
		want   []string // stages that run, sorted
	}{
		{name: "first run runs everything", want: allStages},
		{name: "second run runs nothing"},
		{name: "param of negatives in one experiment reruns it and its downstream",
			sets: []string{"experiments.a.settings.swaps_per_edge=30"},
			want: []string{"a/evaluate", "a/negatives", "a/split", "a/train", "report"}},
		{name: "same params again", sets: []string{"experiments.a.settings.swaps_per_edge=30"}},
		{name: "back to the file's value reruns the same stages",
			want: []string{"a/evaluate", "a/negatives", "a/split", "a/train", "report"}},
		{name: "a rerun with identical outputs leaves downstream alone",
			sets: []string{"settings.train_cap=20"}, want: []string{"a/split", "b/split"}},
		{name: "touching the raw file's mtime reruns nothing", sets: []string{"settings.train_cap=20"},
			before: func(t *testing.T) {
				later := time.Now().Add(time.Hour)
				must(t, os.Chtimes(filepath.Join(f.dir, "meta.txt"), later, later))
			}},
		{name: "new content with the old mtime reruns ingest and downstream", sets: []string{"settings.train_cap=20"},
			before: func(t *testing.T) {
				p := filepath.Join(f.dir, "meta.txt")
				fi, err := os.Stat(p)
				must(t, err)
				must(t, os.WriteFile(p, []byte("raw data v2\n"), 0o644)) // same size
				must(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
			},
			want: allStages},
		{name: "a modified output reruns its stage only", sets: []string{"settings.train_cap=20"},
			before: func(t *testing.T) {
				p := filepath.Join(f.runDir, "b", "train", "out.txt")
				b, err := os.ReadFile(p)
				must(t, err)
				b[0] ^= 1
				must(t, os.WriteFile(p, b, 0o644))
			},
			want: []string{"b/train"}},
		{name: "a deleted stage directory reruns", sets: []string{"settings.train_cap=20"},
			before: func(t *testing.T) { must(t, os.RemoveAll(filepath.Join(f.runDir, "a", "features"))) },
			want:   []string{"a/features"}},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before(t)
		}
		sum, ran, err := f.run(t, Options{}, s.sets...)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if !slices.Equal(ran, s.want) {
			t.Errorf("%s: ran %v, want %v", s.name, ran, s.want)
		}
		if sum.Run != len(s.want) || sum.Run+sum.Skipped != len(allStages) {
			t.Errorf("%s: summary %+v", s.name, sum)
		}
		if h := hidden(t, f.runDir); len(h) > 0 {
			t.Errorf("%s: left %v", s.name, h)
		}
	}
	// The published root file is the report's.
	a, err := os.ReadFile(filepath.Join(f.runDir, "metrics.parquet"))
	must(t, err)
	b, err := os.ReadFile(filepath.Join(f.runDir, "report", "metrics.parquet"))
	must(t, err)
	if !bytes.Equal(a, b) {
		t.Error("metrics.parquet at the root differs from report/metrics.parquet")
	}
}

func TestSelection(t *testing.T) {
	f := newFixture(t)
	if _, _, err := f.run(t, Options{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts Options
		want []string
		err  string
	}{
		{name: "only, up to date", opts: Options{Only: "features"}},
		{name: "only, forced", opts: Options{Only: "features", Force: true}, want: []string{"a/features", "b/features"}},
		{name: "from, forced, one experiment, no job stages", opts: Options{From: "train", Force: true, Experiments: []string{"b"}},
			want: []string{"b/evaluate", "b/train"}},
		{name: "from a job stage", opts: Options{From: "report", Force: true}, want: []string{"report"}},
		{name: "only a job stage with an experiment", opts: Options{Only: "report", Force: true, Experiments: []string{"a"}}, want: []string{"report"}},
		{name: "force everything", opts: Options{Force: true}, want: allStages},
		{name: "unknown stage", opts: Options{Only: "nope"}, err: `usage: no stage "nope" (stages: ingest, features, negatives, split, train, evaluate, report)`},
		{name: "unknown experiment", opts: Options{Experiments: []string{"c"}}, err: `usage: no experiment "c" in job fake (experiments: a, b)`},
		{name: "only and from", opts: Options{Only: "ingest", From: "train"}, err: "usage: --only and --from exclude each other"},
	}
	for _, tt := range tests {
		_, ran, err := f.run(t, tt.opts)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err || !errors.Is(err, ErrUsage) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !slices.Equal(ran, tt.want) {
			t.Errorf("%s: ran %v, want %v", tt.name, ran, tt.want)
		}
	}
}

func TestOnlyWithoutUpstream(t *testing.T) {
	f := newFixture(t)
	_, ran, err := f.run(t, Options{Only: "train", Experiments: []string{"a"}})
	if err == nil || !strings.Contains(err.Error(), "a/train needs the outputs of a/split, which has not run") {
		t.Fatalf("error %v", err)
	}
	if len(ran) != 0 {
		t.Errorf("ran %v", ran)
	}
}

func TestPlan(t *testing.T) {
	f := newFixture(t)
	steps, err := planJob(f.load(t), f.exp, f.jobSt, Options{RunDir: f.runDir})
	must(t, err)
	for _, s := range steps {
		if s.State != Missing || !s.Run {
			t.Errorf("fresh: %+v", s)
		}
	}
	if h := hidden(t, f.dir); len(h) > 0 || fileExists(f.runDir) {
		t.Errorf("Plan wrote %v", h)
	}
	// A stage whose upstream has no outputs fails, typed: Fail is the
	// runner's error, Why the same in words.
	steps, err = planJob(f.load(t), f.exp, f.jobSt, Options{RunDir: f.runDir, Only: "features"})
	must(t, err)
	for _, s := range steps {
		var mu *missingUpstream
		switch {
		case s.Selected && (s.Run || !errors.As(s.Fail, &mu) || s.Why != "fails: "+s.Fail.Error()):
			t.Errorf("upstream missing: %+v", s)
		case !s.Selected && s.Fail != nil:
			t.Errorf("not selected: %+v", s)
		}
	}
	if _, _, err := f.run(t, Options{}); err != nil {
		t.Fatal(err)
	}
	steps, err = planJob(f.load(t, "experiments.b.settings.swaps_per_edge=5"), f.exp, f.jobSt,
		Options{RunDir: f.runDir, Experiments: []string{"b"}})
	must(t, err)
	got := map[string]string{}
	for _, s := range steps {
		got[s.ID] = fmt.Sprintf("%s|%v|%s|%s", s.State, s.Run, s.Why, s.Note)
	}
	want := map[string]string{
		"a/ingest":    "up to date|false|not selected|",
		"b/ingest":    "up to date|false|up to date|",
		"b/features":  "up to date|false|up to date|",
		"b/negatives": "stale|true|stale: param swaps changed (20 -> 5)|",
		"b/split":     "up to date|true|upstream b/negatives runs first (then skipped if its outputs come out unchanged)|upstream b/negatives is stale, so a run may redo it",
		"report":      "up to date|false|not selected|",
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: got %q, want %q", id, got[id], w)
		}
	}
}

// TestPlanBlocked: as in a run, a stage that would fail blocks everything
// downstream, up to date or not, and only the failure counts as one.
func TestPlanBlocked(t *testing.T) {
	f := newFixture(t)
	if _, _, err := f.run(t, Options{}); err != nil {
		t.Fatal(err)
	}
	must(t, os.Remove(filepath.Join(f.dir, "meta.txt")))
	steps, err := planJob(f.load(t), f.exp, f.jobSt, Options{RunDir: f.runDir})
	must(t, err)
	for _, s := range steps {
		switch {
		case s.Stage == "ingest":
			if s.Fail == nil || s.Blocked || s.Run {
				t.Errorf("%s: %+v", s.ID, s)
			}
		case s.ID == "report":
			if want := "blocked: a/ingest, b/ingest would fail"; !s.Blocked || s.Fail != nil || s.Why != want {
				t.Errorf("report: %q, want %q", s.Why, want)
			}
		default:
			if want := "blocked: " + s.Experiment + "/ingest would fail"; !s.Blocked || s.Fail != nil || s.Run || s.Why != want {
				t.Errorf("%s: %+v, want %q", s.ID, s, want)
			}
		}
	}
	// A run directory that is a file: the run's usage error, not one
	// failure a stage.
	file := filepath.Join(f.dir, "file")
	must(t, os.WriteFile(file, nil, 0o644))
	for _, dir := range []string{file, filepath.Join(file, "run")} {
		if _, err := planJob(f.load(t), f.exp, f.jobSt, Options{RunDir: dir}); !errors.Is(err, ErrUsage) {
			t.Errorf("run directory %s: %v", dir, err)
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestFailureContinuesOtherExperiments(t *testing.T) {
	f := newFixture(t)
	bad := fmt.Errorf("amazon: meta.txt: 12 rejects of 100: %w", ErrBadInput)
	f.exp[1].(*fakeStage).fail = func(env *tEnv) error {
		if env.Exp.Name == "a" {
			return bad
		}
		return nil
	}
	var logs bytes.Buffer
	sum, ran, err := f.run(t, Options{Logger: NewLogger(&logs, false)})
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "pipeline: a/features: amazon: meta.txt") || strings.Contains(err.Error(), "stages failed") {
		t.Fatalf("error %v", err)
	}
	want := []string{"a/features", "a/ingest", "b/evaluate", "b/features", "b/ingest", "b/negatives", "b/split", "b/train"}
	if !slices.Equal(ran, want) {
		t.Errorf("ran %v, want %v", ran, want)
	}
	if sum.Failed != 1 || sum.Run != 7 || sum.Skipped != 0 || sum.Blocked != 5 {
		t.Errorf("summary %+v", sum)
	}
	if fileExists(filepath.Join(f.runDir, "a", "features")) || len(hidden(t, f.runDir)) > 0 {
		t.Error("a failed stage left a directory")
	}
	for _, w := range []string{`"msg":"stage failed","experiment":"a","stage":"features"`,
		`"msg":"stage skip","experiment":"a","stage":"negatives","reason":"upstream a/features failed"`,
		`"msg":"run summary","stages_run":7,"stages_skipped":0,"stages_failed":1,"stages_blocked":5`,
		`"failed":["a/features"]}`} {
		if !strings.Contains(withoutRun(logs.String()), w) {
			t.Errorf("log lacks %s:\n%s", w, logs.String())
		}
	}
	// Both experiments failing: the first error, and how many failed.
	f.exp[1].(*fakeStage).fail = func(*tEnv) error { return bad }
	_, _, err = f.run(t, Options{Force: true})
	if err == nil || !strings.HasPrefix(err.Error(), "pipeline: a/features: amazon") || !strings.HasSuffix(err.Error(), "(2 stages failed)") {
		t.Errorf("two failures: error %v", err)
	}
	// a's failure permanent, b's one a retry may cure: the run answers
	// with b's, so that a scheduler retries it (issue 52: a refused
	// publish beside a locked experiment).
	flaky := errors.New("disk full")
	f.exp[1].(*fakeStage).fail = func(env *tEnv) error {
		if env.Exp.Name == "a" {
			return bad
		}
		return flaky
	}
	retryable := func(err error) bool { return errors.Is(err, flaky) }
	_, _, err = f.run(t, Options{Force: true, Retryable: retryable})
	if !errors.Is(err, flaky) || errors.Is(err, ErrBadInput) || !strings.HasSuffix(err.Error(), "(2 stages failed)") {
		t.Errorf("a permanent and a retryable failure: error %v", err)
	}
	// Without a retryable one, the first error.
	f.exp[1].(*fakeStage).fail = func(*tEnv) error { return bad }
	if _, _, err = f.run(t, Options{Force: true, Retryable: retryable}); !errors.Is(err, ErrBadInput) {
		t.Errorf("two permanent failures: error %v", err)
	}
	// Fixed, the next run resumes at the failed stage.
	f.exp[1].(*fakeStage).fail = nil
	_, ran, err = f.run(t, Options{})
	must(t, err)
	want = []string{"a/evaluate", "a/features", "a/negatives", "a/split", "a/train", "report"}
	if !slices.Equal(ran, want) {
		t.Errorf("resumed %v, want %v", ran, want)
	}
}

func TestPanicIsAFailure(t *testing.T) {
	f := newFixture(t)
	f.exp[0].(*fakeStage).fail = func(env *tEnv) error { panic("boom") }
	_, _, err := f.run(t, Options{})
	if err == nil || !strings.Contains(err.Error(), "stage panicked: boom") {
		t.Fatalf("error %v", err)
	}
}

func TestCancel(t *testing.T) {
	f := newFixture(t)
	neg := f.exp[2].(*fakeStage)
	blocked := make(chan struct{}, 1)
	neg.block, neg.blocked = "a", blocked
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-blocked // a/negatives is running: a/ingest and a/features are done
		cancel()
	}()
	sum, err := runJob(ctx, f.load(t), f.exp, f.jobSt, Options{RunDir: f.runDir})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	if sum.Run != 2 || len(hidden(t, f.runDir)) > 0 || fileExists(filepath.Join(f.runDir, "a", "negatives")) {
		t.Errorf("summary %+v, hidden %v", sum, hidden(t, f.runDir))
	}
}

func TestManifest(t *testing.T) {
	f := newFixture(t)
	if _, _, err := f.run(t, Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := cache.ReadManifest(filepath.Join(f.runDir, "a", "evaluate"))
	must(t, err)
	if m.Key != m.Inputs.Key() || m.Seed != 7 || len(m.Outputs) != 2 || m.Tools.Go == "" {
		t.Errorf("manifest %+v", m)
	}
	if o := m.Outputs[0]; o.Name != "metrics.parquet" || o.Rows == nil || *o.Rows != 2 || len(o.SHA256) != 64 {
		t.Errorf("output %+v", o)
	}
	if len(m.Inputs.Upstream) != 1 || m.Inputs.Upstream[0].Stage != "train" {
		t.Errorf("upstream %+v", m.Inputs.Upstream)
	}
	if !strings.HasPrefix(m.Inputs.Code, "exe:") {
		t.Errorf("code %q", m.Inputs.Code)
	}
	if !m.Finished.After(m.Started) && !m.Finished.Equal(m.Started) {
		t.Errorf("times %v %v", m.Started, m.Finished)
	}
	r, ok := m.Config.(map[string]any)
	if !ok || r["Settings"].(map[string]any)["K"] != float64(100) {
		t.Errorf("config %#v", m.Config)
	}
	ing, err := cache.ReadManifest(filepath.Join(f.runDir, "b", "ingest"))
	must(t, err)
	if len(ing.Inputs.Files) != 1 || filepath.Base(ing.Inputs.Files[0].Path) != "meta.txt" {
		t.Errorf("files %+v", ing.Inputs.Files)
	}
}

func TestCodeVersion(t *testing.T) {
	f := newFixture(t)
	if _, _, err := f.run(t, Options{}); err != nil {
		t.Fatal(err)
	}
	// Declaring a version replaces the executable's hash: the stage reruns
	// once (with the same outputs, so downstream stays), then only when the
	// version changes.
	tr := f.exp[4].(*fakeStage)
	tr.version = "1"
	f.exp[4] = versionedStage{tr}
	for i, want := range [][]string{{"a/train", "b/train"}, nil} {
		_, ran, err := f.run(t, Options{})
		must(t, err)
		if !slices.Equal(ran, want) {
			t.Errorf("round %d: ran %v, want %v", i, ran, want)
		}
	}
	tr.version = "2"
	steps, err := planJob(f.load(t), f.exp, f.jobSt, Options{RunDir: f.runDir})
	must(t, err)
	for _, s := range steps {
		if s.ID == "a/train" && (s.State != Stale || s.Reasons[0] != `code version changed ("v1" -> "v2")`) {
			t.Errorf("a/train: %+v", s)
		}
	}
}

func TestLockHeldInProcess(t *testing.T) {
	f := newFixture(t)
	must(t, os.MkdirAll(f.runDir, 0o755))
	l, err := acquire(filepath.Join(f.runDir, LockName), true)
	must(t, err)
	_, _, err = f.run(t, Options{})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("is held by pid %d started ", os.Getpid())) {
		t.Errorf("error %v", err)
	}
	l.release()
	if _, _, err := f.run(t, Options{}); err != nil {
		t.Fatal(err)
	}
}

func TestStaleLockTakenOver(t *testing.T) {
	f := newFixture(t)
	must(t, os.MkdirAll(f.runDir, 0o755))
	must(t, os.WriteFile(filepath.Join(f.runDir, LockName), []byte("pid 999999 started 2026-01-01T00:00:00Z on gone\n"), 0o644))
	var logs bytes.Buffer
	if _, _, err := f.run(t, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(withoutRun(logs.String()), `"msg":"took over the lock of a run that is gone","holder":"pid 999999 started 2026-01-01T00:00:00Z on gone"`) {
		t.Errorf("log:\n%s", logs.String())
	}
	b, err := os.ReadFile(filepath.Join(f.runDir, LockName))
	must(t, err)
	if len(b) != 0 {
		t.Errorf("lock file after the run: %q", b)
	}
	// The same for an experiment's lock, taken by a run of that experiment.
	must(t, os.WriteFile(filepath.Join(f.runDir, "a", LockName), []byte("pid 999998 started 2026-01-01T00:00:00Z on gone\n"), 0o644))
	logs.Reset()
	if _, _, err := f.run(t, Options{Experiments: []string{"a"}, Logger: slog.New(slog.NewJSONHandler(&logs, nil))}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(withoutRun(logs.String()), `"msg":"took over the lock of a run that is gone","experiment":"a","holder":"pid 999998 started 2026-01-01T00:00:00Z on gone"`) {
		t.Errorf("experiment lock, log:\n%s", logs.String())
	}
}

func TestExperimentLocks(t *testing.T) {
	f := newFixture(t)
	must(t, os.MkdirAll(filepath.Join(f.runDir, "a"), 0o755))
	// A run restricted to a holds the root shared and a exclusively.
	root, err := acquire(filepath.Join(f.runDir, LockName), false)
	must(t, err)
	la, err := acquire(filepath.Join(f.runDir, "a", LockName), true)
	must(t, err)
	defer root.release()
	defer la.release()
	// Another experiment can run beside it.
	if _, ran, err := f.run(t, Options{Experiments: []string{"b"}}); err != nil || len(ran) != 6 {
		t.Errorf("b beside a: ran %v, %v", ran, err)
	}
	// The same experiment cannot, nor the whole job.
	for _, o := range []Options{{Experiments: []string{"a"}}, {}} {
		_, _, err := f.run(t, o)
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d started", os.Getpid())) {
			t.Errorf("%+v: error %v", o, err)
		}
	}
}

// jobKeyedStage is a job-level stage whose key holds a setting of every
// experiment (as the report's holds each experiment's map size).
type jobKeyedStage struct{ *fakeStage }

func (s jobKeyedStage) JobKey(j *job.Job) (any, []string) {
	var items []int
	for i := range j.Experiments {
		items = append(items, j.Resolve(i).Settings.ReportMapItems)
	}
	return map[string]any{"map_items": items}, nil
}

// TestJobKey: a setting only a job-level stage reads reruns that stage
// alone, also when one experiment overrides it.
func TestJobKey(t *testing.T) {
	f := newFixture(t)
	f.jobSt[0] = jobKeyedStage{f.jobSt[0].(*fakeStage)}
	if _, _, err := f.run(t, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set   string
		stale bool
	}{
		{"", false},
		{"settings.report_map_items=1000", false}, // the default, said
		{"experiments.b.settings.report_map_items=50", true},
		{"settings.report_map_items=200", true},
	} {
		var sets []string
		if c.set != "" {
			sets = []string{c.set}
		}
		steps, err := planJob(f.load(t, sets...), f.exp, f.jobSt, Options{RunDir: f.runDir})
		must(t, err)
		for _, s := range steps {
			want := UpToDate
			if s.ID == "report" && c.stale {
				want = Stale
			}
			if s.State != want {
				t.Errorf("%q: %s is %s (%v), want %s", c.set, s.ID, s.State, s.Reasons, want)
			}
		}
	}
}

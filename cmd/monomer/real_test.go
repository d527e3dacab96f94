package main

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// These tests run the real stages on jobs/demo.yaml and the committed tiny
// data set (testdata/amazon; GO_MONOMER_TESTDATA may point elsewhere).
// Training and the report's t-SNE maps are cut short with overrides: the
// tests are about the runner, and every stage still runs.
var fastSets = []string{"--set", "settings.max_iter=10", "--set", "settings.lambdas=[0.0001]", "--set", "settings.report_map_items=100"}

// demo copies the demo data into a new directory (so tests may change it)
// and returns the directory and the arguments selecting it.
func demo(t *testing.T) (string, []string) {
	t.Helper()
	src := os.Getenv("GO_MONOMER_TESTDATA")
	if src == "" {
		src, _ = filepath.Abs("../../testdata/amazon")
	}
	if _, err := os.Stat(filepath.Join(src, "meta_Demo.json.gz")); err != nil {
		t.Skipf("no demo data in %s (run make testdata)", src)
	}
	jobFile, _ := filepath.Abs("../../jobs/demo.yaml")
	dir := t.TempDir()
	data := filepath.Join(dir, "amazon")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(src)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(data, e.Name()), string(b))
	}
	return dir, append([]string{jobFile, "--set", "data_dir=" + data}, fastSets...)
}

// started lists "experiment/stage" of every stage a run's log says
// started, sorted.
func started(t *testing.T, stderr string) []string {
	out := startOrder(t, stderr)
	slices.Sort(out)
	return out
}

func realRun(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	r := monomer(t, dir, "real", env, append([]string{"run"}, args...)...)
	if r.code != 0 {
		t.Fatalf("monomer run %v: exit %d\n%s", args, r.code, r.stderr)
	}
	return r
}

func TestDemoDeterminismAndSkips(t *testing.T) {
	dir, args := demo(t)
	realRun(t, dir, []string{"GOMAXPROCS=1"}, append(args, "--run-dir", "p1")...)
	realRun(t, dir, []string{"GOMAXPROCS=2"}, append(args, "--run-dir", "p2")...)
	r := monomer(t, dir, "real", nil, "diff", "p1", "p2")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "identical") {
		t.Fatalf("GOMAXPROCS 1 vs 2: %s%s", r.stdout, r.stderr)
	}

	const men, bow = "men-also_bought-image", "men-also_bought-bow"
	after := func(exp string, stages ...string) []string {
		var out []string
		for _, s := range stages {
			out = append(out, exp+"/"+s)
		}
		return out
	}
	meta := filepath.Join(dir, "amazon", "meta_Demo.json.gz")
	steps := []struct {
		name   string
		before func()
		sets   []string
		want   []string // stages that start
	}{
		{name: "second run runs nothing"},
		{name: "a negatives parameter reruns negatives and what it changes",
			sets: []string{"--set", "experiments." + men + ".settings.swaps_per_edge=3"},
			want: append(after(men, "evaluate", "negatives", "recommend", "report-section", "split", "train.ct", "train.lmt", "train.monomer", "train.wnn"), "report")},
		{name: "a model's setting retrains that model alone",
			sets: []string{"--set", "experiments." + men + ".settings.swaps_per_edge=3", "--set", "experiments." + men + ".settings.monomer_k=4"},
			want: append(after(men, "evaluate", "recommend", "report-section", "train.monomer"), "report")},
		{name: "touching the raw file reruns nothing", sets: []string{"--set", "experiments." + men + ".settings.swaps_per_edge=3", "--set", "experiments." + men + ".settings.monomer_k=4"},
			before: func() {
				later := time.Now().Add(time.Hour)
				os.Chtimes(meta, later, later)
			}},
		{name: "new bytes, same records: ingest reruns, its outputs do not change",
			sets:   []string{"--set", "experiments." + men + ".settings.swaps_per_edge=3", "--set", "experiments." + men + ".settings.monomer_k=4"},
			before: func() { regzip(t, meta) },
			want:   []string{bow + "/ingest", men + "/ingest"}},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		r := realRun(t, dir, nil, append(append(args, "--run-dir", "p1"), s.sets...)...)
		if got := started(t, r.stderr); !slices.Equal(got, s.want) {
			t.Errorf("%s: started %v, want %v", s.name, got, s.want)
		}
	}
	checkRecommendCommand(t, dir, "p1")
}

// checkRecommendCommand runs recommend's --help examples on a demo run and
// checks what a user reads (issue 22): the example's item is in the demo,
// an LMT list has no space column, no blank title and probabilities that
// differ, and an unknown experiment is named.
func checkRecommendCommand(t *testing.T, dir, run string) {
	t.Helper()
	for _, line := range strings.Split(recommendExample, "\n") {
		args := strings.Fields(strings.ReplaceAll(line, "runs/demo", run))[1:]
		if r := monomer(t, dir, "real", nil, args...); r.code != 0 {
			t.Errorf("%s: exit %d\n%s", line, r.code, r.stderr)
		}
	}
	r := monomer(t, dir, "real", nil, "recommend", run, "--experiment", "men-also_bought-bow", "--model", "lmt", "--asin", "B0PIS3DABW")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 12 || strings.Join(strings.Fields(lines[1]), " ") != "rank asin probability distance subcategory title" {
		t.Fatalf("lmt list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	probs := map[string]bool{}
	for _, l := range lines[2:] {
		f := regexp.MustCompile(`^\d+ +\S+ +(.+?) {2,}\S+ {2,}\S.* {2,}(\S.*)$`).FindStringSubmatch(l)
		if f == nil {
			t.Errorf("lmt line without a title: %q", l)
			continue
		}
		probs[f[1]] = true
	}
	if len(probs) < 2 {
		t.Errorf("lmt list: probabilities %v do not tell the items apart:\n%s", probs, r.stdout)
	}
	r = monomer(t, dir, "real", nil, "recommend", run, "--experiment", "nope", "--asin", "B0PIS3DABW")
	if r.code != 2 || !strings.Contains(r.stderr, `unknown experiment "nope"; the run directory p1 has experiments men-also_bought-bow, men-also_bought-image`) {
		t.Errorf("unknown experiment: exit %d %s", r.code, r.stderr)
	}
}

// regzip rewrites a gzip file with another compression level: other bytes,
// the same content.
func regzip(t *testing.T, p string) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(out, gzip.BestSpeed)
	zw.Write(raw)
	zw.Close()
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDemoCrash kills a real run with SIGKILL at several points (the run
// kills itself there: GO_MONOMER_KILL_AT, crash_hook_test.go), resumes it,
// and checks that the resumed run starts exactly the stages the killed one
// had not finished and that the outputs are an uninterrupted run's.
func TestDemoCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("several runs of the demo job")
	}
	dir, args := demo(t)
	ref := realRun(t, dir, nil, append(args, "--run-dir", "ref")...)
	order := startOrder(t, ref.stderr)
	for _, at := range []string{
		"men-also_bought-image/features:start",
		"men-also_bought-image/train.monomer:progress=3", // inside training, outputs not written
		"men-also_bought-bow/ingest:end",                 // outputs and manifest written
		"men-also_bought-bow/features:start",
		"report:start",
	} {
		id, when, _ := strings.Cut(at, ":")
		i := slices.Index(order, id)
		if i < 0 {
			t.Fatalf("%s: no such stage in the run's order %v", at, order)
		}
		// Killed at or inside a stage, it and the rest rerun; killed at its
		// end, only the rest.
		want := slices.Clone(order[i:])
		if when == "end" {
			want = want[1:]
		}
		slices.Sort(want)
		run := "crash-" + strings.NewReplacer("/", "-", ":", "-", "=", "").Replace(at)
		killed := monomer(t, dir, "real", []string{"GO_MONOMER_KILL_AT=" + at}, append([]string{"run"}, append(args, "--run-dir", run)...)...)
		if killed.code != -1 {
			t.Fatalf("%s: the run was not killed (exit %d)\n%s", at, killed.code, killed.stderr)
		}
		r := realRun(t, dir, nil, append(args, "--run-dir", run)...)
		if got := started(t, r.stderr); !slices.Equal(got, want) {
			t.Errorf("%s: resumed run started %v, want %v", at, got, want)
		}
		d := monomer(t, dir, "real", nil, "diff", "ref", run)
		if d.code != 0 {
			t.Errorf("%s: %s%s", at, d.stdout, d.stderr)
		}
	}
}

// startOrder lists "experiment/stage" of every stage a run's log says
// started, in the order they started.
func startOrder(t *testing.T, stderr string) []string {
	var out []string
	for _, l := range logLines(t, stderr) {
		if l["msg"] == "stage start" {
			id, _ := l["stage"].(string)
			if e, ok := l["experiment"].(string); ok {
				id = e + "/" + id
			}
			out = append(out, id)
		}
	}
	return out
}

// With vocab_shards, the plan holds the bow-shard nodes between ingest and
// features as ordinary "run" tasks, and running the tasks as a scheduler
// would (bow-shard, the alias, for one of them) works end to end.
func TestPlanBowShards(t *testing.T) {
	dir, args := demo(t)
	const exp = "men-also_bought-bow"
	args = append(args, "--set", "experiments."+exp+".settings.vocab_shards=2")
	r := monomer(t, dir, "real", nil, append([]string{"plan", "--json"}, args...)...)
	var p planJSON
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || r.code != 0 {
		t.Fatalf("%v %s", err, r.stderr)
	}
	byID := map[string]planTask{}
	for _, tk := range p.Tasks {
		byID[tk.ID] = tk
	}
	sh := byID[exp+".bow-shard-1-of-2"]
	if sh.Command != "run" || sh.Stage != "bow-shard" || strings.Join(sh.Args, " ") != "--experiment "+exp+" --only bow-shard-1-of-2" ||
		strings.Join(sh.Upstream, ",") != exp+".ingest" || sh.Dir != exp+"/bow-shard-1-of-2" {
		t.Errorf("shard task %+v", sh)
	}
	if f := byID[exp+".features"]; strings.Join(f.Upstream, ",") != exp+".ingest,"+exp+".bow-shard-0-of-2,"+exp+".bow-shard-1-of-2" {
		t.Errorf("features task %+v", f)
	}
	if _, ok := byID["men-also_bought-image.bow-shard-0-of-2"]; ok {
		t.Error("shards of an image experiment")
	}
	for _, id := range []string{exp + ".ingest", exp + ".bow-shard-0-of-2", exp + ".features"} {
		tk := byID[id]
		r := monomer(t, dir, "real", nil, append(append([]string{tk.Command}, args...), tk.Args...)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", id, r.code, r.stderr)
		}
		if id == exp+".ingest" {
			// The alias runs the other shard.
			r = monomer(t, dir, "real", nil, append([]string{"bow-shard"}, append(args, "--experiment", exp, "--shard", "1/2")...)...)
			if r.code != 0 || len(started(t, r.stderr)) != 1 {
				t.Fatalf("bow-shard 1/2: exit %d\n%s", r.code, r.stderr)
			}
		}
	}
	r = monomer(t, dir, "real", nil, append([]string{"bow-shard"}, append(args, "--experiment", exp, "--shard", "1/3")...)...)
	if r.code != 2 || !strings.Contains(r.stderr, "has 2 bag-of-words shards") {
		t.Errorf("bow-shard 1/3: exit %d\n%s", r.code, r.stderr)
	}
}

// TestPlanJSONModelNodes: the real DAG has one train node per learned model
// of each experiment (CT has none), each run alone by `--only train.<model>`,
// and evaluate waits for all of them.
func TestPlanJSONModelNodes(t *testing.T) {
	dir, args := demo(t)
	r := monomer(t, dir, "real", nil, append([]string{"plan", "--json"}, args...)...)
	var p planJSON
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || r.code != 0 {
		t.Fatalf("%v %s", err, r.stderr)
	}
	tasks := map[string]planTask{}
	for _, tk := range p.Tasks {
		tasks[tk.ID] = tk
	}
	const men = "men-also_bought-image"
	var trains []string
	for _, m := range []string{"wnn", "ct", "lmt", "monomer"} {
		id := men + ".train." + m
		trains = append(trains, id)
		tk, ok := tasks[id]
		if !ok {
			t.Fatalf("no task %s in %v", id, p.Tasks)
		}
		if tk.Stage != "train" || tk.Part != m || tk.Dir != men+"/train."+m ||
			strings.Join(tk.Args, " ") != "--experiment "+men+" --only train."+m ||
			strings.Join(tk.Upstream, ",") != men+".ingest,"+men+".features,"+men+".split" {
			t.Errorf("task %+v", tk)
		}
	}
	for _, id := range []string{men + ".train"} {
		if _, ok := tasks[id]; ok {
			t.Errorf("task %s exists", id)
		}
	}
	if _, ok := tasks["men-also_bought-bow.train.lda"]; !ok {
		t.Error("no task men-also_bought-bow.train.lda")
	}
	ev := tasks[men+".evaluate"]
	for _, id := range trains {
		if !slices.Contains(ev.Upstream, id) {
			t.Errorf("evaluate does not wait for %s: %v", id, ev.Upstream)
		}
	}
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"monomer/internal/cpuflags"
	"monomer/job"
	"monomer/pipeline"
	"monomer/schema"
	"monomer/stages"
)

// The test binary doubles as the monomer binary: with GO_MONOMER_MAIN set
// it runs main() instead of the tests, with the real stages ("real") or the
// fakes below ("fake"), so the tests exercise flags, exit codes and output
// exactly as a user sees them, without a second build.
//
// GO_MONOMER_CPUINFO=FILE plays the CPU whose /proc/cpuinfo FILE records,
// in the tests (their expectations) and in the binaries they start alike:
// it changes only what monomer believes, never which instructions run, so
// `make test-cpus` runs the CPU-dependent tests as every recorded CPU, and
// a test whose binary would then load a kernel this machine's CPU cannot
// execute is skipped (playedUpward).
func TestMain(m *testing.M) {
	if f := os.Getenv("GO_MONOMER_CPUINFO"); f != "" {
		c, err := playedCPU(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		hostCPU = func() cpuflags.CPU { return c }
	}
	switch os.Getenv("GO_MONOMER_MAIN") {
	case "":
		os.Exit(m.Run())
	case "fake":
		stageSet = fakeStages
	}
	if at := os.Getenv("GO_MONOMER_KILL_AT"); at != "" {
		runHook = killAt(at)
	}
	main()
}

// fakeStages: ingest reads the raw meta file, train reads settings.k, report
// reads every experiment's train. Each writes a one-row table whose value
// hashes everything it read. GO_MONOMER_FAIL=<stage> makes a stage fail
// with bad input; GO_MONOMER_BLOCK=<stage> makes it wait for cancellation.
func fakeStages() (exp, job []stages.Stage) {
	return []stages.Stage{
			stages.Each[fakeParams](&fake{name: "ingest"}),
			stages.Each[fakeParams](&fake{name: "train", deps: []string{"ingest"}}),
		}, []stages.Stage{
			stages.JobLevel[fakeParams](&fakeJob{fake{name: "report", deps: []string{"train"}}}),
		}
}

type fake struct {
	name string
	deps []string
}

// fakeJob is the job-level fake.
type fakeJob struct{ fake }

// fakeParams are what a fake reads: ingest the category and the meta file,
// train k, report the experiments.
type fakeParams struct {
	Category    string   `json:"category,omitempty"`
	K           *int     `json:"k,omitempty"`
	Experiments []string `json:"experiments,omitempty"`
	Meta        string   `json:"-"`
}

func (p fakeParams) Files() []string {
	if p.Meta == "" {
		return nil
	}
	return []string{p.Meta}
}

// fakeOut is the fake stages' output table.
type fakeOut struct {
	ID    []string  `col:"id"`
	Value []float64 `col:"value"`
}

func (f *fake) Name() string   { return f.name }
func (f *fake) Deps() []string { return f.deps }
func (f *fake) Params(e *job.Resolved) fakeParams {
	if f.name == "ingest" {
		return fakeParams{Category: e.Category, Meta: e.Data.Meta}
	}
	return fakeParams{K: &e.Settings.K}
}

func (f *fakeJob) Params(j *job.Job) fakeParams {
	var p fakeParams
	for _, e := range j.Experiments {
		p.Experiments = append(p.Experiments, e.Name)
	}
	return p
}

func (f *fakeJob) Publish() []string { return nil }

func (f *fake) Run(ctx context.Context, env *pipeline.Env, p fakeParams) (*pipeline.Result, error) {
	if os.Getenv("GO_MONOMER_FAIL") == f.name {
		return nil, fmt.Errorf("fake: 5 of 10 lines rejected: %w", pipeline.ErrBadInput)
	}
	if os.Getenv("GO_MONOMER_BLOCK") == f.name {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	h := sha256.New()
	json.NewEncoder(h).Encode(p)
	for _, path := range p.Files() {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		h.Write(b)
	}
	var ids []string
	var vals []float64
	exps := p.Experiments
	if env.Experiment != "" {
		exps = []string{env.Experiment}
	}
	for _, e := range exps {
		for _, d := range f.deps {
			dir, err := env.StageDir(e, d)
			if err != nil {
				return nil, err
			}
			b, err := os.ReadFile(filepath.Join(dir, "out.parquet"))
			if err != nil {
				return nil, err
			}
			h.Write(b)
		}
	}
	binary.Write(h, binary.LittleEndian, env.RNG("x").Uint64())
	sum := h.Sum(nil)
	ids = append(ids, f.name)
	vals = append(vals, float64(binary.LittleEndian.Uint32(sum))/(1<<32))
	n, err := schema.Write(filepath.Join(env.OutDir, "out.parquet"), fakeOut{ids, vals})
	return &pipeline.Result{Rows: map[string]int64{"out": n}}, err
}

const cmdJob = `name: cmdtest
data: {meta: meta.txt, image_features: img.b}
experiments:
  - {name: a, category: "T > A", graph: also_bought, features: image}
  - {name: b, category: "T > B", graph: also_viewed, features: image}
`

// jobDir writes a job file and its raw input into a new directory.
func jobDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "job.yaml"), cmdJob)
	write(t, filepath.Join(dir, "meta.txt"), "raw\n")
	return dir
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

type result struct {
	code           int
	stdout, stderr string
}

// monomer runs the binary in dir with mode "fake" or "real".
func monomer(t *testing.T, dir, mode string, env []string, args ...string) result {
	t.Helper()
	return monomerEnv(t, dir, append(append(os.Environ(), "GO_MONOMER_MAIN="+mode), env...), args...)
}

// monomerEnv runs the binary in dir with exactly the environment env.
func monomerEnv(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	playedUpward(t, dir, env, args)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, stdout.String(), stderr.String()}
}

func TestExitCodes(t *testing.T) {
	dir := jobDir(t)
	write(t, filepath.Join(dir, "bad.yaml"), strings.Replace(cmdJob, "also_viewed", "also_liked", 1))
	write(t, filepath.Join(dir, "typed.yaml"), strings.Replace(cmdJob, "name: cmdtest", "name: cmdtest\nsettings:\n  k: forty", 1))
	tests := []struct {
		name   string
		env    []string
		args   []string
		code   int
		stderr string
	}{
		{name: "ok", args: []string{"run", "job.yaml"}, code: 0},
		{name: "up to date", args: []string{"run", "job.yaml"}, code: 0},
		{name: "no job", args: []string{"run"}, code: 2, stderr: "monomer: usage: monomer run takes 1 argument(s), got 0 (see monomer run --help)\n"},
		{name: "unknown command", args: []string{"rnu"}, code: 2},
		{name: "unknown flag", args: []string{"run", "job.yaml", "--forse"}, code: 2, stderr: "monomer: usage: unknown flag: --forse\n"},
		{name: "missing job file", args: []string{"run", "nope.yaml"}, code: 2, stderr: "monomer: invalid job: open nope.yaml: no such file or directory\n"},
		{name: "invalid job", args: []string{"run", "bad.yaml"}, code: 2,
			stderr: `monomer: invalid job: bad.yaml: line 5: experiments[1].graph: "also_liked" is not one of also_bought, also_viewed, bought_together, co_review` + "\n"},
		{name: "type error", args: []string{"run", "typed.yaml"}, code: 2,
			stderr: `monomer: invalid job: typed.yaml: line 3: settings.k: want an integer, got "forty"` + "\n"},
		{name: "bad override", args: []string{"run", "job.yaml", "--set", "settings.k=x"}, code: 2,
			stderr: "monomer: invalid job: job.yaml: --set settings.k=x: settings.k: want an integer, got \"x\"\n"},
		{name: "bad env override", env: []string{"MONOMER_SETTINGS__KK=1"}, args: []string{"run", "job.yaml"}, code: 2,
			stderr: `monomer: invalid job: job.yaml: MONOMER_SETTINGS__KK: unknown key "kk" in settings`},
		{name: "non-integral int", args: []string{"run", "job.yaml", "--set", "settings.k=10.5"}, code: 2,
			stderr: "monomer: invalid job: job.yaml: --set settings.k=10.5: settings.k: 10.5 is not an integer\n"},
		{name: "k beyond the features", args: []string{"run", "job.yaml", "--set", "settings.k=100000000"}, code: 2,
			stderr: "monomer: invalid job: job.yaml: experiments[0].settings.k: 100000000 is above the image features' dimension, 4096"},
		{name: "empty list", args: []string{"run", "job.yaml", "--set", "settings.lambdas=[]"}, code: 2,
			stderr: "settings.lambdas: an empty list is not allowed; omit the key to inherit the default\n"},
		{name: "unknown stage", args: []string{"run", "job.yaml", "--only", "trian"}, code: 2,
			stderr: `monomer: usage: no stage "trian" (stages: ingest, train, report)` + "\n"},
		{name: "bad run id", args: []string{"run", "job.yaml", "--run-id", "../x"}, code: 2},
		{name: "missing input", args: []string{"run", "job.yaml", "--set", "data.meta=gone.txt", "--run-id", "x"}, code: 5,
			stderr: "input file " + filepath.Join(dir, "gone.txt") + " does not exist"},
		{name: "run directory through a regular file", args: []string{"run", "job.yaml", "--run-dir", "meta.txt/runs"}, code: 2,
			stderr: "monomer: usage: run directory meta.txt/runs cannot be created: mkdir meta.txt: not a directory\n"},
		{name: "run directory under /proc", args: []string{"run", "job.yaml", "--run-dir", "/proc/monomer/runs"}, code: 2,
			stderr: "monomer: usage: run directory /proc/monomer/runs cannot be created: "},
		{name: "bad input", env: []string{"GO_MONOMER_FAIL=ingest", "MONOMER_STORE=off"}, // else restored from the store
			args: []string{"run", "job.yaml", "--run-id", "y"}, code: 3,
			stderr: "monomer: pipeline: a/ingest: fake: 5 of 10 lines rejected: bad input (2 stages failed)\n"},
		{name: "diff of a directory that is not a run directory", args: []string{"diff", "runs", "runs/cmdtest"}, code: 2,
			stderr: "monomer: usage: runs is not a run directory: no stage directory with a manifest.json in it\n"},
		{name: "diff of two directories that are not run directories", args: []string{"diff", ".", "runs"}, code: 2,
			stderr: "monomer: usage: . is not a run directory"},
		{name: "diff usage", args: []string{"diff", "runs/cmdtest", "nowhere"}, code: 2},
		{name: "recommend without --asin", args: []string{"recommend", "runs/cmdtest", "--experiment", "a"}, code: 2,
			stderr: "monomer: usage: recommend needs --asin (see --help)\n"},
		{name: "recommend from no run", args: []string{"recommend", "nowhere", "--experiment", "a", "--asin", "X"}, code: 2,
			stderr: "monomer: usage: nowhere is not a run directory (run `monomer run` first)\n"},
		{name: "recommend of an unknown experiment", args: []string{"recommend", "runs/cmdtest", "--experiment", "nope", "--asin", "X"}, code: 2,
			stderr: `unknown experiment "nope"; the run directory runs/cmdtest has experiments a, b` + "\n"},
		{name: "recommend with ct", args: []string{"recommend", "runs/cmdtest", "--experiment", "a", "--asin", "X", "--model", "ct"}, code: 2,
			stderr: "ranks subcategories, not items"},
		{name: "score without --items", args: []string{"score", "runs/cmdtest", "--experiment", "a", "--out", "scored"}, code: 2,
			stderr: "monomer: usage: score needs --items (see --help)\n"},
		{name: "score from no run", args: []string{"score", "nowhere", "--experiment", "a", "--items", "meta.txt", "--out", "scored"}, code: 2,
			stderr: "monomer: usage: nowhere is not a run directory (run `monomer run` first)\n"},
		{name: "score of a run without features", args: []string{"score", "runs/cmdtest", "--experiment", "a", "--items", "meta.txt", "--out", "scored"}, code: 2,
			stderr: "stage features has not finished (run `monomer run` first)\n"},
		{name: "score of a run and an export", args: []string{"score", "runs/cmdtest", "--model-dir", "exported", "--items", "meta.txt", "--out", "scored"}, code: 2,
			stderr: "monomer: usage: score reads RUNDIR or --model-dir, not both (see monomer score --help)\n"},
		{name: "score from no export", args: []string{"score", "--model-dir", "runs/cmdtest", "--items", "meta.txt", "--out", "scored"}, code: 2,
			stderr: "monomer: usage: runs/cmdtest has no model.json: not a `monomer export` directory\n"},
		{name: "dry run that would fail", args: []string{"run", "job.yaml", "--dry-run", "--only", "train", "--run-id", "fresh"}, code: 1,
			stderr: "monomer: dry run: 2 stage(s) would fail; the first: pipeline: a/train needs the outputs of a/ingest, which has not run (run it, or use --from ingest)\n"},
	}
	for _, tt := range tests {
		r := monomer(t, dir, "fake", tt.env, tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
			t.Errorf("%s: exit %d, want %d; stderr:\n%s", tt.name, r.code, tt.code, r.stderr)
		}
		if tt.code == 2 && strings.HasSuffix(tt.stderr, "\n") && !strings.HasSuffix(r.stderr, tt.stderr) {
			t.Errorf("%s: stderr %q, want %q", tt.name, r.stderr, tt.stderr)
		}
	}
}

func TestHelpListsExitCodes(t *testing.T) {
	r := monomer(t, t.TempDir(), "fake", nil, "--help")
	for _, want := range []string{"Exit codes:", "  2    usage error or invalid job file", "  4    run directory locked by another run", "  130  interrupted"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, r.stdout)
		}
	}
}

// logLines parses the JSON log lines of a run.
func logLines(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		out = append(out, m)
	}
	return out
}

func TestRunStatusDryRun(t *testing.T) {
	dir := jobDir(t)
	r := monomer(t, dir, "fake", nil, "run", "job.yaml")
	if r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	lines := logLines(t, r.stderr)
	var ends int
	for _, l := range lines {
		// Every line, the BLAS line before the run included, names the job
		// and the run.
		if id, _ := l["run_id"].(string); l["job"] != "cmdtest" || id == "" || id != lines[0]["run_id"] {
			t.Errorf("line without the job and run ID: %v", l)
		}
		if l["msg"] == "stage end" {
			ends++
			for _, k := range []string{"stage", "rows", "bytes", "seconds"} {
				if _, ok := l[k]; !ok {
					t.Errorf("stage end without %s: %v", k, l)
				}
			}
		}
	}
	last := lines[len(lines)-1]
	if ends != 5 || last["msg"] != "run summary" || last["stages_run"] != 5.0 || last["stages_skipped"] != 0.0 || last["stages_failed"] != 0.0 {
		t.Errorf("%d ends, last %v", ends, last)
	}
	recs, _, err := pipeline.ReadRunLog(filepath.Join(dir, "runs", "cmdtest"))
	if err != nil || len(recs) != 2 || recs[1].RunID != lines[0]["run_id"] || recs[1].ExitCode == nil || *recs[1].ExitCode != 0 ||
		!slices.Equal(recs[0].Command[1:], []string{"run", "job.yaml"}) {
		t.Errorf("run log: %+v %v", recs, err)
	}
	if !fileExists(filepath.Join(dir, "runs", "cmdtest", "b", "train", "out.parquet")) {
		t.Error("default run directory not runs/<job name>")
	}

	set := []string{"--set", "experiments.b.settings.k=7"}
	r = monomer(t, dir, "fake", nil, append([]string{"status", "job.yaml"}, set...)...)
	want := `a/ingest  up to date
a/train   up to date
b/ingest  up to date
b/train   stale: param k changed (100 -> 7)
report    up to date (upstream b/train is stale, so a run may redo it)
`
	if r.stdout != want || r.code != 0 {
		t.Errorf("status:\n%s\nwant\n%s", r.stdout, want)
	}
	before := tree(t, dir)
	r = monomer(t, dir, "fake", nil, append([]string{"run", "job.yaml", "--dry-run"}, set...)...)
	want = `a/ingest  skip: up to date
a/train   skip: up to date
b/ingest  skip: up to date
b/train   run: stale: param k changed (100 -> 7)
report    run: upstream b/train runs first (then skipped if its outputs come out unchanged)
`
	if r.stdout != want || r.code != 0 {
		t.Errorf("dry run:\n%s\nwant\n%s", r.stdout, want)
	}
	if after := tree(t, dir); after != before {
		t.Errorf("dry run changed the directory:\n%s\n---\n%s", before, after)
	}
	// The environment sets the same, and a flag beats it.
	r = monomer(t, dir, "fake", []string{"MONOMER_EXPERIMENTS__b__SETTINGS__K=7"}, "run", "job.yaml", "--experiment", "b")
	if l := logLines(t, r.stderr); r.code != 0 || l[len(l)-1]["stages_run"] != 1.0 {
		t.Errorf("env override: %s", r.stderr)
	}
	r = monomer(t, dir, "fake", []string{"MONOMER_EXPERIMENTS__b__SETTINGS__K=7"}, "status", "job.yaml", "--set", "experiments.b.settings.k=100")
	if !strings.Contains(r.stdout, "b/train   stale: param k changed (7 -> 100)") {
		t.Errorf("flag over env:\n%s", r.stdout)
	}
}

// tree lists every path under dir with its size and mtime.
func tree(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	return b.String()
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestRunIDAndDiff(t *testing.T) {
	dir := jobDir(t)
	for _, id := range []string{"2026-01-01", "2026-01-02"} {
		if r := monomer(t, dir, "fake", nil, "run", "job.yaml", "--run-dir", "out", "--run-id", id); r.code != 0 {
			t.Fatal(r.stderr)
		}
	}
	r := monomer(t, dir, "fake", nil, "diff", "out/2026-01-01", "out/2026-01-02")
	if r.code != 0 || r.stdout != "identical (5 tables, 0 other files, 5 manifests)\n" {
		t.Errorf("diff: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if !fileExists(filepath.Join(dir, "out", ".hashcache.json")) {
		t.Error("the hash cache is not shared beside the run ids")
	}
	monomer(t, dir, "fake", nil, "run", "job.yaml", "--run-dir", "out", "--run-id", "2026-01-02", "--set", "seed=5", "--experiment", "b")
	r = monomer(t, dir, "fake", nil, "diff", "out/2026-01-01", "out/2026-01-02", "--tolerance", "1e-9")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "b/ingest/out.parquet: row 0, column value: ") {
		t.Errorf("diff after a change: %d %q", r.code, r.stdout)
	}
}

func TestPlanJSON(t *testing.T) {
	dir := jobDir(t)
	r := monomer(t, dir, "fake", nil, "plan", "--json", "job.yaml")
	var p planJSON
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || r.code != 0 {
		t.Fatalf("%v %s", err, r.stderr)
	}
	if len(p.Tasks) != 5 || p.JobFile != filepath.Join(dir, "job.yaml") || strings.Join(p.JobStages, ",") != "report" {
		t.Errorf("plan %+v", p)
	}
	rep := p.Tasks[4]
	if rep.ID != "report" || strings.Join(rep.Upstream, ",") != "a.train,b.train" || strings.Join(rep.Args, " ") != "--only report" {
		t.Errorf("report task %+v", rep)
	}
	if tr := p.Tasks[1]; tr.ID != "a.train" || strings.Join(tr.Args, " ") != "--experiment a --only train" || tr.Dir != "a/train" {
		t.Errorf("train task %+v", tr)
	}
}

// startRun starts a fake run that blocks in stage, returning once the
// stage has started (the run holds the lock by then).
func startRun(t *testing.T, dir, stage string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"run", "job.yaml"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GO_MONOMER_MAIN=fake", "GO_MONOMER_BLOCK="+stage)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started, exited := make(chan struct{}), make(chan struct{})
	var log strings.Builder // read only after exited
	go func() {
		defer close(exited)
		var once sync.Once
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), `"msg":"stage start"`) && strings.Contains(sc.Text(), `"stage":"`+stage+`"`) {
				once.Do(func() { close(started) })
			}
		}
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	select {
	case <-started:
	case <-exited:
		t.Fatalf("the run exited before starting %s:\n%s", stage, log.String())
	}
	return cmd
}

func TestLockedAndInterrupted(t *testing.T) {
	dir := jobDir(t)
	cmd := startRun(t, dir, "train")
	r := monomer(t, dir, "fake", nil, "run", "job.yaml")
	want := fmt.Sprintf("monomer: pipeline: run directory locked: runs/cmdtest is held by pid %d started ", cmd.Process.Pid)
	// The error is the last line (the run's blas lines come first).
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if r.code != 4 || !strings.HasPrefix(lines[len(lines)-1], want) {
		t.Errorf("second run: exit %d, stderr %q, want a last line starting %q", r.code, r.stderr, want)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("interrupted run: %v", err)
	}
	// The next run takes the lock and resumes after ingest.
	r = monomer(t, dir, "fake", nil, "run", "job.yaml")
	if l := logLines(t, r.stderr); r.code != 0 || l[len(l)-1]["stages_run"] != 4.0 {
		t.Errorf("resumed: %s", r.stderr)
	}
}

func TestLockTakenOverAfterKill(t *testing.T) {
	dir := jobDir(t)
	cmd := startRun(t, dir, "train", "--experiment", "a")
	// A run of the other experiment may share the directory.
	if r := monomer(t, dir, "fake", nil, "run", "job.yaml", "--experiment", "b"); r.code != 0 {
		t.Errorf("b beside a: %d %s", r.code, r.stderr)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	r := monomer(t, dir, "fake", nil, "run", "job.yaml")
	if r.code != 0 || !strings.Contains(r.stderr, `"msg":"removed what an interrupted run left"`) {
		t.Errorf("after kill -9: %d\n%s", r.code, r.stderr)
	}
}

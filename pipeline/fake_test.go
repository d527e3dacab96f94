package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"monomer/job"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// The fake stages below stand in for package stages: each reads its
// upstream outputs and raw files, mixes in its parameters and a number from
// env.RNG, and writes a text file (and evaluate a Parquet table), so every
// output depends on exactly what the key says it does.

// recorder notes which stages ran, in order.
type recorder struct {
	mu  sync.Mutex
	ran []string
}

func (r *recorder) add(id string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.ran = append(r.ran, id)
	r.mu.Unlock()
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.ran
	r.ran = nil
	return out
}

type fakeStage struct {
	name    string
	deps    []string
	params  func(e *job.Resolved) any
	files   func(e *job.Resolved) []string
	rec     *recorder
	fail    func(env *tEnv) error // nil: succeed
	block   string                // experiment whose run waits for ctx
	blocked chan<- struct{}       // if set, gets a value when the stage starts waiting
	publish []string
	version string
	salt    string // a test switch: non-empty changes the output
}

func (s *fakeStage) Name() string   { return s.name }
func (s *fakeStage) Deps() []string { return s.deps }
func (s *fakeStage) Key(e *job.Resolved) (any, []string) {
	var p any = map[string]any{}
	if s.params != nil {
		p = s.params(e)
	}
	var f []string
	if s.files != nil && e != nil {
		f = s.files(e)
	}
	return p, f
}

func (s *fakeStage) Publish() []string { return s.publish }

func (s *fakeStage) Run(ctx context.Context, env *tEnv) (*Result, error) {
	id := s.name
	if env.Exp != nil {
		id = env.Exp.Name + "/" + s.name
	}
	s.rec.add(id)
	if s.fail != nil {
		if err := s.fail(env); err != nil {
			return nil, err
		}
	}
	if env.Exp != nil && env.Exp.Name == s.block {
		if s.blocked != nil {
			s.blocked <- struct{}{}
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	h := sha256.New()
	params, files := s.Key(env.Exp)
	pj, _ := json.Marshal(params)
	h.Write(pj)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		h.Write(b)
	}
	var ups []string
	if env.Exp != nil {
		ups = append(ups, s.deps...)
	} else {
		for _, e := range env.Job.Experiments {
			for _, d := range s.deps {
				ups = append(ups, e.Name+"/"+d)
			}
		}
	}
	for _, up := range ups {
		exp, stage, ok := strings.Cut(up, "/")
		if !ok {
			exp, stage = env.Exp.Name, up
		}
		dir, err := env.StageDir(exp, stage)
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(filepath.Join(dir, "out.txt"))
		if err != nil {
			return nil, fmt.Errorf("fake: %w", err)
		}
		h.Write(b)
	}
	fmt.Fprintf(h, "%d%s", env.RNG("x").Uint64(), s.salt)
	sum := hex.EncodeToString(h.Sum(nil))
	// Written in two halves with a hook between, so a test can kill the
	// process with a half-written file in the temporary directory.
	f, err := os.Create(filepath.Join(env.OutDir, "out.txt"))
	if err != nil {
		return nil, err
	}
	f.WriteString(sum[:32])
	hook("midwrite", id)
	f.WriteString(sum[32:] + "\n")
	if err := f.Close(); err != nil {
		return nil, err
	}
	rows := map[string]int64{"out": 1}
	if s.name == "evaluate" || s.name == "report" {
		n, err := schema.Write(filepath.Join(env.OutDir, "metrics.parquet"), fakeMetrics{
			[]string{id, id}, []float64{float64(len(sum)), 0.25}})
		if err != nil {
			return nil, err
		}
		rows["metrics"] = n
	}
	return &Result{Rows: rows, Stats: map[string]any{"digest": sum[:8]}}, nil
}

type versionedStage struct{ *fakeStage }

func (s versionedStage) Version() string { return s.version }

// fakeMetrics is the fake stages' metrics table.
type fakeMetrics struct {
	Model []string  `col:"model"`
	Error []float64 `col:"error"`
}

// fakeDAG returns six experiment stages and a job-level report that
// publishes metrics.parquet. ingest reads the raw file meta.txt; negatives
// reads settings.swaps_per_edge; split (quietStage) has train_cap in its key
// but not in its output.
func fakeDAG(rec *recorder) (exp, j []tStage) {
	raw := func(e *job.Resolved) []string { return []string{e.Data.Meta} }
	mk := func(name string, deps []string, params func(e *job.Resolved) any) *fakeStage {
		return &fakeStage{name: name, deps: deps, params: params, rec: rec}
	}
	ingest := mk("ingest", nil, func(e *job.Resolved) any { return map[string]any{"depth": e.Depth, "category": e.Category} })
	ingest.files = raw
	exp = []tStage{
		ingest,
		mk("features", []string{"ingest"}, func(e *job.Resolved) any { return map[string]any{"scale": e.Settings.ImageScale} }),
		mk("negatives", []string{"features"}, func(e *job.Resolved) any { return map[string]any{"swaps": e.Settings.SwapsPerEdge} }),
		&quietStage{mk("split", []string{"negatives"}, nil)},
		mk("train", []string{"split"}, func(e *job.Resolved) any { return map[string]any{"k": e.Settings.K} }),
		mk("evaluate", []string{"train"}, nil),
	}
	rep := mk("report", []string{"evaluate"}, nil)
	rep.publish = []string{"metrics.parquet"}
	return exp, []tStage{rep}
}

// quietStage has a parameter (train_cap) in its key that its output does
// not depend on (the embedded Run hashes the embedded Key's empty params):
// changing it reruns the stage with identical outputs, which must not make
// its downstream stale.
type quietStage struct{ *fakeStage }

func (s *quietStage) Key(e *job.Resolved) (any, []string) {
	return map[string]any{"cap": e.Settings.TrainCap}, nil
}

const fakeJob = `name: fake
seed: 7
data:
  meta: meta.txt
settings:
  swaps_per_edge: 20
experiments:
  - name: a
    category: "Top > A"
    graph: also_bought
    features: image
    data: {image_features: img.b}
  - name: b
    category: "Top > B"
    graph: also_viewed
    features: image
    data: {image_features: img.b}
`

// fixture is a job directory with the raw file and a run directory.
type fixture struct {
	dir, job, runDir string
	rec              *recorder
	exp, jobSt       []tStage
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{dir: dir, job: filepath.Join(dir, "job.yaml"), runDir: filepath.Join(dir, "run"), rec: &recorder{}}
	must(t, os.WriteFile(f.job, []byte(fakeJob), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "meta.txt"), []byte("raw data v1\n"), 0o644))
	f.exp, f.jobSt = fakeDAG(f.rec)
	return f
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) load(t testing.TB, sets ...string) *job.Job {
	t.Helper()
	o, err := job.ParseSets(sets)
	must(t, err)
	j, err := job.LoadWith(f.job, o)
	must(t, err)
	return j
}

func (f *fixture) run(t testing.TB, opts Options, sets ...string) (*Summary, []string, error) {
	t.Helper()
	opts.RunDir = f.runDir
	s, err := runJob(context.Background(), f.load(t, sets...), f.exp, f.jobSt, opts)
	ran := f.rec.take()
	sort.Strings(ran)
	return s, ran, err
}

// files returns every visible file under dir with its content, so two run
// directories can be compared byte for byte (manifests and the run log excepted: they
// hold times).
func files(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		must(t, err)
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(fi.Name(), ".") && rel != "." {
			if fi.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if fi.IsDir() || fi.Name() == cache.ManifestName || rel == RunLogName {
			return nil
		}
		b, err := os.ReadFile(p)
		must(t, err)
		out[rel] = string(b)
		return nil
	})
	return out
}

// hidden lists the temporary and old entries left in a run directory.
func hidden(t testing.TB, dir string) []string {
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		if strings.Contains(fi.Name(), tmpMark) || strings.Contains(fi.Name(), oldMark) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// The helper process: when GO_PIPELINE_HELPER is set, the test binary runs
// the fake job itself instead of the tests, killing itself with SIGKILL at
// the hook point named by GO_PIPELINE_KILL ("point:id"), or blocking in a
// stage (GO_PIPELINE_BLOCK=id) until signalled.
func TestMain(m *testing.M) {
	if os.Getenv("GO_PIPELINE_HELPER") == "" {
		os.Exit(m.Run())
	}
	os.Exit(helperMain())
}

// blockedLine+id is the helper's stderr line once stage id waits to be
// cancelled: a signal for the test, unlike the runner's "stage start", which
// comes before the stage's temporary directory exists.
const blockedLine = "fake: blocked in "

func helperMain() int {
	dir := os.Getenv("GO_PIPELINE_HELPER")
	f := &fixture{dir: dir, job: filepath.Join(dir, "job.yaml"), runDir: filepath.Join(dir, "run")}
	f.exp, f.jobSt = fakeDAG(nil)
	if kill := os.Getenv("GO_PIPELINE_KILL"); kill != "" {
		point, id, _ := strings.Cut(kill, ":")
		testHook = func(p, i string) {
			if p == point && i == id {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // until the signal lands
			}
		}
	}
	if id := os.Getenv("GO_PIPELINE_BLOCK"); id != "" {
		exp, stage, _ := strings.Cut(id, "/")
		blocked := make(chan struct{}, 1)
		for _, s := range f.exp {
			if fs, ok := s.(*fakeStage); ok && fs.name == stage {
				fs.block, fs.blocked = exp, blocked
			}
		}
		go func() {
			<-blocked
			fmt.Fprintln(os.Stderr, blockedLine+id)
		}()
	}
	var sets []job.Override
	if s := os.Getenv("GO_PIPELINE_SET"); s != "" {
		sets, _ = job.ParseSets(strings.Split(s, ","))
	}
	j, err := job.LoadWith(f.job, sets)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var exps []string
	if e := os.Getenv("GO_PIPELINE_EXPERIMENT"); e != "" {
		exps = []string{e}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err = runJob(ctx, j, f.exp, f.jobSt, Options{RunDir: f.runDir, Experiments: exps,
		Logger: NewLogger(os.Stderr, false)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		if errors.Is(err, ErrLocked) {
			return 4
		}
		if errors.Is(err, context.Canceled) {
			return 130
		}
		return 1
	}
	return 0
}

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"monomer/internal/sidefile"
	"monomer/pipeline/cache"
)

// Options control Run and Plan. The zero value (with RunDir set) runs every
// stale stage of every experiment, then the job-level stages, logging
// nothing.
type Options struct {
	// RunDir is the run directory. Required.
	RunDir string
	// Experiments restricts the run to these experiments' stages. Job-level
	// stages are then left out unless Only or From names one. Empty: all.
	Experiments []string
	// Only selects just this stage (of each selected experiment, or the
	// job-level stage of that name). Its upstream outputs must exist.
	Only string
	// From selects this stage and every stage downstream of it.
	From string
	// Force reruns the selected stages even when they are up to date.
	Force bool
	// Logger receives one line per stage start, end, skip and failure and a
	// final summary. If nil, nothing is logged.
	Logger *slog.Logger
	// Tracker is handed to stages as Env.Tracker. If nil, no progress.
	Tracker func(label string, total int64) Tracker
	// HashCache is the file remembering raw-input hashes by path, size,
	// mtime and ctime. If empty, RunDir/.hashcache.json. Several run
	// directories may share one (the CLI puts it beside the --run-id dirs).
	HashCache string
	// Store is the directory of the content-addressed store of stage
	// outputs (see store.go): a stale stage whose key the store holds is
	// restored from it instead of run, and every finished stage is added.
	// If empty, no store.
	Store string
	// StoreMax caps the store's size in bytes; a run trims the least
	// recently used entries beyond it at its end. If 0, cache.DefaultStoreMax.
	StoreMax int64
	// BLAS names the BLAS implementation, version and kernel of this process
	// (models.BLAS), recorded in every manifest's tools.
	BLAS string
	// RunID names this run in every log line (with the job's name) and in
	// the run log (RunLogName). If empty, NewRunID.
	RunID string
	// Command is the command line recorded in the run log.
	Command []string
	// ExitCode maps Run's error to the exit code the run log records. If
	// nil, 0 for no error and 1 for any.
	ExitCode func(error) int
	// Retryable tells the errors a retry may cure (the CLI: those of exit
	// codes 1, 4, 5 and 130). When stages fail differently, Run returns
	// the first such error, so that a scheduler retries the run, and else
	// the first error. If nil, the first error.
	Retryable func(error) bool
	// Compare locates the first differing cell of a table Verify's rerun
	// wrote otherwise (see DiffOptions.Compare). If nil, tables are
	// compared by their bytes.
	Compare CompareFunc
}

func (o *Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// lookupStore is the store of outputs Options name for lookups that write
// nothing (Plan), or nil.
func (o *Options) lookupStore() *cache.Store { return cache.LookupStore(o.Store) }

func (o *Options) hashCachePath() string {
	if o.HashCache != "" {
		return o.HashCache
	}
	return filepath.Join(o.RunDir, ".hashcache.json")
}

// State is a stage's standing against its manifest.
type State string

// The states of Step.State.
const (
	UpToDate State = "up to date"
	Stale    State = "stale"
	Missing  State = "missing"
)

// Summary counts what Run did.
type Summary struct {
	// Skipped counts stages up to date; Blocked those not run because an
	// upstream stage failed.
	Run, Skipped, Failed, Blocked int
	// Restored counts stale stages restored from the store (not in Run).
	Restored int
	Seconds  float64
	// RunID is Options.RunID, or the one generated.
	RunID string
	// Stages lists the stage IDs behind the counts.
	Stages Stages
}

// testHook, when set by tests, is called at each step of running and
// committing a stage so a test can kill the process exactly there.
var testHook func(point, id string)

func hook(point, id string) {
	if testHook != nil {
		testHook(point, id)
	}
}

// Run runs the stale selected nodes of g in DAG order: the experiment
// stages of every experiment (in job order), then the job-level stages. A stage whose key matches
// its manifest and whose outputs still hash to the recorded values is
// skipped. When a stage fails, its downstream stages are not run but other
// experiments go on (a node failed by its After alone has its outputs in
// place: its downstream stages run); the first error is returned (wrapped, so errors.Is finds
// ErrBadInput, ErrConfig or context.Canceled). Cancelling ctx stops after the
// running stage returns; nothing partial is ever visible in the run
// directory.
func Run(ctx context.Context, g *Graph, opts Options) (*Summary, error) {
	start := time.Now()
	if opts.RunDir == "" {
		return nil, fmt.Errorf("%w: no run directory", ErrUsage)
	}
	sel, err := g.selection(&opts)
	if err != nil {
		return nil, err
	}
	if err := preflightAll(g, sel); err != nil {
		return nil, err
	}
	if err := rawFilesThere(g, sel); err != nil {
		return nil, err
	}
	if opts.RunID == "" {
		opts.RunID = NewRunID(start)
	}
	// Every line names the job and the run; the text handler leaves both
	// out (see flattenAttr), a terminal showing one run at a time.
	log := opts.logger().With(slog.String("job", g.Job), slog.String("run_id", opts.RunID))
	if err := os.MkdirAll(opts.RunDir, 0o755); err != nil {
		return nil, runDirError(opts.RunDir, err)
	}
	// The store is checked before a stage runs: a folder that is not a
	// store (a project, a home directory) is refused, never trimmed.
	store, err := cache.OpenStore(opts.Store, opts.StoreMax)
	if err != nil {
		if errors.Is(err, cache.ErrNotStore) {
			return nil, err
		}
		return nil, storeDirError(opts.Store, err)
	}
	locks, err := lockFor(g, sel, &opts, log)
	if err != nil {
		return nil, err
	}
	defer func() {
		for i := len(locks) - 1; i >= 0; i-- {
			locks[i].release()
		}
	}()

	r := &runner{g: g, opts: &opts, log: log, store: store, hashes: cache.OpenHashCache(opts.hashCachePath()), sum: &Summary{RunID: opts.RunID,
		Stages: Stages{Run: []string{}, Skipped: []string{}, Restored: []string{}, Failed: []string{}, Blocked: []string{}}}}
	rec := RunRecord{Event: "start", RunID: opts.RunID, Job: g.Job, Time: start.UTC(), PID: os.Getpid(),
		Command: opts.Command, Version: cache.Version(), BLAS: opts.BLAS}
	if err := appendRunLog(opts.RunDir, &rec); errors.Is(err, sidefile.ErrForeign) {
		// Someone else's file at the log's name: no stage runs until it
		// is moved away, as for a lock (a run must leave its record).
		return nil, err
	} else if err != nil {
		log.Warn("run log not written", slog.String("error", err.Error()))
	}
	defer r.hashes.Save()
	var first, retry error       // the first error, and the first a retry may cure
	failed := map[*Node]string{} // node -> ID of the failed stage that blocks it
	for _, n := range g.Nodes {
		if !sel[n] {
			continue
		}
		if err := ctx.Err(); err != nil {
			first = errors.Join(first, err)
			break
		}
		if blocker := blockedBy(n, failed); blocker != "" {
			failed[n] = blocker
			r.sum.Blocked++
			r.sum.Stages.Blocked = append(r.sum.Stages.Blocked, n.ID)
			log.Warn("stage skip", attrs(n, slog.String("reason", "upstream "+blocker+" failed"))...)
			continue
		}
		if err := r.step(ctx, n); err != nil {
			if ae := (*afterError)(nil); !errors.As(err, &ae) {
				failed[n] = n.ID // its dependents are blocked
			}
			r.sum.Failed++
			r.sum.Stages.Failed = append(r.sum.Stages.Failed, n.ID)
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				log.Warn("stage interrupted", attrs(n)...)
				first = err
				break
			}
			log.Error("stage failed", attrs(n, slog.String("error", err.Error()))...)
			if first == nil {
				first = err
			}
			if retry == nil && opts.Retryable != nil && opts.Retryable(err) {
				retry = err
			}
		}
		if err := r.hashes.Save(); err != nil {
			log.Warn("hash cache not saved", slog.String("error", err.Error()))
		}
	}
	if store != nil {
		if tr, err := store.Trim(); err != nil {
			log.Warn("store not trimmed", slog.String("error", err.Error()))
		} else if tr.Removed > 0 {
			log.Info("store trimmed", slog.Int("removed", tr.Removed), slog.Int64("removed_bytes", tr.RemovedBytes), slog.Int64("bytes", tr.KeptBytes))
		}
	}
	r.sum.Seconds = time.Since(start).Seconds()
	summary := []any{slog.Int("stages_run", r.sum.Run), slog.Int("stages_skipped", r.sum.Skipped),
		slog.Int("stages_failed", r.sum.Failed), slog.Int("stages_blocked", r.sum.Blocked), slog.Int("stages_restored", r.sum.Restored), slog.Float64("seconds", round3(r.sum.Seconds))}
	if len(r.sum.Stages.Failed) > 0 {
		// Each failure by node, when they differ (a refused publish beside
		// a locked experiment) the one line a scheduler's log shows.
		summary = append(summary, slog.Any("failed", r.sum.Stages.Failed))
	}
	log.Info("run summary", summary...)
	if retry != nil && first != retry && !errors.Is(first, context.Canceled) && !opts.Retryable(first) {
		first = retry // a permanent failure beside it must not stop the retry
	}
	if first != nil && r.sum.Failed > 1 {
		first = fmt.Errorf("%w (%d stages failed)", first, r.sum.Failed)
	}
	code := 0
	switch {
	case opts.ExitCode != nil:
		code = opts.ExitCode(first)
	case first != nil:
		code = 1
	}
	rec.Event, rec.Time, rec.ExitCode, rec.Seconds, rec.Stages = "end", time.Now().UTC(), &code, round3(r.sum.Seconds), &r.sum.Stages
	if first != nil {
		rec.Error = first.Error()
	}
	if err := appendRunLog(opts.RunDir, &rec); err != nil {
		log.Warn("run log not written", slog.String("error", err.Error()))
	}
	return r.sum, first
}

func blockedBy(n *Node, failed map[*Node]string) string {
	for _, d := range n.Deps {
		if b, ok := failed[d]; ok {
			return b
		}
	}
	return ""
}

func attrs(n *Node, more ...any) []any {
	a := make([]any, 0, 2+len(more))
	if n.Experiment != "" {
		a = append(a, slog.String("experiment", n.Experiment))
	}
	a = append(a, slog.String("stage", n.Name))
	return append(a, more...)
}

// warningAttrs are a warning's attributes in key order.
func warningAttrs(w Warning) []any {
	keys := slices.Sorted(maps.Keys(w.Attrs))
	out := make([]any, 0, len(keys))
	for _, k := range keys {
		out = append(out, slog.Any(k, w.Attrs[k]))
	}
	return out
}

func round3(x float64) float64 {
	return float64(int64(x*1000+0.5)) / 1000
}

// lockFor takes the locks the selection needs (see LockName) and, holding
// them, cleans what interrupted runs left in the directories it owns.
func lockFor(g *Graph, sel map[*Node]bool, opts *Options, log *slog.Logger) ([]*lock, error) {
	exclusive := len(opts.Experiments) == 0
	var exps []string
	for _, n := range g.Nodes {
		if !sel[n] {
			continue
		}
		if n.Experiment == "" {
			exclusive = true
		} else if len(exps) == 0 || exps[len(exps)-1] != n.Experiment {
			exps = append(exps, n.Experiment)
		}
	}
	root, err := acquire(filepath.Join(opts.RunDir, LockName), exclusive)
	if err != nil {
		return nil, err
	}
	if root.previous != "" {
		log.Warn("took over the lock of a run that is gone", slog.String("holder", root.previous))
	}
	locks := []*lock{root}
	var dirs []string
	if exclusive {
		// Nobody else is in the run directory: clean all of it.
		dirs = append(dirs, opts.RunDir)
		for _, e := range g.Experiments {
			dirs = append(dirs, filepath.Join(opts.RunDir, e))
		}
	} else {
		for _, e := range exps {
			dir := filepath.Join(opts.RunDir, e)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, errors.Join(runDirError(dir, err), releaseAll(locks))
			}
			l, err := acquire(filepath.Join(dir, LockName), true)
			if err != nil {
				return nil, errors.Join(err, releaseAll(locks))
			}
			if l.previous != "" {
				log.Warn("took over the lock of a run that is gone", slog.String("experiment", e), slog.String("holder", l.previous))
			}
			locks = append(locks, l)
			dirs = append(dirs, dir)
		}
	}
	for _, d := range dirs {
		if err := recoverDir(d, log); err != nil {
			return nil, errors.Join(err, releaseAll(locks))
		}
	}
	return locks, nil
}

func releaseAll(locks []*lock) error {
	for i := len(locks) - 1; i >= 0; i-- {
		locks[i].release()
	}
	return nil
}

// Temporary names beside final ones: ".<name>.tmp-<pid>" is a stage being
// written (or a file being published), ".<name>.old-<pid>" a replaced stage
// directory about to be removed.
const (
	tmpMark = ".tmp-"
	oldMark = ".old-"
)

// recoverDir repairs what a killed run left in dir (a run directory or an
// experiment directory). A commit replaces a stage directory by renaming the
// old one to .<stage>.old-<pid> and the new one into place; killed between
// the two renames, the final name is missing and the old directory, still
// complete, is renamed back (the stage will then run again or be up to
// date). Every temporary and old entry is then removed. Callers hold the
// lock that covers dir, so no live run owns these entries.
func recoverDir(dir string, log *slog.Logger) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if notExist(err) {
			return nil
		}
		return fmt.Errorf("pipeline: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(dir, name)
		if i := strings.LastIndex(name, oldMark); i > 0 {
			final := filepath.Join(dir, name[1:i])
			if _, err := os.Lstat(final); notExist(err) {
				if err := os.Rename(p, final); err != nil {
					return fmt.Errorf("pipeline: restoring %s: %w", final, err)
				}
				log.Warn("restored a stage directory an interrupted run was replacing", slog.String("dir", final))
				continue
			}
		} else if !strings.Contains(name, tmpMark) {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("pipeline: removing %s: %w", p, err)
		}
		log.Info("removed what an interrupted run left", slog.String("path", p))
	}
	return cache.SyncDir(dir)
}

type runner struct {
	g      *Graph
	opts   *Options
	log    *slog.Logger
	hashes *cache.HashCache
	sum    *Summary
	// store is the store of outputs (opened by Run, looked up by Plan), or nil.
	store *cache.Store
}

// evaluation is a node's standing: its key inputs now and its state.
type evaluation struct {
	inputs   cache.KeyInputs
	manifest *cache.Manifest
	state    State
	reasons  []string
}

// inputs computes the key inputs of n from its parameters, raw files and
// its upstream manifests on disk.
func (r *runner) inputs(n *Node) (cache.KeyInputs, error) {
	params, files := n.Work.Key()
	pj, err := cache.NormalizeParams(params)
	if err != nil {
		return cache.KeyInputs{}, fmt.Errorf("pipeline: %s: parameters: %w", n.ID, err)
	}
	code, err := cache.CodeVersion(n.Stage, n.Code)
	if err != nil {
		return cache.KeyInputs{}, err
	}
	in := cache.KeyInputs{Stage: n.Stage, Experiment: n.Experiment, Code: code, Params: pj,
		Files: []cache.FileHash{}, Upstream: []cache.UpstreamHash{}}
	if n.Shards > 0 {
		in.Shard = fmt.Sprintf("%d/%d", n.Shard, n.Shards)
	}
	in.Part, in.Replica = n.Part, n.Replica
	in.Seed = n.Seed
	for _, f := range files {
		sum, size, err := r.hashes.File(f)
		if err != nil {
			return in, inputFileError(n.ID, f, err)
		}
		in.Files = append(in.Files, cache.FileHash{Path: f, SHA256: sum, Bytes: size})
	}
	for _, d := range n.Deps {
		m, err := cache.ReadManifest(d.Dir(r.opts.RunDir))
		if err != nil {
			if notExist(err) {
				return in, &missingUpstream{n: n, dep: d}
			}
			return in, err
		}
		in.Upstream = append(in.Upstream, cache.UpstreamHash{Experiment: d.Experiment, Stage: d.Name, Outputs: m.OutputMap()})
	}
	return in, nil
}

type missingUpstream struct{ n, dep *Node }

func (e *missingUpstream) Error() string {
	return fmt.Sprintf("pipeline: %s needs the outputs of %s, which has not run (run it, or use --from %s)", e.n.ID, e.dep.ID, e.dep.Name)
}

// evaluate compares n's inputs now with its manifest and its outputs with
// their recorded hashes.
func (r *runner) evaluate(n *Node) (*evaluation, error) {
	in, err := r.inputs(n)
	if err != nil {
		return nil, err
	}
	ev := &evaluation{inputs: in}
	dir := n.Dir(r.opts.RunDir)
	m, err := cache.ReadManifest(dir)
	switch {
	case notExist(err):
		ev.state = Missing
		return ev, nil
	case err != nil:
		ev.state, ev.reasons = Stale, []string{"manifest unreadable: " + err.Error()}
		return ev, nil
	}
	ev.manifest = m
	if m.Format != cache.ManifestFormat || m.Key != in.Key() {
		ev.state, ev.reasons = Stale, cache.StaleReasons(m.Inputs, in)
		return ev, nil
	}
	for _, o := range m.Outputs {
		sum, _, err := r.hashes.File(filepath.Join(dir, filepath.FromSlash(o.Name)))
		switch {
		case err != nil:
			ev.reasons = append(ev.reasons, "output "+o.Name+" is missing")
		case sum != o.SHA256:
			ev.reasons = append(ev.reasons, "output "+o.Name+" was modified")
		}
	}
	if len(ev.reasons) > 0 {
		ev.state = Stale
		return ev, nil
	}
	ev.state = UpToDate
	return ev, nil
}

// Preflight runs the pre-flight checks of the stages Run would select
// (theirs, then that their raw files are there), and returns the error
// Run would return for them before running anything (nil when all pass):
// a dry run fails with Run's error, so with its exit code.
func Preflight(g *Graph, opts Options) error {
	sel, err := g.selection(&opts)
	if err != nil {
		return err
	}
	if err := preflightAll(g, sel); err != nil {
		return err
	}
	return rawFilesThere(g, sel)
}

func preflightAll(g *Graph, sel map[*Node]bool) error {
	for _, n := range g.Nodes {
		if err := preflight(n, sel[n]); err != nil {
			return err
		}
	}
	return nil
}

// preflight runs the node's Preflight when it is selected.
func preflight(n *Node, selected bool) error {
	if !selected || n.Preflight == nil {
		return nil
	}
	if err := n.Preflight(); err != nil {
		return fmt.Errorf("pipeline: %s: %w", n.ID, err)
	}
	return nil
}

// step runs n if it is stale (or forced), else logs the skip.
func (r *runner) step(ctx context.Context, n *Node) error {
	ev, err := r.evaluate(n)
	if err != nil {
		return err
	}
	if ev.state == UpToDate && !r.opts.Force {
		r.sum.Skipped++
		r.sum.Stages.Skipped = append(r.sum.Stages.Skipped, n.ID)
		r.log.Info("stage skip", attrs(n, slog.String("reason", "up to date"))...)
		return r.finish(n)
	}
	reason := string(ev.state)
	switch {
	case ev.state == UpToDate:
		reason = "forced"
	case len(ev.reasons) > 0:
		reason = "stale: " + strings.Join(ev.reasons, "; ")
	}
	if !r.opts.Force {
		if m, err := r.restore(n, ev.inputs); err != nil {
			return err
		} else if m != nil {
			r.sum.Restored++
			r.sum.Stages.Restored = append(r.sum.Stages.Restored, n.ID)
			r.log.Info("stage restore", attrs(n, slog.String("reason", reason), slog.String("from", r.store.Entry(m.Key)))...)
			return r.finish(n)
		}
	}
	r.log.Info("stage start", attrs(n, slog.String("reason", reason))...)
	m, err := r.execute(ctx, n, ev.inputs)
	if err != nil {
		return err
	}
	r.sum.Run++
	r.sum.Stages.Run = append(r.sum.Stages.Run, n.ID)
	if st := r.store; st != nil {
		if err := st.Put(n.Dir(r.opts.RunDir), m); err != nil {
			r.log.Warn("outputs not stored", attrs(n, slog.String("error", err.Error()))...)
		}
	}
	var rows, bytes int64
	tables := make([]any, 0, len(m.Outputs))
	for _, o := range m.Outputs {
		bytes += o.Bytes
		if o.Rows != nil {
			rows += *o.Rows
			tables = append(tables, slog.Int64(strings.TrimSuffix(o.Name, filepath.Ext(o.Name)), *o.Rows))
		}
	}
	r.log.Info("stage end", attrs(n, slog.Int64("rows", rows), slog.Int64("bytes", bytes),
		slog.Float64("seconds", round3(m.Seconds)), slog.Group("tables", tables...), slog.Any("stats", m.Stats))...)
	for _, w := range m.Warnings {
		r.log.Warn(w.Msg, attrs(n, warningAttrs(w)...)...)
	}
	return r.finish(n)
}

// execute runs the stage into a temporary directory beside its final one,
// records the outputs in a manifest and renames the directory into place.
func (r *runner) execute(ctx context.Context, n *Node, in cache.KeyInputs) (*cache.Manifest, error) {
	final := n.Dir(r.opts.RunDir)
	parent := filepath.Dir(final)
	name := filepath.Base(final)
	tmp := filepath.Join(parent, fmt.Sprintf(".%s%s%d", name, tmpMark, os.Getpid()))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			os.RemoveAll(tmp)
		}
	}()
	env := n.env(r, tmp)
	started := time.Now()
	hook("run", n.ID)
	res, err := runStage(ctx, n.Work, env)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return nil, fmt.Errorf("pipeline: %s: %w", n.ID, err)
	}
	finished := time.Now()
	if res == nil {
		res = &Result{}
	}
	outs, err := r.sealOutputs(tmp, res)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %s: %w", n.ID, err)
	}
	hook("sealed", n.ID)
	m := &cache.Manifest{
		Format: cache.ManifestFormat, Key: in.Key(), Inputs: in, Outputs: outs, Stats: normalizeStats(res.Stats), Warnings: res.Warnings,
		Seed: in.Seed, Config: n.Config, Tools: cache.ToolVersions(), RunID: r.opts.RunID,
		Started: started.UTC(), Finished: finished.UTC(), Seconds: finished.Sub(started).Seconds(),
	}
	m.Tools.BLAS = r.opts.BLAS
	if err := cache.WriteManifest(tmp, m); err != nil {
		return nil, fmt.Errorf("pipeline: %s: %w", n.ID, err)
	}
	if err := cache.SyncDir(tmp); err != nil {
		return nil, fmt.Errorf("pipeline: %s: %w", n.ID, err)
	}
	hook("manifest", n.ID)
	if err := commitDir(tmp, final, n.ID); err != nil {
		return nil, fmt.Errorf("pipeline: %s: %w", n.ID, err)
	}
	committed = true
	// Remember the outputs' hashes under their final paths (a rename keeps
	// inode, size, mtime and ctime) so the next run does not rehash them.
	r.hashes.Forget(final)
	for _, o := range outs {
		r.hashes.Remember(filepath.Join(final, filepath.FromSlash(o.Name)), o.SHA256)
	}
	return m, nil
}

// env is what the node's Run gets, writing into out.
func (n *Node) env(r *runner, out string) *Env {
	inputs := make(map[string]bool, len(n.Deps))
	for _, d := range n.Deps {
		inputs[d.ID] = true
	}
	return &Env{Experiment: n.Experiment, Seed: n.Seed, OutDir: out, Stage: n.Name,
		Shard: n.Shard, Shards: n.Shards, Part: n.Part, Replica: n.Replica, Tracker: r.opts.Tracker,
		runDir: r.opts.RunDir, inputs: inputs}
}

// restore commits the store's outputs for in's key as n's stage directory,
// if the store holds them intact; it returns nil when it does not.
func (r *runner) restore(n *Node, in cache.KeyInputs) (*cache.Manifest, error) {
	st := r.store
	if st == nil || !st.Has(in.Key()) {
		return nil, nil
	}
	final := n.Dir(r.opts.RunDir)
	tmp := filepath.Join(filepath.Dir(final), fmt.Sprintf(".%s%s%d", filepath.Base(final), tmpMark, os.Getpid()))
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	defer os.RemoveAll(tmp) // gone once committed
	stored, ok := st.Restore(in.Key(), tmp)
	if !ok {
		return nil, nil
	}
	m := cache.StoredManifest(stored)
	m.Inputs = in
	if err := cache.WriteManifest(tmp, m); err != nil {
		return nil, fmt.Errorf("pipeline: %s: %w", n.ID, err)
	}
	if err := cache.SyncDir(tmp); err != nil {
		return nil, fmt.Errorf("pipeline: %s: %w", n.ID, err)
	}
	if err := commitDir(tmp, final, n.ID); err != nil {
		return nil, fmt.Errorf("pipeline: %s: %w", n.ID, err)
	}
	r.hashes.Forget(final)
	for _, o := range m.Outputs {
		r.hashes.Remember(filepath.Join(final, filepath.FromSlash(o.Name)), o.SHA256)
	}
	return m, nil
}

// runStage calls s.Run, turning a panic into an error so one broken
// experiment does not take the others down.
func runStage(ctx context.Context, s Stage, env *Env) (res *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("stage panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return s.Run(ctx, env)
}

// sealOutputs fsyncs and hashes every file under dir, in name order.
func (r *runner) sealOutputs(dir string, res *Result) ([]cache.Output, error) {
	var outs []cache.Output
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." {
				return cache.SyncDir(p)
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("output %s is not a regular file", rel)
		}
		if rel == cache.ManifestName {
			return fmt.Errorf("the stage wrote %s, which is the runner's", cache.ManifestName)
		}
		sum, size, err := syncAndHash(p, res.SHA256[rel])
		if err != nil {
			return err
		}
		o := cache.Output{Name: rel, SHA256: sum, Bytes: size}
		if !strings.Contains(rel, "/") {
			if rows, ok := res.Rows[strings.TrimSuffix(rel, filepath.Ext(rel))]; ok {
				o.Rows = &rows
			}
		}
		outs = append(outs, o)
		return nil
	})
	sort.Slice(outs, func(i, j int) bool { return outs[i].Name < outs[j].Name })
	return outs, err
}

// syncAndHash fsyncs the file at p and returns its sha256 and size; sum,
// if not "", is the sha256 the stage computed as it wrote the file
// (Result.SHA256), which saves reading it again.
func syncAndHash(p, sum string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return "", 0, err
	}
	if sum == "" {
		if sum, err = cache.HashFile(p); err != nil {
			return "", 0, err
		}
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", 0, err
	}
	return sum, fi.Size(), nil
}

// commitDir replaces final by tmp: the old directory is renamed away, the
// new one renamed in, and the old one removed. recoverDir repairs a crash
// between any two of these steps.
func commitDir(tmp, final, id string) error {
	parent := filepath.Dir(final)
	old := filepath.Join(parent, fmt.Sprintf(".%s%s%d", filepath.Base(final), oldMark, os.Getpid()))
	hadOld := false
	if _, err := os.Lstat(final); err == nil {
		if err := os.RemoveAll(old); err != nil {
			return err
		}
		if err := os.Rename(final, old); err != nil {
			return err
		}
		hadOld = true
		hook("moved-old", id)
	}
	if err := os.Rename(tmp, final); err != nil {
		if hadOld {
			os.Rename(old, final)
		}
		return err
	}
	if err := cache.SyncDir(parent); err != nil {
		return err
	}
	hook("renamed", id)
	if hadOld {
		return os.RemoveAll(old)
	}
	return nil
}

// finish is what follows a node's outputs being in place: publishing its
// files, then its After.
func (r *runner) finish(n *Node) error {
	if err := r.publish(n); err != nil {
		return err
	}
	if n.After == nil {
		return nil
	}
	if err := n.After(n.Dir(r.opts.RunDir)); err != nil {
		return &afterError{fmt.Errorf("pipeline: %s: %w", n.ID, err)}
	}
	return nil
}

// afterError is the error of a node's After: the node failed, but its
// outputs are in place and recorded, so the nodes downstream still run (a
// refused publish leaves the report to mark the refusal; see Node.After).
type afterError struct{ err error }

func (e *afterError) Error() string { return e.err.Error() }
func (e *afterError) Unwrap() error { return e.err }

// publish links the files a node's Publish names from its directory to
// the run directory's root, atomically, when they are not already there.
func (r *runner) publish(n *Node) error {
	if n.Experiment != "" {
		return nil
	}
	dir := n.Dir(r.opts.RunDir)
	for _, name := range n.Publish {
		src := filepath.Join(dir, name)
		dst := filepath.Join(r.opts.RunDir, name)
		si, err := os.Stat(src)
		if err != nil {
			return fmt.Errorf("pipeline: %s: publishing %s: %w", n.ID, name, err)
		}
		if di, err := os.Stat(dst); err == nil && os.SameFile(si, di) {
			continue
		}
		tmp := filepath.Join(r.opts.RunDir, fmt.Sprintf(".%s%s%d", name, tmpMark, os.Getpid()))
		os.Remove(tmp)
		if err := os.Link(src, tmp); err != nil {
			if err := cache.CopyFile(src, tmp); err != nil {
				os.Remove(tmp)
				return fmt.Errorf("pipeline: %s: publishing %s: %w", n.ID, name, err)
			}
		}
		if err := os.Rename(tmp, dst); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("pipeline: %s: publishing %s: %w", n.ID, name, err)
		}
		if err := cache.SyncDir(r.opts.RunDir); err != nil {
			return fmt.Errorf("pipeline: %s: %w", n.ID, err)
		}
		hook("published", n.ID)
	}
	return nil
}

package main

import (
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"monomer/imagefeat"
	"monomer/job"
	"monomer/models"
	"monomer/pipeline"
	"monomer/stages"
)

// stageSet returns the experiment and job-level stages; tests replace it.
var stageSet = func() (exp, job []stages.Stage) {
	return stages.Experiment(), stages.Job()
}

// jobGraph is the DAG of job's experiments and the stages of stageSet.
func jobGraph(j *job.Job) (*pipeline.Graph, error) {
	exp, jobSt := stageSet()
	return stages.Graph(j, exp, jobSt)
}

type runFlags struct {
	dirFlags
	experiments []string
	only, from  string
	force       bool
	dryRun      bool
	cpuProfile  string
	trace       string
}

// dirFlags are the flags every command that reads a run directory shares.
type dirFlags struct {
	runDir, runID string
	sets          []string
	global        *globalOptions
	// kernel is the BLAS kernel choice load resolved (blasChoice).
	kernel string
}

func (d *dirFlags) register(cmd *cobra.Command, g *globalOptions) {
	d.global = g
	cmd.Flags().StringVar(&d.runDir, "run-dir", "", "run directory (default $MONOMER_RUN_DIR, else runs/<job name>)")
	cmd.Flags().StringVar(&d.runID, "run-id", "", "a subdirectory of the run directory per scheduled run, e.g. Airflow's {{ ds }}; also the run ID of the log lines and runlog.jsonl (default: start time and process ID)")
	cmd.Flags().StringArrayVar(&d.sets, "set", nil, "override a job setting, key=value (repeatable; see 'monomer run --help')")
}

var runIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:+-]*$`)

// runHook, when set, adjusts a run's options before it starts: the tests
// use it to make a run kill itself at a chosen point (crash_hook_test.go).
// nil in the binary.
var runHook func(*pipeline.Options)

// loadJob reads the job file with overrides (--set values sets over
// MONOMER_* over the file), the one way every command reads a job. Paths
// in the overrides are relative to the working directory, as any command
// line's are; those in the file, to the file's folder.
func loadJob(path string, sets []string) (*job.Job, error) {
	over, err := job.ParseSets(sets)
	if err != nil {
		return nil, err
	}
	over = append(job.EnvOverrides(os.Environ()), over...)
	if wd, err := os.Getwd(); err == nil {
		over = job.ResolvePaths(over, wd)
	}
	return job.LoadWith(path, over)
}

// dataFiles are the raw files experiment r names: the release's files, a
// catalogue's tables and the embeddings with their id file ("" for those
// it does not name).
func dataFiles(r *job.Resolved) []string {
	d := r.Data
	files := []string{d.Meta, d.Reviews, d.ImageFeatures, d.Items, d.Relations, d.Text}
	if d.Embeddings != "" {
		files = append(files, imagefeat.EmbeddingFiles(d.Embeddings)...)
	}
	return files
}

// load reads the job file (loadJob) and returns it with the run directory
// and the hash-cache path.
func (d *dirFlags) load(path string) (*job.Job, pipeline.Options, error) {
	j, err := loadJob(path, d.sets)
	if err != nil {
		return nil, pipeline.Options{}, err
	}
	// Before any key is computed: the kernel is part of train's and
	// evaluate's keys. Returns only when no re-execution is needed.
	if d.kernel, err = blasChoice(d.global, j); err != nil {
		return nil, pipeline.Options{}, err
	}
	if err := applyBLASKernel(d.kernel); err != nil {
		return nil, pipeline.Options{}, err
	}
	base := d.runDir
	if base == "" {
		base = os.Getenv("MONOMER_RUN_DIR")
	}
	if base == "" {
		base = filepath.Join("runs", j.Name)
	}
	store, err := storeDir(base)
	if err != nil {
		return nil, pipeline.Options{}, err
	}
	opts := pipeline.Options{RunDir: base, HashCache: filepath.Join(base, ".hashcache.json"), Store: store, BLAS: models.BLAS().String()}
	if d.runID != "" {
		if !runIDRE.MatchString(d.runID) {
			return nil, opts, fmt.Errorf("%w: --run-id %q: letters, digits and . _ : + - only", pipeline.ErrUsage, d.runID)
		}
		if strings.EqualFold(d.runID, job.ReservedName) {
			return nil, opts, fmt.Errorf("%w: --run-id %q is reserved for the links to published runs (docs/publishing.md)", pipeline.ErrUsage, d.runID)
		}
		opts.RunDir = filepath.Join(base, d.runID)
		// The publish nodes compare with and promote in the root of runs.
		j.RunRoot, j.RunID = base, d.runID
	}
	// warm_from and vocabulary_from must not name the run itself.
	j.RunDir = opts.RunDir
	return j, opts, nil
}

// envNearMisses are the MONOMER_ variables one slip from a name monomer
// reads (job.EnvNearMisses), each to that name, and their names in order.
func envNearMisses() (map[string]string, []string) {
	m := job.EnvNearMisses(os.Environ(), "MONOMER_RUN_DIR", "MONOMER_STORE", reexecGuard)
	return m, slices.Sorted(maps.Keys(m))
}

// warnEnvSlips writes a warning line to w for each MONOMER_ variable one
// slip from a name monomer reads: the commands that read a job without
// logging (a dry run, status, verify, plan) say so on stderr, as a run
// says so in its log.
func warnEnvSlips(w io.Writer) {
	miss, names := envNearMisses()
	for _, v := range names {
		fmt.Fprintf(w, "monomer: warning: %s is not read by monomer; did you mean %s?\n", v, miss[v])
	}
}

// exactArgs is cobra.ExactArgs with the usage exit code.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("%w: %s takes %d argument(s), got %d (see %s --help)", pipeline.ErrUsage, cmd.CommandPath(), n, len(args), cmd.CommandPath())
		}
		return nil
	}
}

func newRunCommand(g *globalOptions) *cobra.Command {
	var flags runFlags
	cmd := &cobra.Command{
		Use:   "run JOB.yaml [--run-dir DIR] [--run-id ID] [--experiment NAME]... [--only STAGE | --from STAGE] [--force] [--dry-run] [--set key=value]...",
		Short: "Run every stale stage of a job",
		Long: `run runs the job's stages in DAG order (ingest, features, negatives,
split, train, evaluate, recommend, publish, report-section per experiment,
then report, which assembles the sections into one page; bag-of-words
experiments with vocab_shards add bow-shard nodes) into the run directory,
skipping every stage whose parameters, input content, upstream outputs and
code are unchanged since its manifest was written.

Selection: --experiment NAME (repeatable) restricts the run to those
experiments and leaves the job-level report out; --only STAGE runs one stage
(its upstream outputs must exist); --from STAGE runs it and everything
downstream; --force reruns the selected stages even when up to date;
--dry-run prints each selected stage as "run: reason", "skip: up to date",
"fail: why" or "blocked: the upstream stage that would fail", and touches
nothing; when a stage would fail, it exits with the code the run would exit
with. A MONOMER_ variable one slip from a name monomer reads is warned of
(did you mean ...?).

Overrides: --set key=value, where key is a dotted path of the job file and
value is YAML: seed=2, data_dir=/data/amazon, settings.k=50,
settings.lambdas=[0,1e-4], experiments.NAME.settings.monomer_k=10. The
environment does the same with MONOMER_ and "__" for ".":
MONOMER_SETTINGS__K=50, MONOMER_EXPERIMENTS__NAME__DEPTH=2. Precedence:
--set over environment over the file; the result is validated like the file.

Layout: DIR/<experiment>/<stage>/*.parquet with a manifest.json in each
stage directory, DIR/report/ and DIR/metrics.parquet. A stage writes into a
temporary directory renamed into place when complete, so an interrupted run
leaves nothing partial and the next run resumes. DIR/.lock keeps two runs
apart (runs of different experiments may share a directory). Logs are JSON
lines on stderr unless stderr is a terminal.

` + exitCodesHelp,
		Example: `  monomer run jobs/demo.yaml
  monomer run jobs/paper-table2-image.yaml --set data_dir=/data/amazon --experiment men-also_bought --from train
  monomer run jobs/demo.yaml --dry-run --set experiments.men-also_bought-image.settings.k=20`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := flags.checkProfiles(); err != nil {
				return err
			}
			job, opts, err := flags.load(args[0])
			if err != nil {
				return err
			}
			opts.Experiments, opts.Only, opts.From, opts.Force = flags.experiments, flags.only, flags.from, flags.force
			g, err := jobGraph(job)
			if err != nil {
				return err
			}
			if flags.dryRun {
				warnEnvSlips(cmd.ErrOrStderr())
				steps, err := pipeline.Plan(g, opts)
				if err != nil {
					return withDownloadHint(job, err)
				}
				if n, first := printPlan(cmd.OutOrStdout(), steps); n > 0 {
					// A pre-flight check must fail when the run would, and
					// with the run's exit code: the error wraps the run's
					// first failure (a run checks every stage's pre-flight
					// before running any).
					if err := pipeline.Preflight(g, opts); err != nil {
						first = err
					}
					return withDownloadHint(job, fmt.Errorf("dry run: %d stage(s) would fail; the first: %w", n, first))
				}
				return nil
			}
			if flags.cpuProfile != "" {
				f, err := os.Create(flags.cpuProfile)
				if err != nil {
					return fmt.Errorf("%w: --cpuprofile: %v", pipeline.ErrUsage, err)
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			if flags.trace != "" {
				f, err := os.Create(flags.trace)
				if err != nil {
					return fmt.Errorf("%w: --trace: %v", pipeline.ErrUsage, err)
				}
				defer f.Close()
				if err := trace.Start(f); err != nil {
					return err
				}
				defer trace.Stop()
			}
			term := pipeline.IsTerminal(os.Stderr)
			opts.Logger = pipeline.NewLogger(os.Stderr, term)
			opts.RunID = cmp.Or(flags.runID, pipeline.NewRunID(time.Now()))
			opts.Command, opts.ExitCode, opts.Retryable = os.Args, exitCode, retryable
			runLog := opts.Logger.With(slog.String("job", job.Name), slog.String("run_id", opts.RunID))
			miss, names := envNearMisses()
			for _, v := range names {
				runLog.Warn("environment variable not read: did you mean another?", slog.String("variable", v), slog.String("did_you_mean", miss[v]))
			}
			logBLAS(runLog, flags.kernel)
			if term {
				opts.Tracker = pipeline.BarTracker(os.Stderr)
			}
			if runHook != nil {
				runHook(&opts)
			}
			sum, err := pipeline.Run(cmd.Context(), g, opts)
			if err != nil {
				return withDownloadHint(job, err)
			}
			// The visual report, when this run selected it and it is now
			// current (rendered, restored or up to date): after --only or
			// --experiment, a report left from an earlier run may be stale.
			st := sum.Stages
			if !slices.Contains(slices.Concat(st.Run, st.Restored, st.Skipped), "report") {
				return nil
			}
			if page, err := filepath.Abs(filepath.Join(opts.RunDir, "report", "index.html")); err == nil {
				if _, err := os.Stat(page); err == nil {
					fmt.Fprintln(cmd.OutOrStdout(), "report:", page)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	flags.register(cmd, g)
	f.StringArrayVar(&flags.experiments, "experiment", nil, "run only this experiment (repeatable)")
	f.StringVar(&flags.only, "only", "", "run only this stage (all its models or shards: train), or one node of it (train.lmt)")
	f.StringVar(&flags.from, "from", "", "run this stage (or node, e.g. train.lmt) and everything downstream of it")
	f.BoolVar(&flags.force, "force", false, "rerun the selected stages even when up to date")
	f.BoolVar(&flags.dryRun, "dry-run", false, "print what would run and why; touch nothing")
	f.StringVar(&flags.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	f.StringVar(&flags.trace, "trace", "", "write a Go execution trace of the run to this file (go tool trace; cmd/traceshare reads its serial share)")
	return cmd
}

// checkProfiles refuses --cpuprofile and --trace where they cannot give
// what they promise: both at one path (the two writers interleave into a
// file that is neither), or with --dry-run, which runs nothing to profile.
func (f *runFlags) checkProfiles() error {
	if f.dryRun {
		for _, p := range []struct{ flag, v string }{{"--cpuprofile", f.cpuProfile}, {"--trace", f.trace}} {
			if p.v != "" {
				return fmt.Errorf("%w: %s with --dry-run: a dry run runs nothing to profile or trace", pipeline.ErrUsage, p.flag)
			}
		}
	}
	if f.cpuProfile == "" || f.trace == "" {
		return nil
	}
	a, errA := filepath.Abs(f.cpuProfile)
	b, errB := filepath.Abs(f.trace)
	same := errA == nil && errB == nil && a == b
	if fa, err := os.Stat(f.cpuProfile); err == nil {
		if fb, err := os.Stat(f.trace); err == nil && os.SameFile(fa, fb) {
			same = true
		}
	}
	if same {
		return fmt.Errorf("%w: --cpuprofile and --trace name one file, %s: give each its own", pipeline.ErrUsage, f.trace)
	}
	return nil
}

// printPlan prints the selected steps and returns how many would fail and
// why the first of them would.
func printPlan(w io.Writer, steps []pipeline.Step) (fails int, first error) {
	width := 0
	for _, s := range steps {
		width = max(width, len(s.ID))
	}
	for _, s := range steps {
		if !s.Selected {
			continue
		}
		verb, why := "skip", s.Why
		switch {
		case s.Run:
			verb = "run"
		case s.Fail != nil:
			verb, why = "fail", s.Fail.Error()
			if fails++; first == nil {
				first = s.Fail
			}
		case s.Blocked:
			verb, why = "blocked", strings.TrimPrefix(why, "blocked: ")
		}
		fmt.Fprintf(w, "%-*s  %s: %s\n", width, s.ID, verb, why)
	}
	return fails, first
}

// retryable reports whether err's exit code is one a retry may cure (see
// the exit codes in main.go).
func retryable(err error) bool {
	switch exitCode(err) {
	case exitFailure, exitLocked, exitInputMissing, exitInterrupted:
		return true
	}
	return false
}

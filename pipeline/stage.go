package pipeline

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"monomer/job"
)

// Stage is one step of an experiment's pipeline, or of the whole job.
//
// Run reads the outputs of the stages named by Deps from env.InDir, and the
// raw files named by Key, and writes every table it produces into env.OutDir,
// which is an empty temporary directory. It must not write anywhere else
// (but for env.FailurePath, below) and must not log: it returns counts in
// Result and reports progress through env.Track. A nil error means every
// output was written completely; the runner then hashes the outputs, writes
// the manifest and renames env.OutDir into place. On error, nothing of
// env.OutDir becomes visible; a stage that fails on bad input may first leave
// the evidence (e.g. its rejects table) at env.FailurePath, beside the stage
// directory, and name it in the error.
//
// Run must be deterministic: the same inputs, key and seed (env.RNG) give
// byte-identical files, whatever GOMAXPROCS is. Run may create
// subdirectories of env.OutDir; it must not create manifest.json, which the
// runner writes. Run should return ctx.Err() soon after ctx is cancelled.
//
// Job-level stages (the job list of Run, e.g. report) implement the same
// interface: Key is called with a nil exp (a JobKeyer's JobKey instead,
// when the stage reads the job's settings), Run gets env.Exp == nil, their
// directory is <run directory>/<name>, and they read experiments' outputs
// through env.StageDir.
//
// Env serves Run the directories of its declared inputs only: InDir and
// StageDir fail, wrapping ErrUndeclaredInput, for a stage that Deps does
// not name, so a dependency cannot be used without being declared (and
// hashed into the key).
type Stage interface {
	// Name is the stage's name on the command line and in the run directory.
	Name() string
	// Deps are the upstream stages whose outputs Run reads. For an
	// experiment stage: stages of the same experiment. For a job-level
	// stage: an experiment stage's name means that stage of every experiment
	// of the job; a job-level stage's name means that stage.
	Deps() []string
	// Key returns the normalised parameters Run reads (hashed into the cache
	// key, JSON-encodable) and the raw input files it reads (their content is
	// hashed too). Upstream outputs need not be listed: their hashes, from
	// the upstream manifests, are part of the key already.
	Key(exp *job.Resolved) (params any, files []string)
	// Run computes the stage; see the type's comment.
	Run(ctx context.Context, env *Env) (*Result, error)
}

// Result is what a finished stage reports: rows per output table and
// stage-specific counters. Both go into the manifest and the end-of-stage log
// line; neither may hold wall-clock times.
type Result struct {
	Rows  map[string]int64 // table name (file stem) -> rows
	Stats map[string]any   // e.g. "dropped_no_image": 12
	// Warnings are what an operator should see although the stage
	// succeeded (a degenerate fit, a fallback): the runner logs each as a
	// WARN line naming the experiment and stage, and keeps them in the
	// manifest.
	Warnings []Warning
}

// Warning is one Result warning: a message and the attributes that place
// it (e.g. model and lambda), logged in key order.
type Warning struct {
	Msg   string         `json:"msg"`
	Attrs map[string]any `json:"attrs,omitempty"`
}

// Env is what the runner hands a stage.
type Env struct {
	Job *job.Job
	Exp *job.Resolved
	// OutDir is the temporary directory Run writes its outputs into.
	OutDir string
	// Stage is the running node's name: the stage's, ShardName's for a
	// shard of a Sharded stage, PartName's for a part of a Parted one.
	Stage string
	// Part is the part's name for a node of a Parted stage (see Parted),
	// else "".
	Part string
	// Shard and Shards: the node is shard Shard of Shards (see Sharded);
	// both 0 for a stage that is not sharded.
	Shard, Shards int
	// Tracker reports progress; nil means none.
	Tracker func(label string, total int64) Tracker

	// runDir is the run directory's root; inputs holds the IDs of the
	// nodes Run may read (the node's Deps).
	runDir string
	inputs map[string]bool
}

// ErrUndeclaredInput is wrapped by the error of Env.InDir and Env.StageDir
// for a stage the running stage does not declare in Deps.
var ErrUndeclaredInput = errors.New("pipeline: undeclared input")

// InDir is the final directory of an upstream node of the same experiment
// (of the job, for a job-level stage): a stage Deps names, or a shard
// (ShardName) or part (PartName) of one. Any other stage is an error
// wrapping ErrUndeclaredInput.
func (e *Env) InDir(stage string) (string, error) {
	if e.Exp == nil {
		return e.StageDir("", stage)
	}
	return e.StageDir(e.Exp.Name, stage)
}

// StageDir is the final directory of node stage of experiment; experiment
// "" names a job-level stage. Job-level stages read every experiment's
// outputs this way: for i := range env.Job.Experiments { env.StageDir(
// env.Job.Experiments[i].Name, "evaluate") }. As for InDir, the node must
// be one the running stage depends on.
func (e *Env) StageDir(experiment, stage string) (string, error) {
	id := stage
	if experiment != "" {
		id = experiment + "/" + stage
	}
	if !e.inputs[id] {
		self := e.Stage
		if e.Exp != nil {
			self = e.Exp.Name + "/" + self
		}
		return "", fmt.Errorf("%w: %s reads %s, which is not among its stage's Deps", ErrUndeclaredInput, self, id)
	}
	return filepath.Join(e.runDir, experiment, stage), nil
}

// FailurePath is where a failing stage may leave a diagnostic file name
// (DIR/<exp>/<stage>.failed.<name>): outside the stage directory, so it
// survives the failure, and never an input of any stage.
func (e *Env) FailurePath(name string) string {
	return filepath.Join(filepath.Dir(e.OutDir), e.Stage+".failed."+name)
}

// RNG returns a generator seeded from the job seed, the experiment, the stage
// and purpose, so streams are independent and stable when others change.
// Job-level stages get the job's seed and an empty experiment name. A part
// of a Parted stage draws from its stage's streams (the stage's name, not
// the node's): its purposes must tell the parts apart, and a part then
// draws what it drew when all parts ran in one node.
func (e *Env) RNG(purpose string) *rand.Rand {
	stage := e.Stage
	if e.Part != "" {
		stage = strings.TrimSuffix(stage, "."+e.Part)
	}
	name, seed := "", uint64(1)
	if e.Exp != nil {
		name, seed = e.Exp.Name, e.Exp.Seed
	} else if e.Job != nil && e.Job.Seed != 0 {
		seed = e.Job.Seed
	}
	h := fnv.New64a()
	h.Write([]byte(name + "\x00" + stage + "\x00" + purpose))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// Track starts reporting progress of a step of total units (0 if unknown).
func (e *Env) Track(label string, total int64) Tracker {
	if e.Tracker == nil {
		return nopTracker{}
	}
	return e.Tracker(label, total)
}

// Versioned is implemented by a stage that declares the version of the code
// whose behaviour decides its outputs (like Dagster's code_version). The
// version goes into the cache key in place of the executable's hash, so a
// rebuild that does not change the stage's behaviour reruns nothing.
//
// The rule: bump the version in the same commit as any change that can
// change the stage's outputs for the same inputs (a new column, another
// rounding, another order, a dependency upgrade that writes other bytes);
// a refactoring that writes the same bytes keeps it. The guard test
// (stages TestStageVersions) fails when outputs changed under an unchanged
// version. Versions are compared as strings; use semantic versions
// ("1.2.0") without spaces.
type Versioned interface {
	Version() string
}

// GoDependent is implemented by a versioned stage whose outputs depend on
// the Go toolchain: floating-point results of package math or of the
// fused multiply-adds the compiler emits on some GOARCHes, or the
// algorithms of math/rand/v2, which carry no stability promise. When
// GoDependent returns true, the Go version and GOARCH join its code
// version, so a new toolchain reruns it. Stages that only parse, count and
// sort leave it out and survive toolchain upgrades.
type GoDependent interface {
	GoDependent() bool
}

// NumericEnv is implemented by a versioned stage whose outputs depend on
// something of the machine or the build that neither its version nor the
// toolchain captures, such as the BLAS implementation and CPU kernel that
// computes its matrix products. The string (e.g. "openblas 0.3.21
// Haswell"; "" when nothing applies) joins the code version, so outputs of
// one kernel are never reused by a process running another, and the guard
// test keeps golden outputs per string.
type NumericEnv interface {
	NumericEnv() string
}

// Preflighter is implemented by a stage that can tell from the resolved
// settings alone that it would fail for want of a resource, e.g. train's
// memory. Run calls Preflight on every selected stage before it takes a lock
// or runs anything, and fails at once with the error (which should wrap
// ErrConfig: the job asks for more than the machine has); Plan reports it
// as the stage's failure. Preflight must not read data files.
type Preflighter interface {
	Preflight(exp *job.Resolved) error
}

// PartPreflighter is Preflighter for a Parted stage: each selected part
// node is checked alone, so a part that fits is not refused for the sake
// of another that does not. A Parted stage's Preflight is not called.
type PartPreflighter interface {
	PreflightPart(exp *job.Resolved, part string) error
}

// Publisher is implemented by a job-level stage some of whose outputs also
// appear at the run directory's root (report publishes metrics.parquet as
// RunDir/metrics.parquet). The runner hard-links (or copies) each named
// file from the stage's final directory to RunDir/<name> through a
// temporary name and a rename, so the root file is never partial.
type Publisher interface {
	Publish() []string
}

// Tracker receives progress; it never influences outputs. Add may be called
// from several goroutines.
type Tracker interface {
	Add(n int64)
	Done()
}

// Describe sets the text shown beside t's progress bar (the label and,
// e.g., the current validation error) when t draws one.
func Describe(t Tracker, text string) {
	if d, ok := t.(interface{ Describe(string) }); ok {
		d.Describe(text)
	}
}

type nopTracker struct{}

func (nopTracker) Add(int64) {}
func (nopTracker) Done()     {}

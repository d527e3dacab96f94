package pipeline

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"monomer/pipeline/cache"
)

// Stage is the work of one node of the DAG (see Node): one stage of one
// experiment, one shard or part of it, or one job-level stage. The layer
// above the runner (package stages) builds it from the stage's typed
// parameters, so that the value Key returns is the very value Run computes
// with: nothing Run reads can be missing from the key.
//
// Key returns the node's parameters (hashed into the cache key as
// normalised JSON) and the raw files Run reads (their content is hashed,
// not their paths, so moved data reruns nothing). Upstream outputs need not
// be listed: their hashes, from the upstream manifests, are part of the key
// already. Key must return the same value each time it is called.
//
// Run reads the outputs of the node's Deps from env.InDir (env.StageDir for
// a job-level stage), and the raw files named by Key, and writes every
// table it produces into env.OutDir, which is an empty temporary directory.
// It must not write anywhere else (but for env.FailurePath, below) and must
// not log: it returns counts in Result and reports progress through
// env.Track. A nil error means every output was written completely; the
// runner then hashes the outputs, writes the manifest and renames
// env.OutDir into place. On error, nothing of env.OutDir becomes visible; a
// stage that fails on bad input may first leave the evidence (e.g. its
// rejects table) at env.FailurePath, beside the stage directory, and name it
// in the error.
//
// Run must be deterministic: the same inputs, key and seed (env.RNG) give
// byte-identical files, whatever GOMAXPROCS is. Run may create
// subdirectories of env.OutDir; it must not create manifest.json, which the
// runner writes. Run should return ctx.Err() soon after ctx is cancelled.
//
// Env serves Run the directories of its declared inputs only: InDir and
// StageDir fail, wrapping ErrUndeclaredInput, for a node that Deps does
// not name, so a dependency cannot be used without being declared (and
// hashed into the key).
type Stage interface {
	Key() (params any, files []string)
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
	// SHA256 holds, for output files (path relative to OutDir, with
	// slashes) that Run hashed as it wrote them, the hex sha256 of their
	// bytes: the runner fsyncs such a file but does not read it again to
	// hash it. The digest must be of the file as it is when Run returns.
	SHA256 map[string]string
}

// Warning is one Result warning: a message and the attributes that place
// it (e.g. model and lambda), logged in key order. The manifest keeps them.
type Warning = cache.Warning

// Env is what the runner hands a stage. It holds nothing of the job's
// settings: those reach Run only through its keyed parameters (Stage).
type Env struct {
	// Experiment is the node's experiment, "" for a job-level stage; Seed
	// is the node's seed (Node.Seed). Both are part of the key.
	Experiment string
	Seed       uint64
	// OutDir is the temporary directory Run writes its outputs into.
	OutDir string
	// Stage is the running node's name: the stage's, ShardName's for a
	// shard of a sharded stage, PartName's for a part of a parted one.
	Stage string
	// Part is the part's name for a node of a parted stage (see
	// Node.Part), else "".
	Part string
	// Replica is the node's Replica: "s2" for a node run under a job's
	// second seed, else "".
	Replica string
	// Shard and Shards: the node is shard Shard of Shards (see
	// Node.Shards); both 0 for a stage that is not sharded.
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
//
// A replica's node (Node.Replica) names its upstream as a node of the
// first replica would ("split", "train.lmt"): it is served that node's
// replica ("split.s2") when it depends on one.
func (e *Env) InDir(stage string) (string, error) {
	if r := stage + "." + e.Replica; e.Replica != "" && e.inputs[e.Experiment+"/"+r] {
		stage = r
	}
	return e.StageDir(e.Experiment, stage)
}

// StageDir is the final directory of node stage of experiment; experiment
// "" names a job-level stage. Job-level stages read every experiment's
// outputs this way, naming each experiment (which their parameters list):
// env.StageDir("men-image", "evaluate"). As for InDir, the node must be
// one the running stage depends on.
func (e *Env) StageDir(experiment, stage string) (string, error) {
	id := stage
	if experiment != "" {
		id = experiment + "/" + stage
	}
	if !e.inputs[id] {
		self := e.Stage
		if e.Experiment != "" {
			self = e.Experiment + "/" + self
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

// RNG returns a generator seeded from the node's seed (Env.Seed; 0 means
// 1), the experiment, the stage and purpose, so streams are independent and
// stable when others change. Job-level stages have an empty experiment
// name. A part of a parted stage draws from its stage's streams (the stage's name, not
// the node's): its purposes must tell the parts apart, and a part then
// draws what it drew when all parts ran in one node. A replica (Replica)
// draws as its stage's node does under the replica's seed, so that
// train.lmt.s2 of a job with seeds [1, 2] is train.lmt of seed 2.
func (e *Env) RNG(purpose string) *rand.Rand {
	stage := e.Stage
	if e.Replica != "" {
		stage = strings.TrimSuffix(stage, "."+e.Replica)
	}
	if e.Part != "" {
		stage = strings.TrimSuffix(stage, "."+e.Part)
	}
	return StageRNG(e.Seed, e.Experiment, stage, purpose)
}

// StageRNG is the generator Env.RNG gives a node of stage of experiment
// ("" for a job-level stage) seeded seed (0 means 1) for purpose: for a
// stage split off another, which draws what the other drew so that its
// outputs stay as they were (report-section draws the job-level report's
// streams).
func StageRNG(seed uint64, experiment, stage, purpose string) *rand.Rand {
	if seed == 0 {
		seed = 1
	}
	h := fnv.New64a()
	h.Write([]byte(experiment + "\x00" + stage + "\x00" + purpose))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// Track starts reporting progress of a step of total units (0 if unknown).
func (e *Env) Track(label string, total int64) Tracker {
	if e.Tracker == nil {
		return nopTracker{}
	}
	return e.Tracker(label, total)
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

// Package pipeline runs stages: it owns the run directory, manifests, cache
// keys, locking and logs. Stages themselves live in package stages and only
// read inputs from and write outputs to the directories the runner gives them.
package pipeline

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"path/filepath"
)

// Stage is one step of an experiment's pipeline.
//
// Run reads the outputs of the stages named by Deps from env.InDir, and the
// raw files named by Key, and writes every table it produces into env.OutDir,
// which is an empty temporary directory. It must not write anywhere else and
// must not log: it returns counts in Result and reports progress through
// env.Track. A nil error means every output was written completely; the runner
// then hashes the outputs, writes the manifest and renames env.OutDir into
// place. On error, nothing of env.OutDir becomes visible.
//
// Run must be deterministic: the same inputs, key and seed (env.RNG) give
// byte-identical files, whatever GOMAXPROCS is.
type Stage interface {
	// Name is the stage's name on the command line and in the run directory.
	Name() string
	// Deps are the upstream stages, of the same experiment, whose outputs
	// Run reads.
	Deps() []string
	// Key returns the normalised parameters Run reads (hashed into the cache
	// key, JSON-encodable) and the raw input files it reads (their content is
	// hashed too).
	Key(exp *Resolved) (params any, files []string)
	// Run computes the stage; see the type's comment.
	Run(ctx context.Context, env *Env) (*Result, error)
}

// Result is what a finished stage reports: rows per output table and
// stage-specific counters. Both go into the manifest and the end-of-stage log
// line; neither may hold wall-clock times.
type Result struct {
	Rows  map[string]int64 // table name (file stem) -> rows
	Stats map[string]any   // e.g. "dropped_no_image": 12
}

// Env is what the runner hands a stage.
type Env struct {
	Job *Job
	Exp *Resolved
	// RunDir is the run directory's root.
	RunDir string
	// OutDir is the temporary directory Run writes its outputs into.
	OutDir string
	// Stage is the running stage's name.
	Stage string
	// Tracker reports progress; nil means none.
	Tracker func(label string, total int64) Tracker
}

// InDir is the final directory of an upstream stage of the same experiment.
func (e *Env) InDir(stage string) string {
	return filepath.Join(e.RunDir, e.Exp.Name, stage)
}

// RNG returns a generator seeded from the job seed, the experiment, the stage
// and purpose, so streams are independent and stable when others change.
func (e *Env) RNG(purpose string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(e.Exp.Name + "\x00" + e.Stage + "\x00" + purpose))
	return rand.New(rand.NewPCG(e.Exp.Seed, h.Sum64()))
}

// Track starts reporting progress of a step of total units (0 if unknown).
func (e *Env) Track(label string, total int64) Tracker {
	if e.Tracker == nil {
		return nopTracker{}
	}
	return e.Tracker(label, total)
}

// Tracker receives progress; it never influences outputs.
type Tracker interface {
	Add(n int64)
	Done()
}

type nopTracker struct{}

func (nopTracker) Add(int64) {}
func (nopTracker) Done()     {}

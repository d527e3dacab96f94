package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"monomer/pipeline/cache"
)

// Step is one stage as Plan sees it, for --dry-run and status.
type Step struct {
	ID         string `json:"id"`
	Experiment string `json:"experiment,omitempty"`
	Stage      string `json:"stage"`
	// State is the stage's standing against its manifest and the files on
	// disk now; Reasons say what changed when it is stale.
	State   State    `json:"state"`
	Reasons []string `json:"reasons,omitempty"`
	// Note qualifies an up-to-date stage whose upstream is not: "upstream
	// a/train is stale, so a run may redo it".
	Note string `json:"note,omitempty"`
	// Restored: the stage's outputs were restored from the store, not
	// computed (its manifest says so), or, for a stage not up to date, the
	// store holds its outputs and a run would restore them.
	Restored bool `json:"restored,omitempty"`
	// Selected: the options include this stage.
	Selected bool `json:"selected"`
	// Run: a run with the same options would execute the stage now; Why
	// says why, or why not ("up to date", "not selected", "fails: ...").
	Run bool   `json:"run"`
	Why string `json:"why"`
	// Fail is why a run with the same options would fail at this stage
	// (a missing upstream output, an input file, a pre-flight check), or
	// nil. Why says the same in words, prefixed "fails: ".
	Fail error `json:"-"`
	// Blocked: an upstream stage would fail or is blocked, so a run would
	// not reach this one (it is not a failure of its own). Why names the
	// upstream.
	Blocked bool `json:"blocked,omitempty"`
	// roots are the failing stages a blocked one waits on, in plan order.
	roots []string
}

// Plan says, without writing anything or taking locks, what Run with the
// same arguments would do. Stages downstream of one that runs are marked to
// run, although Run skips them if the upstream's outputs come out unchanged.
func Plan(g *Graph, opts Options) ([]Step, error) {
	sel, err := g.selection(&opts)
	if err != nil {
		return nil, err
	}
	if err := checkRunDir(opts.RunDir); err != nil {
		return nil, err
	}
	hashes := cache.OpenHashCache(opts.hashCachePath())
	hashes.ReadOnly()
	r := &runner{g: g, opts: &opts, hashes: hashes, store: opts.lookupStore()}
	var steps []Step
	byNode := map[*Node]Step{}
	for _, n := range g.Nodes {
		st := Step{ID: n.ID, Experiment: n.Experiment, Stage: n.Stage, Selected: sel[n]}
		ev, err := r.evaluate(n)
		var mu *missingUpstream
		switch {
		case errors.As(err, &mu):
			st.State = Missing
			if _, serr := os.Stat(filepath.Join(n.Dir(opts.RunDir), cache.ManifestName)); serr == nil {
				st.State = Stale
				st.Reasons = []string{"upstream " + mu.dep.ID + " has no outputs"}
			}
		case err != nil:
			st.State = Missing
			if _, serr := os.Stat(filepath.Join(n.Dir(opts.RunDir), cache.ManifestName)); serr == nil {
				st.State = Stale
			}
			st.Reasons = []string{err.Error()}
		default:
			st.State, st.Reasons = ev.state, ev.reasons
			if st.State == UpToDate {
				st.Restored = ev.manifest.Stats["restored_from_store"] == true
			} else {
				st.Restored = r.store.Has(ev.inputs.Key())
			}
		}
		var runs, notCurrent, blockers []string
		for _, d := range n.Deps {
			ds := byNode[d]
			if ds.Run {
				runs = append(runs, d.ID)
			}
			switch {
			case !ds.Selected:
			case ds.Fail != nil:
				blockers = append(blockers, d.ID)
			case ds.Blocked:
				blockers = append(blockers, ds.roots...)
			}
			if ds.State != UpToDate {
				notCurrent = append(notCurrent, d.ID+" is "+string(ds.State))
			}
		}
		if st.State == UpToDate && len(notCurrent) > 0 {
			// Said so, not "up to date (upstream ... not up to date)",
			// which read as a contradiction.
			st.Note = "upstream " + strings.Join(notCurrent, ", ") + ", so a run may redo it"
		}
		switch {
		case !st.Selected:
			st.Why = "not selected"
		case len(blockers) > 0:
			// As Run does: a failed stage blocks everything downstream,
			// whose own standing is then beside the point.
			slices.Sort(blockers)
			st.roots = slices.Compact(blockers)
			st.Blocked, st.Why = true, "blocked: "+strings.Join(st.roots, ", ")+" would fail"
		case mu != nil && len(runs) == 0:
			st.fail(mu)
		case err != nil && mu == nil:
			st.fail(err)
		case opts.Force:
			st.Run, st.Why = true, "forced"
		case st.State != UpToDate:
			st.Run, st.Why = true, describe(st.State, st.Reasons)
			if st.Restored {
				st.Why += " (restored from the store)"
			}
		case len(runs) > 0:
			verb := "runs"
			if len(runs) > 1 {
				verb = "run"
			}
			st.Run, st.Why = true, fmt.Sprintf("upstream %s %s first (then skipped if its outputs come out unchanged)", strings.Join(runs, ", "), verb)
		default:
			st.Why = "up to date"
		}
		if st.Run {
			if err := preflight(n, true); err != nil {
				st.Run = false
				st.fail(err)
			}
		}
		steps = append(steps, st)
		byNode[n] = st
	}
	return steps, nil
}

// checkRunDir refuses, as Run would when it creates it, a run directory
// that is a file or lies below one: a dry run must exit with the run's
// code. A directory that does not exist yet is fine; Run creates it.
func checkRunDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return runDirError(dir, &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR})
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return runDirError(dir, err)
	}
	return nil
}

func (st *Step) fail(err error) {
	st.Fail, st.Why = err, "fails: "+err.Error()
}

func describe(s State, reasons []string) string {
	if len(reasons) == 0 {
		return string(s)
	}
	return string(s) + ": " + strings.Join(reasons, "; ")
}

package cache

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// A declared code version is only as good as the discipline of bumping it.
// The guard is a test that runs every stage on a small fixed input and
// compares each stage's outputs with a golden file of StageRecords: outputs
// that changed while the version and the inputs did not mean a forgotten
// bump. pipeline.RecordStages, CheckStages and UpdateRecords are its parts.

// StageRecord is one stage's line in the golden file: its version, the
// numeric environment its outputs were computed in, what it read and what
// it wrote, over every experiment of the job.
type StageRecord struct {
	Stage   string `json:"stage"`
	Version string `json:"version"`
	// Env is, in a record of a run (RecordStages), the stage's NumericEnv
	// string: the build and BLAS kernel its numbers came from.
	Env string `json:"env,omitempty"`
	// Envs is, in a golden record of a NumericEnv stage, every environment
	// that wrote these outputs: one record when all recorded builds and
	// kernels agree bit for bit, one per group of environments where they
	// differ.
	Envs []string `json:"envs,omitempty"`
	// Inputs is the sha256 of everything the stage's keys hold but the
	// code: parameters, seed, raw-file content and upstream output hashes.
	Inputs string `json:"inputs"`
	// Outputs are "<experiment>/<file>" (or "<file>" for a job-level stage)
	// -> sha256.
	Outputs map[string]string `json:"outputs"`
	// Inferred lists the Envs of a golden record that were not run when it
	// was recorded (KeepRecords): their outputs equalled these at the
	// record before, which every run in them still checks.
	Inferred []string `json:"inferred,omitempty"`
	// Stale marks a golden record kept (KeepRecords) from an older version
	// or other inputs for an environment the recording CPU could not run:
	// true of the code it was recorded for, not compared with today's.
	Stale bool `json:"stale,omitempty"`
}

// CheckStages compares the records of a run now with the golden ones and
// returns the problems, each naming a stage and saying first that the
// change may be a bug and then how to record a deliberate one, and notes
// on stages it could not judge. A stage whose version and inputs are
// unchanged must have written the same outputs. A stage whose inputs
// changed because an upstream stage changed is only noted: the upstream
// stage is the one at fault. A NumericEnv stage is compared with the
// golden record of its environment; in an environment never recorded it is
// compared with the outputs every recorded environment agreed on, and only
// noted when they did not agree. deps gives each stage's Deps.
func CheckStages(golden, now []StageRecord, deps func(stage string) []string) (problems, notes []string) {
	changed := map[string]string{} // stage -> why its outputs cannot be compared
	upstreamChanged := func(stage string) string {
		for _, d := range deps(stage) {
			if _, ok := changed[d]; ok {
				return d
			}
		}
		return ""
	}
	const record = "if the change is deliberate, bump the stage's version (stages/versions.go) and re-record every build with `make golden`"
	seen := map[string]bool{}
	for _, r := range now {
		seen[r.Stage] = true
		var mine []*StageRecord // the stage's golden records
		var g *StageRecord      // the one to compare with
		for i := range golden {
			if golden[i].Stage == r.Stage {
				mine = append(mine, &golden[i])
				if r.Env == "" || slices.Contains(golden[i].Envs, r.Env) {
					g = &golden[i]
				}
			}
		}
		unrecordedEnv := false
		if g == nil && len(mine) == 1 {
			g, unrecordedEnv = mine[0], true // every recorded build agreed
		}
		switch {
		case len(mine) == 0:
			problems = append(problems, fmt.Sprintf("stage %s has no golden record: record it with `make golden`", r.Stage))
			changed[r.Stage] = "new"
		case g == nil:
			notes = append(notes, fmt.Sprintf("stage %s: golden outputs differ between the recorded environments and none is %q: not compared (`make golden` records it)",
				r.Stage, r.Env))
			changed[r.Stage] = "other environment"
		case g.Stale:
			notes = append(notes, fmt.Sprintf("stage %s: the golden record of %q is stale (version %s, kept by `make golden` on a CPU that cannot run it): not compared; re-record with `make golden` on a CPU that runs it",
				r.Stage, r.Env, g.Version))
		case g.Version != r.Version:
			problems = append(problems, fmt.Sprintf("stage %s: version %s, the golden file has %s: record its outputs with `make golden`",
				r.Stage, r.Version, g.Version))
			changed[r.Stage] = "new version"
		case g.Inputs != r.Inputs:
			if up := upstreamChanged(r.Stage); up != "" {
				notes = append(notes, fmt.Sprintf("stage %s: not compared, its input from %s changed", r.Stage, up))
			} else {
				problems = append(problems, fmt.Sprintf("stage %s: its parameters or raw inputs changed (the test's job or data): record with `make golden`",
					r.Stage))
			}
			changed[r.Stage] = "inputs"
		default:
			diff := ChangedNames(g.Outputs, r.Outputs)
			switch {
			case diff != "" && unrecordedEnv:
				problems = append(problems, fmt.Sprintf("stage %s: outputs (%s) differ under %q from those every recorded environment (%s) wrote: "+
					"a build or kernel that changes results may be a bug; if this environment is new and rounds differently, record it with `make golden`",
					r.Stage, diff, r.Env, strings.Join(g.Envs, ", ")))
				changed[r.Stage] = "outputs"
			case diff != "":
				problems = append(problems, fmt.Sprintf("stage %s: outputs changed under unchanged version %s (%s): this may be a BUG (the code now computes other results); %s",
					r.Stage, r.Version, diff, record))
				changed[r.Stage] = "outputs"
			}
		}
	}
	var gone []string
	for _, g := range golden {
		if !seen[g.Stage] && !slices.Contains(gone, g.Stage) {
			gone = append(gone, g.Stage)
			problems = append(problems, fmt.Sprintf("stage %s is in the golden file but not in the DAG: remove it with `make golden`", g.Stage))
		}
	}
	return problems, notes
}

// UpdateRecords returns the golden file's new content from its old one and
// the records of a run now, made in one environment. A stage's golden
// records of another version are dropped. A NumericEnv stage keeps its
// records of the other environments (their version unchanged), and this
// environment joins the record with the same inputs and outputs, or gets
// one of its own; so after recording every build, a stage that every build
// computes to the same bits has one record listing them all. Records come
// in the order of now, then by their first environment.
func UpdateRecords(golden, now []StageRecord) []StageRecord {
	var out []StageRecord
	for _, r := range now {
		if r.Env == "" {
			r.Envs = nil
			out = append(out, r)
			continue
		}
		var mine []StageRecord
		for _, g := range golden {
			if g.Stage != r.Stage || g.Version != r.Version {
				continue
			}
			g.Envs = slices.DeleteFunc(slices.Clone(g.Envs), func(e string) bool { return e == r.Env })
			g.Inferred = slices.DeleteFunc(slices.Clone(g.Inferred), func(e string) bool { return e == r.Env })
			if len(g.Envs) > 0 {
				g.Outputs = maps.Clone(g.Outputs)
				mine = append(mine, g)
			}
		}
		joined := false
		for i, g := range mine {
			if g.Inputs == r.Inputs && ChangedNames(g.Outputs, r.Outputs) == "" {
				mine[i].Envs = append(mine[i].Envs, r.Env)
				slices.Sort(mine[i].Envs)
				joined = true
			}
		}
		if !joined {
			mine = append(mine, StageRecord{Stage: r.Stage, Version: r.Version, Envs: []string{r.Env}, Inputs: r.Inputs, Outputs: r.Outputs})
		}
		sort.SliceStable(mine, func(i, j int) bool { return mine[i].Envs[0] < mine[j].Envs[0] })
		out = append(out, mine...)
	}
	return out
}

// KeepRecords returns golden, just recorded on a CPU that cannot run some
// environments, with those environments' records taken from old, the
// golden file before, and a note for each. kept says which environments
// are such (an AVX-512 kernel on a CPU without AVX-512). An environment
// that shared its record in old with one recorded now joins that one's
// new record as Inferred: its bits equalled theirs (the invariant
// TestSameBitsEveryBuild holds every stage to but the report), and every
// run in it still checks that. One that had a record of its own keeps it,
// Stale when its version or inputs are not today's. Either way it must be
// re-recorded on a CPU that runs it before its stage's version changes
// again, or the guard has nothing true to compare it with.
func KeepRecords(golden, old []StageRecord, kept func(env string) bool) ([]StageRecord, []string) {
	out := slices.Clone(golden)
	var notes []string
	recorded := func(stage, env string) bool {
		for _, g := range golden {
			if g.Stage == stage && slices.Contains(g.Envs, env) {
				return true
			}
		}
		return false
	}
	for _, o := range old {
		for _, e := range o.Envs {
			if !kept(e) || recorded(o.Stage, e) {
				continue
			}
			joined := false
			for i := range out {
				n := &out[i]
				if n.Stage != o.Stage || n.Stale || !slices.ContainsFunc(o.Envs, func(f string) bool { return !kept(f) && slices.Contains(n.Envs, f) }) {
					continue
				}
				n.Envs = append(slices.Clone(n.Envs), e)
				slices.Sort(n.Envs)
				n.Inferred = append(slices.Clone(n.Inferred), e)
				slices.Sort(n.Inferred)
				notes = append(notes, fmt.Sprintf("stage %s: %q not run here; it joins the record of %s (their bits agreed at the last record)",
					o.Stage, e, strings.Join(n.Envs, ", ")))
				joined = true
				break
			}
			if joined {
				continue
			}
			k := o
			k.Envs, k.Inferred = []string{e}, nil
			k.Outputs = maps.Clone(o.Outputs)
			current := false
			for _, g := range golden {
				if g.Stage == o.Stage && g.Version == o.Version && g.Inputs == o.Inputs {
					current = true
				}
			}
			k.Stale = o.Stale || !current
			what := "kept as recorded"
			if k.Stale {
				what = "kept, stale (older version or inputs): not compared until re-recorded"
			}
			notes = append(notes, fmt.Sprintf("stage %s: %q not run here; its record (version %s) %s", o.Stage, e, o.Version, what))
			out = append(out, k)
		}
	}
	// The order UpdateRecords gives: stages as recorded, then by first
	// environment.
	order := map[string]int{}
	for i, g := range golden {
		if _, ok := order[g.Stage]; !ok {
			order[g.Stage] = i
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Stage != out[j].Stage {
			return order[out[i].Stage] < order[out[j].Stage]
		}
		return len(out[i].Envs) > 0 && len(out[j].Envs) > 0 && out[i].Envs[0] < out[j].Envs[0]
	})
	return out, notes
}

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

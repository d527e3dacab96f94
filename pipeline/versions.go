package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"monomer/job"
)

// A declared code version is only as good as the discipline of bumping it.
// The guard is a test that runs every stage on a small fixed input and
// compares each stage's outputs with a golden file of StageRecords: outputs
// that changed while the version and the inputs did not mean a forgotten
// bump. RecordStages, CheckStages and UpdateRecords are its parts.

// StageRecord is one stage's line in the golden file: its version, the
// numeric environment its outputs were computed in, what it read and what
// it wrote, over every experiment of the job.
type StageRecord struct {
	Stage   string `json:"stage"`
	Version string `json:"version"`
	// Env is the stage's NumericEnv string; records are kept per Env, so
	// outputs that depend on the BLAS kernel are compared only with those
	// of the same kernel.
	Env string `json:"env,omitempty"`
	// Inputs is the sha256 of everything the stage's keys hold but the
	// code: parameters, seed, raw-file content and upstream output hashes.
	Inputs string `json:"inputs"`
	// Outputs are "<experiment>/<file>" (or "<file>" for a job-level stage)
	// -> sha256.
	Outputs map[string]string `json:"outputs"`
}

// RecordStages reads the manifests of a finished run of job in runDir and
// returns one record per stage, in DAG order. Every stage must be
// Versioned.
func RecordStages(job *job.Job, expStages, jobStages []Stage, runDir string) ([]StageRecord, error) {
	g, err := NewGraph(job, expStages, jobStages)
	if err != nil {
		return nil, err
	}
	type acc struct {
		rec    StageRecord
		inputs []KeyInputs
	}
	var order []string
	byStage := map[string]*acc{}
	for _, n := range g.Nodes {
		name := n.Stage.Name()
		a := byStage[name]
		if a == nil {
			v, ok := n.Stage.(Versioned)
			if !ok {
				return nil, fmt.Errorf("pipeline: stage %s declares no code version (Versioned)", name)
			}
			a = &acc{rec: StageRecord{Stage: name, Version: v.Version(), Outputs: map[string]string{}}}
			if e, ok := n.Stage.(NumericEnv); ok {
				a.rec.Env = e.NumericEnv()
			}
			byStage[name] = a
			order = append(order, name)
		}
		m, err := ReadManifest(n.Dir(runDir))
		if err != nil {
			return nil, fmt.Errorf("pipeline: %s: %w", n.ID, err)
		}
		in := m.Inputs
		in.Code = ""
		in.Files = slices.Clone(in.Files)
		for i := range in.Files {
			in.Files[i].Path = "" // content decides, not where the test put it
		}
		a.inputs = append(a.inputs, in)
		for _, o := range m.Outputs {
			name := o.Name
			if n.Name != n.Stage.Name() { // a shard or part
				name = n.Name + "/" + name
			}
			if n.Experiment != "" {
				name = n.Experiment + "/" + name
			}
			a.rec.Outputs[name] = o.SHA256
		}
	}
	// In the stages' order (a sharded stage's first node may come late).
	all := append(slices.Clone(g.ExpStages), g.JobStages...)
	sort.SliceStable(order, func(i, j int) bool { return slices.Index(all, order[i]) < slices.Index(all, order[j]) })
	out := make([]StageRecord, 0, len(order))
	for _, name := range order {
		a := byStage[name]
		b, err := json.Marshal(a.inputs)
		if err != nil {
			return nil, fmt.Errorf("pipeline: %w", err)
		}
		sum := sha256.Sum256(b)
		a.rec.Inputs = hex.EncodeToString(sum[:])
		out = append(out, a.rec)
	}
	return out, nil
}

// CheckStages compares the records of a run now with the golden ones and
// returns the problems, each naming a stage and what to do, and notes on
// stages it could not judge. A stage whose version and inputs are unchanged
// must have written the same outputs. A stage whose inputs changed because
// an upstream stage changed is only noted: the upstream stage is the one
// at fault. Records of another numeric environment are not compared.
// stages gives each stage's Deps.
func CheckStages(golden, now []StageRecord, stages []Stage) (problems, notes []string) {
	deps := map[string][]string{}
	for _, s := range stages {
		deps[s.Name()] = s.Deps()
	}
	changed := map[string]string{} // stage -> why its outputs cannot be compared
	upstreamChanged := func(stage string) string {
		for _, d := range deps[stage] {
			if _, ok := changed[d]; ok {
				return d
			}
		}
		return ""
	}
	seen := map[string]bool{}
	for _, r := range now {
		seen[r.Stage] = true
		var g *StageRecord
		var envs []string
		for i := range golden {
			if golden[i].Stage != r.Stage {
				continue
			}
			envs = append(envs, fmt.Sprintf("%q", golden[i].Env))
			if golden[i].Env == r.Env {
				g = &golden[i]
			}
		}
		switch {
		case len(envs) == 0:
			problems = append(problems, fmt.Sprintf("stage %s has no golden record: record it with -update", r.Stage))
			changed[r.Stage] = "new"
		case g == nil:
			notes = append(notes, fmt.Sprintf("stage %s: golden outputs exist for environments %s, not for %q: not compared (-update adds them)",
				r.Stage, strings.Join(envs, ", "), r.Env))
			changed[r.Stage] = "other environment"
		case g.Version != r.Version:
			problems = append(problems, fmt.Sprintf("stage %s: version %s, the golden file has %s: record its outputs with -update",
				r.Stage, r.Version, g.Version))
			changed[r.Stage] = "new version"
		case g.Inputs != r.Inputs:
			if up := upstreamChanged(r.Stage); up != "" {
				notes = append(notes, fmt.Sprintf("stage %s: not compared, its input from %s changed", r.Stage, up))
			} else {
				problems = append(problems, fmt.Sprintf("stage %s: its parameters or raw inputs changed (the test's job or data): record with -update",
					r.Stage))
			}
			changed[r.Stage] = "inputs"
		default:
			if diff := changedNames(g.Outputs, r.Outputs); diff != "" {
				problems = append(problems, fmt.Sprintf("stage %s: outputs changed under unchanged version %s (%s): bump the stage's version, then record with -update",
					r.Stage, r.Version, diff))
				changed[r.Stage] = "outputs"
			}
		}
	}
	var gone []string
	for _, g := range golden {
		if !seen[g.Stage] && !slices.Contains(gone, g.Stage) {
			gone = append(gone, g.Stage)
			problems = append(problems, fmt.Sprintf("stage %s is in the golden file but not in the DAG: remove it with -update", g.Stage))
		}
	}
	return problems, notes
}

// UpdateRecords returns the golden file's new content: the records now,
// plus the golden records of other numeric environments that still hold
// (same stage, version and inputs), ordered as now and then by Env.
func UpdateRecords(golden, now []StageRecord) []StageRecord {
	out := slices.Clone(now)
	for _, g := range golden {
		for _, r := range now {
			if g.Stage == r.Stage && g.Env != r.Env && g.Version == r.Version && g.Inputs == r.Inputs {
				g.Outputs = maps.Clone(g.Outputs)
				out = append(out, g)
				break
			}
		}
	}
	pos := map[string]int{}
	for i, r := range now {
		pos[r.Stage] = i
	}
	sort.SliceStable(out, func(i, j int) bool {
		if pos[out[i].Stage] != pos[out[j].Stage] {
			return pos[out[i].Stage] < pos[out[j].Stage]
		}
		return out[i].Env < out[j].Env
	})
	return out
}

package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"monomer/pipeline/cache"
)

// RecordStages is the run's half of the guard on code versions (see
// cache.CheckStages).
// RecordStages reads the manifests of a finished run of job in runDir and
// returns one record per stage, in DAG order. Every stage must have a
// Version.
func RecordStages(g *Graph, runDir string) ([]cache.StageRecord, error) {
	type acc struct {
		rec    cache.StageRecord
		inputs []cache.KeyInputs
	}
	var order []string
	byStage := map[string]*acc{}
	for _, n := range g.Nodes {
		name := n.Stage
		a := byStage[name]
		if a == nil {
			if n.Code.Version == "" {
				return nil, fmt.Errorf("pipeline: stage %s declares no code version", name)
			}
			a = &acc{rec: cache.StageRecord{Stage: name, Version: n.Code.Version, Env: n.Code.NumericEnv, Outputs: map[string]string{}}}
			byStage[name] = a
			order = append(order, name)
		}
		m, err := cache.ReadManifest(n.Dir(runDir))
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
			if n.Name != n.Stage { // a shard or part
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
	out := make([]cache.StageRecord, 0, len(order))
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

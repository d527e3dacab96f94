package stages

import (
	"context"
	"path/filepath"

	"monomer/graph"
	"monomer/pipeline"
)

// Negatives draws the non-relationships R̄: by default the degree-preserving
// rewiring of the paper (Milo et al. 2003), or uniform pairs. It also writes
// the positives it rewired: the ingest edges whose ends both have features.
type Negatives struct{}

var _ pipeline.Stage = Negatives{}

func (Negatives) Name() string   { return "negatives" }
func (Negatives) Deps() []string { return []string{"ingest", "features"} }

type negativesParams struct {
	Method       string `json:"method"`
	SwapsPerEdge int    `json:"swaps_per_edge"`
}

func (Negatives) Key(e *pipeline.Resolved) (any, []string) {
	return negativesParams{e.Settings.Negatives, e.Settings.SwapsPerEdge}, nil
}

func (Negatives) Run(ctx context.Context, env *pipeline.Env) (*pipeline.Result, error) {
	it, err := readItems(env.InDir("ingest"))
	if err != nil {
		return nil, err
	}
	all, err := readEdges(filepath.Join(env.InDir("ingest"), "edges.parquet"))
	if err != nil {
		return nil, err
	}
	keep, err := readFeatureItems(env.InDir("features"), len(it.asin))
	if err != nil {
		return nil, err
	}
	pos := make([]graph.Edge, 0, len(all))
	for _, e := range all {
		if keep[e.Src] && keep[e.Dst] {
			pos = append(pos, e)
		}
	}
	stats := map[string]any{
		"positives":                    len(pos),
		"positives_dropped_no_feature": len(all) - len(pos),
		"method":                       env.Exp.Settings.Negatives,
	}
	rng := env.RNG("negatives")
	var neg []graph.Edge
	switch env.Exp.Settings.Negatives {
	case "uniform":
		var st graph.UniformStats
		neg, st, err = graph.Uniform(pos, it.sub, rng)
		if err != nil {
			return nil, err
		}
		stats["uniform"] = st
	default:
		tr := env.Track("rewire", int64(env.Exp.Settings.SwapsPerEdge)*int64(len(pos)))
		var done int64
		var st graph.RewireStats
		neg, st, err = graph.Rewire(pos, it.sub, rng, graph.RewireOptions{
			SwapsPerEdge: env.Exp.Settings.SwapsPerEdge,
			Progress: func(d, _ int64) {
				tr.Add(d - done)
				done = d
			},
		})
		tr.Done()
		if err != nil {
			return nil, err
		}
		st.DroppedEdges = nil // counted; listing them would bloat the manifest
		stats["swaps_attempted"] = st.Attempts
		stats["swaps_accepted"] = st.Accepted
		stats["never_switched"] = st.NeverSwitched
		stats["never_switched_fraction"] = st.NeverSwitchedFraction()
		stats["dropped"] = st.Dropped
		stats["rewire"] = st
	}
	np, err := writeEdges(filepath.Join(env.OutDir, "positives.parquet"), it, env.Exp.Graph, pos)
	if err != nil {
		return nil, err
	}
	nn, err := writeEdges(filepath.Join(env.OutDir, "negatives.parquet"), it, "negative", neg)
	if err != nil {
		return nil, err
	}
	stats["negatives"] = nn
	return &pipeline.Result{Rows: map[string]int64{"positives": np, "negatives": nn}, Stats: stats}, nil
}

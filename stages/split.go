package stages

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"

	"monomer/graph"
	"monomer/job"
	"monomer/pipeline"
	"monomer/schema"
)

// Split shuffles R ∪ R̄ with the seed and cuts it 80/10/10, capping the
// training part at train_cap (graph.SplitPairs), or with split: grouped
// deals the two directions of a pair together (graph.SplitPairsGrouped),
// or with split: stable by a hash of the pair's item ids
// (graph.SplitPairsStable), the same split every night.
// Its stats give the share of test positives whose reverse is in training
// (graph.ReverseShare), what a model can answer by memory.
type Split struct{}

var _ ExpStage[splitParams] = Split{}

func (Split) Name() string   { return "split" }
func (Split) Deps() []string { return []string{"ingest", "negatives"} }

type splitParams struct {
	TrainCap int `json:"train_cap"`
	// Protocol is graph.SplitGrouped, graph.SplitStable or "" for the
	// paper's (so the key of the paper's split reads as before).
	Protocol string `json:"split,omitempty"`
}

func (Split) Params(e *job.Resolved) splitParams {
	p := splitParams{TrainCap: e.Settings.TrainCap}
	if s := e.Settings.Split.Get(); s == graph.SplitGrouped || s == graph.SplitStable {
		p.Protocol = s
	}
	return p
}

func (Split) Run(ctx context.Context, env *pipeline.Env, p splitParams) (*pipeline.Result, error) {
	it, err := readItems(ctx, env.InDir)
	if err != nil {
		return nil, err
	}
	pos, err := readEdges(ctx, env.InDir, "negatives", "positives.parquet")
	if err != nil {
		return nil, err
	}
	neg, err := readEdges(ctx, env.InDir, "negatives", "negatives.parquet")
	if err != nil {
		return nil, err
	}
	// Negatives checked the split without a cap; job validation bounds
	// train_cap (graph.MinTrainCap) for half-positive pairs. This is the
	// last guard, for the cap and the pairs as they are.
	if sz := graph.SplitSizes(len(pos), len(neg), p.TrainCap); !sz.Usable() {
		return nil, fmt.Errorf("%w: experiment %s: %d positives and %d negatives under train_cap %d split %v/%v/%v pairs with %v positive: a split without a positive or a negative pair",
			pipeline.ErrBadInput, env.Experiment, len(pos), len(neg), sz.TrainCap, sz.Pairs[0], sz.Pairs[1], sz.Pairs[2], sz.Related)
	}
	var pairs []graph.Pair
	var st graph.SplitStats
	if p.Protocol == graph.SplitGrouped || p.Protocol == graph.SplitStable {
		if p.Protocol == graph.SplitGrouped {
			pairs, st = graph.SplitPairsGrouped(pos, neg, env.RNG("split"), p.TrainCap)
		} else {
			salt := StableSalt(env)
			pairs, st = graph.SplitPairsStable(pos, neg, func(e graph.Edge) uint64 {
				return graph.PairKey(salt, it.asin[e.Src], it.asin[e.Dst])
			}, p.TrainCap)
		}
		// Dealt in groups or by key, the sizes can differ from SplitSizes'.
		if !st.Usable() {
			return nil, fmt.Errorf("%w: experiment %s: split: %s dealt %v/%v/%v pairs with %v positive: a split without a positive or a negative pair",
				pipeline.ErrBadInput, env.Experiment, p.Protocol, st.Pairs[0], st.Pairs[1], st.Pairs[2], st.Related)
		}
	} else {
		pairs, st = graph.SplitPairs(pos, neg, env.RNG("split"), p.TrainCap)
	}
	rev := graph.ReverseInTrain(pairs)
	n := len(pairs)
	x, y, split := make([]string, n), make([]string, n), make([]string, n)
	label := make([]int8, n)
	xi, yi := make([]int32, n), make([]int32, n)
	for i, p := range pairs {
		x[i], y[i], split[i], xi[i], yi[i] = it.asin[p.X], it.asin[p.Y], p.Split.String(), p.X, p.Y
		if p.Label {
			label[i] = 1
		}
	}
	rows, err := schema.Write(filepath.Join(env.OutDir, "pairs.parquet"), schema.PairsCols{X: x, Y: y, Label: label, Split: split, XIdx: xi, YIdx: yi})
	if err != nil {
		return nil, err
	}
	stats := map[string]any{"split": st, "protocol": cmp.Or(p.Protocol, graph.SplitPaper),
		"test_positives": rev.TestPositives, "reverse_in_train": rev.ReverseInTrain}
	if rev.TestPositives > 0 { // JSON has no NaN
		stats["reverse_in_train_share"] = rev.Share
	}
	return &pipeline.Result{Rows: map[string]int64{"pairs": rows}, Stats: stats}, nil
}

// StableSalt is the salt of graph.PairKey and graph.ItemKey for env's
// experiment: drawn from the job's seed and the experiment's name alone
// (the split stage's stream, whichever stage asks; a seed replica's
// own seed), so it is the same every night they are, and another seed
// deals other splits.
func StableSalt(env *pipeline.Env) uint64 {
	return pipeline.StageRNG(env.Seed, env.Experiment, "split", "stable").Uint64()
}

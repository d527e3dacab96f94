package stages

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"monomer/graph"
	"monomer/job"
	"monomer/pipeline"
	"monomer/schema"
)

// Negatives draws the non-relationships R̄: by default the degree-preserving
// rewiring of the paper (Milo et al. 2003), or uniform pairs. It also writes
// the positives it rewired: the ingest edges whose ends both have features.
type Negatives struct{}

var _ ExpStage[negativesParams] = Negatives{}

func (Negatives) Name() string   { return "negatives" }
func (Negatives) Deps() []string { return []string{"ingest", "features"} }

// negativesParams: swaps_per_edge only matters to rewiring (omitted, and
// so left out of the key, with uniform negatives).
// Graph names the positives' graph in positives.parquet.
type negativesParams struct {
	Method       string `json:"method"`
	SwapsPerEdge int    `json:"swaps_per_edge,omitempty"`
	Graph        string `json:"graph"`
	// ColdItems is the share of items held out (graph.PairSettings);
	// omitted when 0, so the key of a job without it is unchanged.
	ColdItems float64 `json:"cold_items,omitempty"`
	// ColdByID draws the held-out items by a hash of their ids
	// (pickColdItemsStable) rather than with the seed's stream: set with
	// cold_items under split: stable, so they stay held out night after
	// night as the pairs stay in their split.
	ColdByID bool `json:"cold_by_id,omitempty"`
}

func (Negatives) Params(e *job.Resolved) negativesParams {
	p := negativesParams{Method: e.Settings.Negatives, Graph: e.Graph, ColdItems: e.Settings.ColdItems.Get()}
	p.ColdByID = p.ColdItems > 0 && e.Settings.Split.Get() == graph.SplitStable
	if p.Method != "uniform" {
		p.SwapsPerEdge = e.Settings.SwapsPerEdge
	}
	return p
}

func (Negatives) Run(ctx context.Context, env *pipeline.Env, p negativesParams) (*pipeline.Result, error) {
	it, err := readItems(ctx, env.InDir)
	if err != nil {
		return nil, err
	}
	all, err := readEdges(ctx, env.InDir, "ingest", "edges.parquet")
	if err != nil {
		return nil, err
	}
	keep, err := readFeatureItems(ctx, env.InDir, len(it.asin))
	if err != nil {
		return nil, err
	}
	pos := make([]graph.Edge, 0, len(all))
	for _, e := range all {
		if keep[e.Src] && keep[e.Dst] {
			pos = append(pos, e)
		}
	}
	withFeatures := len(pos)
	var cold []int32
	var coldRel []graph.Edge
	if p.ColdItems > 0 {
		if p.ColdByID {
			cold = pickColdItemsStable(pos, it.asin, p.ColdItems, StableSalt(env))
		} else {
			cold = pickColdItems(pos, p.ColdItems, env.RNG("cold_items"))
		}
		pos, coldRel = withoutItems(pos, cold, len(it.asin))
	}
	if !graph.SplitSizes(len(pos), len(pos), 0).Usable() {
		return nil, tooFewEdges(env.Experiment, p.Graph, len(all), len(pos))
	}
	stats := map[string]any{
		"positives":                    len(pos),
		"positives_dropped_no_feature": len(all) - withFeatures,
		"method":                       p.Method,
	}
	rows := map[string]int64{}
	if p.ColdItems > 0 {
		stats["cold_items"] = len(cold)
		stats["cold_relations"] = len(coldRel)
		ni, err := writeItemList(filepath.Join(env.OutDir, coldItemsFile), it, cold)
		if err != nil {
			return nil, err
		}
		nr, err := writeEdges(filepath.Join(env.OutDir, coldRelationsFile), it, p.Graph, coldRel)
		if err != nil {
			return nil, err
		}
		rows["cold_items"], rows["cold_relations"] = ni, nr
	}
	rng := env.RNG("negatives")
	var neg []graph.Edge
	var warnings []pipeline.Warning
	method := p.Method
	if method != "uniform" {
		neg, err = rewire(ctx, env, p.SwapsPerEdge, pos, it.sub, rng, stats)
		switch {
		case method == "auto" && errors.Is(err, graph.ErrIncomplete):
			// Too dense to rewire: the paper's method cannot give |R|
			// negatives here; uniform pairs can (they need not keep degrees).
			for _, k := range []string{"swaps_attempted", "swaps_accepted", "never_switched", "never_switched_fraction", "dropped"} {
				delete(stats, k) // of the abandoned rewiring; stats["rewire"] keeps them
			}
			stats["fallback"] = "uniform"
			stats["rewire_error"] = err.Error()
			warnings = append(warnings, pipeline.Warning{
				Msg:   "rewiring cannot produce enough negatives; fell back to uniform negatives (degrees not preserved)",
				Attrs: map[string]any{"rewire_error": err.Error()},
			})
			method = "uniform"
			rng = env.RNG("negatives/fallback")
		case errors.Is(err, graph.ErrIncomplete):
			// The same graph fails the same way on a retry: bad input.
			return nil, fmt.Errorf("%w: stages: negatives: %w; the graph is too dense for degree-preserving rewiring: set negatives: auto (rewire, else uniform) or negatives: uniform among the job file's settings (--set settings.negatives=auto)", pipeline.ErrBadInput, err)
		case err != nil:
			return nil, err
		default:
			method = "rewire" // auto rewired: method_used names what ran, never auto
		}
	}
	if method == "uniform" {
		var st graph.UniformStats
		neg, st, err = graph.Uniform(ctx, pos, it.sub, rng)
		if errors.Is(err, graph.ErrIncomplete) {
			return nil, fmt.Errorf("%w: stages: negatives: %w", pipeline.ErrBadInput, err)
		}
		if err != nil {
			return nil, err
		}
		stats["uniform"] = st
	}
	stats["method_used"] = method
	if sz := graph.SplitSizes(len(pos), len(neg), 0); !sz.Usable() {
		return nil, fmt.Errorf("%w: experiment %s: %d positives and %d negatives (%s) split %v/%v/%v pairs with %v positive: a split without a positive or a negative pair",
			pipeline.ErrBadInput, env.Experiment, len(pos), len(neg), method, sz.Pairs[0], sz.Pairs[1], sz.Pairs[2], sz.Related)
	}
	np, err := writeEdges(filepath.Join(env.OutDir, "positives.parquet"), it, p.Graph, pos)
	if err != nil {
		return nil, err
	}
	nn, err := writeEdges(filepath.Join(env.OutDir, "negatives.parquet"), it, "negative", neg)
	if err != nil {
		return nil, err
	}
	stats["negatives"] = nn
	rows["positives"], rows["negatives"] = np, nn
	return &pipeline.Result{Rows: rows, Stats: stats, Warnings: warnings}, nil
}

// The files of the items held out with cold_items (in the negatives
// stage's directory, only when the setting is given).
const (
	coldItemsFile     = "cold_items.parquet"     // schema feature_items
	coldRelationsFile = "cold_relations.parquet" // schema edges
)

// pickColdItems draws the share of the items of pos (those that are an end
// of a relation) to hold out, at least one, ascending. The holdout is
// here, after features and before negatives, split and training, so that
// the items keep their feature rows (the features stage's, which score
// reproduces byte for byte for the same content: docs/scoring.md) while no
// pair, negative or training candidate touches them.
func pickColdItems(pos []graph.Edge, share float64, rng *rand.Rand) []int32 {
	seen := map[int32]bool{}
	var active []int32
	for _, e := range pos {
		for _, x := range [2]int32{e.Src, e.Dst} {
			if !seen[x] {
				seen[x] = true
				active = append(active, x)
			}
		}
	}
	slices.Sort(active)
	n := max(1, int(math.Round(share*float64(len(active)))))
	n = min(n, len(active))
	perm := rng.Perm(len(active))
	cold := make([]int32, n)
	for i := range cold {
		cold[i] = active[perm[i]]
	}
	slices.Sort(cold)
	return cold
}

// pickColdItemsStable holds out each related item whose id's key
// (graph.ItemKey) falls below share: about share of them, and an item
// held out once stays held out while the share and the seed do. With
// none below it (a handful of items), the one of lowest key.
func pickColdItemsStable(pos []graph.Edge, asin []string, share float64, salt uint64) []int32 {
	seen := map[int32]bool{}
	var cold []int32
	low, lowKey := int32(-1), uint64(0)
	for _, e := range pos {
		for _, x := range [2]int32{e.Src, e.Dst} {
			if seen[x] {
				continue
			}
			seen[x] = true
			k := graph.ItemKey(salt, asin[x])
			if graph.KeyBelow(k, share) {
				cold = append(cold, x)
			}
			if low < 0 || k < lowKey || k == lowKey && asin[x] < asin[low] {
				low, lowKey = x, k
			}
		}
	}
	if len(cold) == 0 && low >= 0 {
		cold = []int32{low}
	}
	slices.Sort(cold)
	return cold
}

// withoutItems splits edges into those with neither end in drop (n items)
// and those with one or both ends in it, each in the order given.
func withoutItems(edges []graph.Edge, drop []int32, n int) (kept, held []graph.Edge) {
	out := make([]bool, n)
	for _, x := range drop {
		out[x] = true
	}
	for _, e := range edges {
		if out[e.Src] || out[e.Dst] {
			held = append(held, e)
		} else {
			kept = append(kept, e)
		}
	}
	return kept, held
}

// writeItemList writes items xs (ascending) in the feature_items schema.
func writeItemList(path string, it *items, xs []int32) (int64, error) {
	c := schema.FeatureItemsCols{ASIN: make([]string, len(xs)), ItemIdx: slices.Clone(xs)}
	for i, x := range xs {
		c.ASIN[i] = it.asin[x]
	}
	return schema.Write(path, c)
}

// readColdItems reads the items the negatives stage held out (cold_items)
// as a set over n items, and their held-out relations; nil, nil when the
// run held out none.
func readColdItems(ctx context.Context, in inputs, n int) ([]bool, []graph.Edge, error) {
	path, err := in.file("negatives", coldItemsFile)
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	var c schema.FeatureItemsCols
	if err := schema.ReadFields(ctx, path, &c, &c.ItemIdx); err != nil {
		return nil, nil, err
	}
	cold := make([]bool, n)
	for _, x := range c.ItemIdx {
		if x < 0 || int(x) >= n {
			return nil, nil, fmt.Errorf("%w: %s: item_idx %d out of range [0, %d)", pipeline.ErrBadInput, path, x, n)
		}
		cold[x] = true
	}
	rel, err := readEdges(ctx, in, "negatives", coldRelationsFile)
	if err != nil {
		return nil, nil, err
	}
	return cold, rel, nil
}

// rewire runs the degree-preserving rewiring, adding its stats to stats.
func rewire(ctx context.Context, env *pipeline.Env, swapsPerEdge int, pos []graph.Edge, sub []int32, rng *rand.Rand, stats map[string]any) ([]graph.Edge, error) {
	tr := env.Track("rewire", int64(swapsPerEdge)*int64(len(pos)))
	var done int64
	neg, st, err := graph.Rewire(ctx, pos, sub, rng, graph.RewireOptions{
		SwapsPerEdge: swapsPerEdge,
		Progress: func(d, _ int64) {
			tr.Add(d - done)
			done = d
		},
	})
	tr.Done()
	st.DroppedEdges = nil // counted; listing them would bloat the manifest
	stats["swaps_attempted"] = st.Attempts
	stats["swaps_accepted"] = st.Accepted
	stats["never_switched"] = st.NeverSwitched
	stats["never_switched_fraction"] = st.NeverSwitchedFraction()
	stats["dropped"] = st.Dropped
	stats["rewire"] = st
	return neg, err
}

// tooFewEdges is the error of an experiment whose graph gives fewer
// positives than an 80/10/10 split with a positive and a negative pair in
// each of train, validation and test needs (graph.MinEdges), with the
// likely cause: the graph itself (for co_review, its settings or too few
// reviews), or features missing for the items it joins.
func tooFewEdges(experiment, graphName string, edges, positives int) error {
	msg := fmt.Sprintf("experiment %s: graph %s has %d edges between items with features (of %d from ingest), fewer than the %d an 80/10/10 split with a positive and a negative pair in each part needs",
		experiment, graphName, positives, edges, graph.MinEdges)
	var hint string
	switch {
	case edges >= graph.MinEdges:
		hint = fmt.Sprintf("%d of the graph's edges join an item without features: the features cover too few of the items (see the features stage's stats)", edges-positives)
	case graphName == coReviewGraph:
		hint = "co_review related too few pairs of items in different subcategories: too few reviews of the scope by the same users within co_review_window days, or co_review_min_users too strict for them " +
			"(ingest's stats co_review_reviews, co_review_pairs and co_review_pairs_kept count each step); lower co_review_min_users, widen co_review_window, or take a larger category"
	default:
		hint = fmt.Sprintf("the metadata's %s lists join too few items of the scope in different subcategories (ingest's stats count the edges dropped and why); take a larger category or another graph", graphName)
	}
	return fmt.Errorf("%w: %s; %s", pipeline.ErrBadInput, msg, hint)
}

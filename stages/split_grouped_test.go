package stages

import (
	"context"
	"path/filepath"
	"testing"

	"monomer/graph"
	"monomer/job"
	"monomer/pipeline"
	"monomer/pipeline/cache"
)

// TestSplitGroupedStage: on the test job's image experiment the paper's
// split puts the reverse of some test positives in training, and says how
// many in its stats; split: grouped never separates the two directions of
// a pair.
func TestSplitGroupedStage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the stages up to the split")
	}
	upToSplit := Experiment()[:5] // ingest, bow-shard, features, negatives, split
	for _, grouped := range []bool{false, true} {
		j := loadTestJob(t)
		j.Experiments = j.Experiments[:1]
		if grouped {
			j.Settings.Split = job.Set(graph.SplitGrouped)
		}
		dir := t.TempDir()
		if _, err := runStages(context.Background(), j, upToSplit, nil, pipeline.Options{RunDir: dir, RunID: runID(dir)}); err != nil {
			t.Fatal(err)
		}
		in := runInputs(dir, j.Experiments[0].Name)
		pairs := must(readPairs(t.Context(), in))(t)
		split := map[graph.Edge]graph.Split{}
		for _, p := range pairs {
			if p.Label {
				split[graph.Edge{Src: p.X, Dst: p.Y}] = p.Split
			}
		}
		apart := 0
		for e, s := range split {
			if r, ok := split[graph.Edge{Src: e.Dst, Dst: e.Src}]; ok && r != s {
				apart++
			}
		}
		rev := graph.ReverseInTrain(pairs)
		m := must(cache.ReadManifest(filepath.Join(dir, j.Experiments[0].Name, "split")))(t)
		if m.Stats["reverse_in_train"] != float64(rev.ReverseInTrain) || m.Stats["test_positives"] != float64(rev.TestPositives) {
			t.Errorf("split stats %v, want %d of %d test positives reversed", m.Stats, rev.ReverseInTrain, rev.TestPositives)
		}
		switch {
		case grouped && (apart != 0 || rev.ReverseInTrain != 0):
			t.Errorf("grouped: %d positives apart from their reverse, %d test positives reversed in training", apart, rev.ReverseInTrain)
		case !grouped && rev.ReverseInTrain == 0:
			t.Error("the paper's split reversed no test positive: the data do not test grouping")
		}
	}
}

// TestSplitStableStage: under split: stable every pair's split is the one
// its two item ids' key gives (graph.PairKey with StableSalt), so it is
// the same in any run with that pair, whatever this run's item indices;
// the two directions of a pair share it.
func TestSplitStableStage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the stages up to the split")
	}
	j := loadTestJob(t)
	j.Experiments = j.Experiments[:1]
	j.Settings.Split = job.Set(graph.SplitStable)
	dir := t.TempDir()
	if _, err := runStages(context.Background(), j, Experiment()[:5], nil, pipeline.Options{RunDir: dir, RunID: runID(dir)}); err != nil {
		t.Fatal(err)
	}
	exp := j.Experiments[0].Name
	in := runInputs(dir, exp)
	it := must(readItems(t.Context(), in))(t)
	pairs := must(readPairs(t.Context(), in))(t)
	salt := StableSalt(&pipeline.Env{Seed: j.Seed, Experiment: exp})
	for i, p := range pairs {
		k := graph.PairKey(salt, it.asin[p.X], it.asin[p.Y])
		want := graph.Test
		switch {
		case graph.KeyBelow(k, 0.8):
			want = graph.Train
		case graph.KeyBelow(k, 0.9):
			want = graph.Valid
		}
		if p.Split != want {
			t.Fatalf("row %d (%s, %s): split %v, its key says %v", i, it.asin[p.X], it.asin[p.Y], p.Split, want)
		}
	}
	if rev := graph.ReverseInTrain(pairs); rev.ReverseInTrain != 0 {
		t.Errorf("%d test positives reversed in training", rev.ReverseInTrain)
	}
	m := must(cache.ReadManifest(filepath.Join(dir, exp, "split")))(t)
	if m.Stats["protocol"] != graph.SplitStable {
		t.Errorf("split stats protocol %v", m.Stats["protocol"])
	}
}

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

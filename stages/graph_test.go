package stages

import (
	"context"
	"slices"
	"testing"

	"monomer/job"
	"monomer/pipeline"
)

// runStages, planStages and named are the tests' short ways to run, plan and
// pick stages of a job.
func runStages(ctx context.Context, j *job.Job, exp, jobSt []Stage, opts pipeline.Options) (*pipeline.Summary, error) {
	g, err := Graph(j, exp, jobSt)
	if err != nil {
		return nil, err
	}
	return pipeline.Run(ctx, g, opts)
}

func planStages(j *job.Job, exp, jobSt []Stage, opts pipeline.Options) ([]pipeline.Step, error) {
	g, err := Graph(j, exp, jobSt)
	if err != nil {
		return nil, err
	}
	return pipeline.Plan(g, opts)
}

// named are the experiment stages of those names, in DAG order.
func named(names ...string) []Stage {
	return slices.DeleteFunc(Experiment(), func(s Stage) bool { return !slices.Contains(names, s.Name()) })
}

// everyStageGraph is the DAG of the test job with its bag-of-words
// experiment once more counted in two bow-shard nodes, so that every stage
// has a node; it fails the test if one has none.
func everyStageGraph(t *testing.T) *pipeline.Graph {
	t.Helper()
	j := loadTestJob(t)
	sharded := j.Experiments[1]
	sharded.Name += "-sharded"
	sharded.Settings.VocabShards = job.Set(2)
	sharded.Publish = &job.Publish{Model: "monomer"} // a publish node too
	j.Experiments = append(j.Experiments, sharded)
	g, err := Graph(j, Experiment(), Job())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(Experiment(), Job()...) {
		if !slices.ContainsFunc(g.Nodes, func(n *pipeline.Node) bool { return n.Stage == s.Name() }) {
			t.Fatalf("stage %s has no node in the test job", s.Name())
		}
	}
	return g
}

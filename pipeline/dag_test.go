package pipeline

import (
	"strings"
	"testing"
)

// NewGraph refuses a Spec the layer above got wrong, naming what is wrong,
// and links a good one: a stage depending on a sharded one depends on
// every shard, a job-level stage on that stage of every experiment, and
// on an earlier job-level stage.
func TestNewGraph(t *testing.T) {
	stages := []StageInfo{{Name: "ingest"}, {Name: "bow-shard", Deps: []string{"ingest"}}, {Name: "features", Deps: []string{"ingest", "bow-shard"}}}
	node := func(exp, stage, name string) *Node { return &Node{Experiment: exp, Stage: stage, Name: name} }
	good := func() []*Node {
		return []*Node{
			node("a", "ingest", "ingest"), node("a", "bow-shard", "bow-shard-0-of-2"), node("a", "bow-shard", "bow-shard-1-of-2"), node("a", "features", "features"),
			node("b", "ingest", "ingest"), node("b", "features", "features"),
			node("", "report", "report"), node("", "summary", "summary"),
		}
	}
	spec := func(nodes []*Node) Spec {
		return Spec{Job: "j", Experiments: []string{"a", "b"}, ExpStages: stages,
			JobStages: []StageInfo{{Name: "report", Deps: []string{"features"}}, {Name: "summary", Deps: []string{"report"}}}, Nodes: nodes}
	}
	g, err := NewGraph(spec(good()))
	if err != nil {
		t.Fatal(err)
	}
	ids := func(ns []*Node) string {
		var out []string
		for _, n := range ns {
			out = append(out, n.ID)
		}
		return strings.Join(out, " ")
	}
	if got := ids(g.Nodes[3].Deps); got != "a/ingest a/bow-shard-0-of-2 a/bow-shard-1-of-2" {
		t.Errorf("a/features depends on %s", got)
	}
	if got := ids(g.Nodes[6].Deps); got != "a/features b/features" {
		t.Errorf("report depends on %s", got)
	}
	if got := ids(g.Nodes[7].Deps); got != "report" {
		t.Errorf("summary depends on %s", got)
	}
	tests := []struct {
		name string
		mod  func(s *Spec)
		want string
	}{
		{"dep on a later stage", func(s *Spec) { s.ExpStages = []StageInfo{stages[1], stages[0], stages[2]} }, `stage bow-shard depends on "ingest"`},
		{"exp stage on a job stage", func(s *Spec) {
			s.ExpStages = append(s.ExpStages[:2:2], StageInfo{Name: "features", Deps: []string{"report"}})
		}, `stage features depends on "report"`},
		{"duplicate stage", func(s *Spec) { s.JobStages = []StageInfo{{Name: "ingest"}} }, `stage name "ingest" is invalid or used twice`},
		{"unknown stage", func(s *Spec) { s.Nodes[1].Stage = "train" }, `of an unknown stage "train"`},
		{"unknown experiment", func(s *Spec) { s.Nodes[4].Experiment = "c" }, `unknown experiment "c"`},
		{"job stage in an experiment", func(s *Spec) { s.Nodes[6].Experiment = "a" }, `node report of stage report: experiment "a"`},
		{"node named after another stage", func(s *Spec) { s.Nodes[1].Name = "train-0-of-2" }, `node name "train-0-of-2" is invalid`},
		{"node twice", func(s *Spec) { s.Nodes[2].Name = "bow-shard-0-of-2" }, "node a/bow-shard-0-of-2 is listed twice"},
		{"node before its dep", func(s *Spec) {
			s.Nodes[3], s.Nodes[4] = s.Nodes[4], s.Nodes[3]
			s.Nodes[3], s.Nodes[0] = s.Nodes[0], s.Nodes[3]
		},
			"comes before"},
	}
	for _, tc := range tests {
		s := spec(good())
		tc.mod(&s)
		if _, err := NewGraph(s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

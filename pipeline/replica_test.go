package pipeline

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReplicas: a replica node (a job's second seed) reads its own
// replica of an upstream stage that has one and the one node of a stage
// that has not; a first-seed node reads the first seed's; a job-level
// stage reads every replica. Env serves a replica its upstream under the
// stage's name and draws the random streams of the first replica's node
// under its own seed.
func TestReplicas(t *testing.T) {
	node := func(stage, name, replica string, seed uint64) *Node {
		exp := "a"
		if stage == "report" {
			exp = ""
		}
		return &Node{Experiment: exp, Stage: stage, Name: name, Replica: replica, Seed: seed}
	}
	nodes := []*Node{
		node("ingest", "ingest", "", 7),
		node("split", "split", "", 7), node("split", "split.s2", "s2", 2),
		node("train", "train.lmt", "", 7), node("train", "train.wnn", "", 7), node("train", "train.lmt.s2", "s2", 2), node("train", "train.wnn.s2", "s2", 2),
		node("publish", "publish", "", 7),
		node("report", "report", "", 7),
	}
	g, err := NewGraph(Spec{Job: "j", Experiments: []string{"a"},
		ExpStages: []StageInfo{{Name: "ingest"}, {Name: "split", Deps: []string{"ingest"}}, {Name: "train", Deps: []string{"ingest", "split"}}, {Name: "publish", Deps: []string{"train"}}},
		JobStages: []StageInfo{{Name: "report", Deps: []string{"train"}}}, Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	deps := map[string]string{}
	for _, n := range g.Nodes {
		var ids []string
		for _, d := range n.Deps {
			ids = append(ids, d.ID)
		}
		deps[n.ID] = strings.Join(ids, " ")
	}
	for id, want := range map[string]string{
		"a/split.s2":     "a/ingest",
		"a/train.lmt":    "a/ingest a/split",
		"a/train.lmt.s2": "a/ingest a/split.s2",
		"a/publish":      "a/train.lmt a/train.wnn",
		"report":         "a/train.lmt a/train.wnn a/train.lmt.s2 a/train.wnn.s2",
	} {
		if deps[id] != want {
			t.Errorf("%s depends on %q, want %q", id, deps[id], want)
		}
	}

	env := func(n *Node) *Env {
		in := map[string]bool{}
		for _, d := range n.Deps {
			in[d.ID] = true
		}
		return &Env{Experiment: n.Experiment, Seed: n.Seed, Stage: n.Name, Part: strings.Split(n.Name, ".")[1], Replica: n.Replica, runDir: "/run", inputs: in}
	}
	e := env(nodes[5]) // train.lmt.s2
	for stage, want := range map[string]string{"split": "/run/a/split.s2", "ingest": "/run/a/ingest"} {
		if got, err := e.InDir(stage); err != nil || got != filepath.FromSlash(want) {
			t.Errorf("train.lmt.s2 reads %s from %s (%v), want %s", stage, got, err, want)
		}
	}
	// train.lmt under seed 2 as a job of one seed would run it.
	plain := &Env{Experiment: "a", Seed: 2, Stage: "train.lmt", Part: "lmt"}
	if a, b := e.RNG("init").Uint64(), plain.RNG("init").Uint64(); a != b {
		t.Errorf("train.lmt.s2 draws %x, train.lmt of seed 2 %x", a, b)
	}
	if _, err := NewGraph(Spec{Job: "j", Experiments: []string{"a"}, ExpStages: []StageInfo{{Name: "ingest"}},
		Nodes: []*Node{{Experiment: "a", Stage: "ingest", Name: "ingest.s3", Replica: "s2"}}}); err == nil || !strings.Contains(err.Error(), `does not end in its replica's name`) {
		t.Errorf("a replica's node not named after it: %v", err)
	}
}

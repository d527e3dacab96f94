package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"monomer/pipeline/cache"
)

// afterWork writes one file; fail makes its Run fail.
type afterWork struct {
	name string
	fail bool
}

func (w afterWork) Key() (any, []string) { return map[string]string{"name": w.name}, nil }

func (w afterWork) Run(_ context.Context, env *Env) (*Result, error) {
	if w.fail {
		return nil, errors.New("run failed")
	}
	return &Result{}, os.WriteFile(filepath.Join(env.OutDir, "out.txt"), []byte(w.name), 0o644)
}

// TestAfterFailureBlocksNothing: a node failed by its After (a refused
// publish gate) has its outputs in place, so the nodes downstream run, at
// once and from the cache alike, and the run still fails with its error; a
// node whose Run failed blocks its downstream as before.
func TestAfterFailureBlocksNothing(t *testing.T) {
	refused := errors.New("refused")
	code := cache.Code{Version: "1.0.0"}
	node := func(exp, stage string, fail bool, after func(string) error) *Node {
		return &Node{Name: stage, Stage: stage, Experiment: exp, Seed: 1, Code: code, Work: afterWork{stage, fail}, After: after}
	}
	spec := Spec{Job: "j", Experiments: []string{"a"},
		ExpStages: []StageInfo{{Name: "gate"}, {Name: "down", Deps: []string{"gate"}}, {Name: "bad"}, {Name: "below", Deps: []string{"bad"}}},
		JobStages: []StageInfo{{Name: "report", Deps: []string{"gate", "down"}}},
		Nodes: []*Node{node("a", "gate", false, func(string) error { return refused }), node("a", "down", false, nil),
			node("a", "bad", true, nil), node("a", "below", false, nil), node("", "report", false, nil)}}
	g, err := NewGraph(spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, want := range []string{"run", "skipped"} {
		sum, err := Run(t.Context(), g, Options{RunDir: dir})
		if !errors.Is(err, refused) {
			t.Fatalf("%s: %v, want the After's error", want, err)
		}
		ran := sum.Stages.Run
		if want == "skipped" {
			ran = sum.Stages.Skipped
		}
		for _, id := range []string{"a/down", "report"} {
			if !slices.Contains(ran, id) {
				t.Errorf("%s: %s not %s after the After failed: %+v", want, id, want, sum.Stages)
			}
		}
		if !slices.Equal(sum.Stages.Failed, []string{"a/gate", "a/bad"}) || !slices.Equal(sum.Stages.Blocked, []string{"a/below"}) {
			t.Errorf("%s: failed %v, blocked %v; want [a/gate a/bad], [a/below]", want, sum.Stages.Failed, sum.Stages.Blocked)
		}
	}
}

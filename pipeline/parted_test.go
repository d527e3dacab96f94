package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"monomer/job"
	"monomer/pipeline/cache"
)

// partedStage is a train with one node per part: part x reads
// settings.k, part y settings.monomer_k. Each writes out.txt from its key
// and a draw of env.RNG.
type partedStage struct{ *fakeStage }

func (s partedStage) Parts(*job.Resolved) []string { return []string{"x", "y"} }

func (s partedStage) KeyPart(e *job.Resolved, part string) (any, []string) {
	if part == "x" {
		return map[string]any{"k": e.Settings.K}, nil
	}
	return map[string]any{"monomer_k": e.Settings.MonomerK}, nil
}

func (s partedStage) Run(_ context.Context, env *tEnv) (*Result, error) {
	s.rec.add(env.Exp.Name + "/" + env.Stage)
	p, _ := s.KeyPart(env.Exp, env.Part)
	out := fmt.Sprintf("%s %v %d\n", env.Part, p, env.RNG("train/"+env.Part).Uint64())
	return &Result{}, os.WriteFile(filepath.Join(env.OutDir, "out.txt"), []byte(out), 0o644)
}

// gather reads every part's output, as evaluate reads train's.
type gather struct{ *fakeStage }

func (s gather) Run(_ context.Context, env *tEnv) (*Result, error) {
	s.rec.add(env.Exp.Name + "/" + env.Stage)
	var all []byte
	for _, part := range []string{"x", "y"} {
		dir, err := env.InDir(PartName("train", part))
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(filepath.Join(dir, "out.txt"))
		if err != nil {
			return nil, err
		}
		all = append(all, b...)
	}
	return &Result{}, os.WriteFile(filepath.Join(env.OutDir, "out.txt"), all, 0o644)
}

// TestPartedStage: a Parted stage is one node per part with its own key,
// so changing one part's setting reruns that part and what reads it; --only
// names all parts by the stage's name, one by the node's; a part draws the
// random numbers of its stage.
func TestPartedStage(t *testing.T) {
	f := newFixture(t)
	f.exp = []tStage{
		&fakeStage{name: "ingest", rec: f.rec},
		partedStage{&fakeStage{name: "train", deps: []string{"ingest"}, rec: f.rec}},
		gather{&fakeStage{name: "evaluate", deps: []string{"train"}, rec: f.rec}},
	}
	f.jobSt = nil
	for _, c := range []struct {
		name string
		opts Options
		sets []string
		want []string
	}{
		{name: "first run", want: []string{"a/evaluate", "a/ingest", "a/train.x", "a/train.y", "b/evaluate", "b/ingest", "b/train.x", "b/train.y"}},
		{name: "part y's setting", sets: []string{"settings.monomer_k=3"}, want: []string{"a/evaluate", "a/train.y", "b/evaluate", "b/train.y"}},
		{name: "only the stage: every part", opts: Options{Only: "train", Force: true, Experiments: []string{"a"}}, sets: []string{"settings.monomer_k=3"},
			want: []string{"a/train.x", "a/train.y"}},
		{name: "only one part", opts: Options{Only: "train.x", Force: true}, sets: []string{"settings.monomer_k=3"},
			want: []string{"a/train.x", "b/train.x"}},
		{name: "from one part", opts: Options{From: "train.x", Force: true, Experiments: []string{"b"}}, sets: []string{"settings.monomer_k=3"},
			want: []string{"b/evaluate", "b/train.x"}},
	} {
		_, ran, err := f.run(t, c.opts, c.sets...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(ran, c.want) {
			t.Errorf("%s: ran %v, want %v", c.name, ran, c.want)
		}
	}
	m, err := cache.ReadManifest(filepath.Join(f.runDir, "a", "train.y"))
	must(t, err)
	if m.Inputs.Part != "y" || m.Inputs.Stage != "train" || !jsonEqual(m.Inputs.Params, `{"monomer_k":3}`) {
		t.Errorf("train.y key inputs %+v, params %s", m.Inputs, m.Inputs.Params)
	}
	part := &Env{Experiment: "a", Seed: 7, Stage: PartName("train", "x"), Part: "x"}
	whole := &Env{Experiment: "a", Seed: 7, Stage: "train"}
	if part.RNG("p").Uint64() != whole.RNG("p").Uint64() {
		t.Error("a part draws other random numbers than its stage")
	}
}

// jsonEqual reports whether raw holds the JSON value want.
func jsonEqual(raw []byte, want string) bool {
	var a, b any
	return json.Unmarshal(raw, &a) == nil && json.Unmarshal([]byte(want), &b) == nil && reflect.DeepEqual(a, b)
}

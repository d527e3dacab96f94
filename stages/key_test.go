package stages

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"monomer/graph"
	"monomer/job"
	"monomer/pipeline"
)

// TestKeysHoldOnlyWhatTheExperimentUses runs the image experiment, then
// changes settings only other work reads (topics: LDA; vocab_size and
// use_summary: bag-of-words features): the image experiment must stay up to
// date, as `monomer status` reports it.
func TestKeysHoldOnlyWhatTheExperimentUses(t *testing.T) {
	j := loadTestJob(t)
	dir := t.TempDir()
	opts := pipeline.Options{RunDir: dir, Experiments: []string{"men-image"}}
	if _, err := runStages(context.Background(), j, Experiment(), Job(), opts); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ key, value string }{
		{"settings.topics", "7"},
		{"settings.vocab_size", "100"},
		{"settings.use_summary", "true"},
		{"settings.co_review_window", "3"},
		{"settings.co_review_min_users", "5"},
	} {
		changed, err := job.ParseWith(j.Path, []byte(strings.ReplaceAll(testJob, "DATA", j.DataDir)),
			[]job.Override{{Key: c.key, Value: c.value, Source: c.key}})
		if err != nil {
			t.Fatal(err)
		}
		steps, err := planStages(changed, Experiment(), Job(), opts)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range steps {
			if s.Experiment != "men-image" {
				continue
			}
			n++
			if s.State != pipeline.UpToDate || s.Run {
				t.Errorf("%s=%s: %s is %s (%v), want up to date", c.key, c.value, s.ID, s.State, s.Reasons)
			}
		}
		// Every stage but bow-shard and publish (the job has no publish:),
		// train as one node per model.
		r := j.Resolve(0)
		if want := len(Experiment()) - 3 + len(Train{}.Parts(&r)); n != want {
			t.Errorf("%s: %d steps of men-image, want %d", c.key, n, want)
		}
	}
	// The key does change when a model of the experiment reads the setting.
	for _, c := range []struct{ key, value, stage string }{
		{"settings.k", "3", "train.lmt"},
		{"settings.monomer_k", "3", "train.monomer"},
		{"settings.ct_top", "0.25", "train.ct"},
	} {
		changed, err := job.ParseWith(j.Path, []byte(strings.ReplaceAll(testJob, "DATA", j.DataDir)),
			[]job.Override{{Key: c.key, Value: c.value, Source: c.key}})
		if err != nil {
			t.Fatal(err)
		}
		steps, err := planStages(changed, Experiment(), Job(), opts)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range steps {
			if s.ID == "men-image/"+c.stage {
				found = true
				if s.State != pipeline.Stale {
					t.Errorf("%s=%s: %s is %s, want stale", c.key, c.value, s.ID, s.State)
				}
			}
		}
		if !found {
			t.Errorf("%s: no step men-image/%s", c.key, c.stage)
		}
	}
}

// TestTrainKeyPerModel checks the key of each train node directly: a
// setting enters only the node of the model that reads it, and the list of
// the experiment's models enters none.
func TestTrainKeyPerModel(t *testing.T) {
	s := job.Defaults()
	e := &job.Resolved{Experiment: job.Experiment{Models: []string{"wnn", "ct", "lda", "lmt", "monomer"}}, Settings: s}
	if got := (Train{}).Parts(e); strings.Join(got, ",") != "wnn,ct,lda,lmt,monomer" {
		t.Errorf("parts %v, want every model", got)
	}
	key := func(model string) string {
		b, err := json.Marshal(Train{}.PartParams(e, model))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct {
		model string
		want  string
	}{
		{"wnn", `{"lambdas":[0,0.000001,0.00001,0.0001,0.001,0.01],"max_iter":200,"valid_every":10,"patience":6}`},
		{"lmt", `{"k":100,"lambdas":[0,0.000001,0.00001,0.0001,0.001,0.01],"max_iter":200,"valid_every":10,"patience":6}`},
		{"monomer", `{"monomer_k":20,"n":4,"gate_penalty":1,"gate_init":0.01,"lambdas":[0,0.000001,0.00001,0.0001,0.001,0.01],"max_iter":200,"valid_every":10,"patience":6}`},
		{"lda", `{"topics":100,"lambdas":[0,0.000001,0.00001,0.0001,0.001,0.01],"max_iter":200,"valid_every":10,"patience":6}`},
		{"ct", `{"ct_top":0.5}`},
	} {
		if got := key(c.model); got != c.want {
			t.Errorf("%s: key %s, want %s", c.model, got, c.want)
		}
	}
}

// TestNegativesKeyWithoutRewiring: swaps_per_edge is rewiring's setting;
// with uniform negatives it is not part of the key.
func TestNegativesKeyWithoutRewiring(t *testing.T) {
	r := job.Resolved{Experiment: job.Experiment{Graph: "also_bought"}, Settings: job.Defaults()}
	key := func(method string, swaps int) string {
		r.Settings.Negatives, r.Settings.SwapsPerEdge = method, swaps
		p := Negatives{}.Params(&r)
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if a, b := key("uniform", 20), key("uniform", 50); a != b || a != `{"method":"uniform","graph":"also_bought"}` {
		t.Errorf("uniform keys %s and %s, want both {\"method\":\"uniform\",\"graph\":\"also_bought\"}", a, b)
	}
	for _, m := range []string{"rewire", "auto"} {
		if a, b := key(m, 20), key(m, 50); a == b {
			t.Errorf("%s: swaps_per_edge left out of the key: %s", m, a)
		}
	}
	if got := key("rewire", 20); got != `{"method":"rewire","swaps_per_edge":20,"graph":"also_bought"}` {
		t.Errorf("rewire key %s changed form", got)
	}
}

// TestMonomerKRetrainsMonomerAlone: train is one node per model, keyed by
// that model's settings, so changing monomer_k reruns train.monomer and
// what reads it (evaluate, recommend, report) and nothing of LMT, WNN or
// LDA, as Plan (`monomer status`) says and the run does; dropping a model
// from the experiment retrains none of the others.
func TestMonomerKRetrainsMonomerAlone(t *testing.T) {
	jb := loadTestJob(t)
	dir := t.TempDir()
	runJob(t, jb, dir)
	load := func(set, value string) *job.Job {
		j, err := job.ParseWith(jb.Path, []byte(strings.ReplaceAll(testJob, "DATA", jb.DataDir)),
			[]job.Override{{Key: set, Value: value, Source: set}})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	planned := func(j *job.Job) (run []string, current map[string]bool) {
		steps, err := planStages(j, Experiment(), Job(), pipeline.Options{RunDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		current = map[string]bool{}
		for _, s := range steps {
			if s.Run {
				run = append(run, s.ID)
			}
			current[s.ID] = s.State == pipeline.UpToDate
		}
		slices.Sort(run)
		return run, current
	}
	changed := load("settings.monomer_k", "3")
	want := []string{"men-image/evaluate", "men-image/recommend", "men-image/report-section", "men-image/train.monomer",
		"report", "women-bow/evaluate", "women-bow/recommend", "women-bow/report-section", "women-bow/train.monomer"}
	run, current := planned(changed)
	if !slices.Equal(run, want) {
		t.Errorf("monomer_k=3: plan runs %v, want %v", run, want)
	}
	for _, id := range []string{"men-image/train.wnn", "men-image/train.lmt", "women-bow/train.wnn", "women-bow/train.lda", "women-bow/train.lmt"} {
		if !current[id] {
			t.Errorf("monomer_k=3: %s is not up to date", id)
		}
	}
	var logs bytes.Buffer
	if _, err := runStages(context.Background(), changed, Experiment(), Job(),
		pipeline.Options{RunDir: dir, Logger: pipeline.NewLogger(&logs, false)}); err != nil {
		t.Fatal(err)
	}
	var started []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if l["msg"] == "stage start" {
			id := l["stage"].(string)
			if e, ok := l["experiment"].(string); ok {
				id = e + "/" + id
			}
			started = append(started, id)
		}
	}
	slices.Sort(started)
	if !slices.Equal(started, want) {
		t.Errorf("monomer_k=3: the run started %v, want %v", started, want)
	}

	// Without Monomer, men-image's other models stay trained; evaluate,
	// recommend and report, which list the models, run again.
	run, current = planned(load("experiments.men-image.models", "[wnn, ct, lmt]"))
	for _, id := range []string{"men-image/train.wnn", "men-image/train.lmt"} {
		if !current[id] || slices.Contains(run, id) {
			t.Errorf("monomer dropped: %s would run", id)
		}
	}
	if _, ok := current["men-image/train.monomer"]; ok {
		t.Error("monomer dropped: the DAG still has men-image/train.monomer")
	}
}

// TestSplitKeyGrouped: the paper's split keys as before split: existed,
// and split: grouped is in the key.
func TestSplitKeyGrouped(t *testing.T) {
	r := job.Resolved{Settings: job.Defaults()}
	key := func() string {
		b, err := json.Marshal(Split{}.Params(&r))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := key(); got != `{"train_cap":2000000}` {
		t.Errorf("paper split key %s, want {\"train_cap\":2000000}", got)
	}
	r.Settings.Split = job.Set(graph.SplitGrouped)
	if got := key(); got != `{"train_cap":2000000,"split":"grouped"}` {
		t.Errorf("grouped split key %s", got)
	}
}

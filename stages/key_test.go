package stages

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"monomer/pipeline"
)

// TestKeysHoldOnlyWhatTheExperimentUses runs the image experiment, then
// changes settings only other work reads (topics: LDA; vocab_size and
// use_summary: bag-of-words features): the image experiment must stay up to
// date, as `monomer status` reports it.
func TestKeysHoldOnlyWhatTheExperimentUses(t *testing.T) {
	job := loadTestJob(t)
	dir := t.TempDir()
	opts := pipeline.Options{RunDir: dir, Experiments: []string{"men-image"}}
	if _, err := pipeline.Run(context.Background(), job, Experiment(), Job(), opts); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ key, value string }{
		{"settings.topics", "7"},
		{"settings.vocab_size", "100"},
		{"settings.use_summary", "true"},
	} {
		changed, err := pipeline.ParseJobWith(job.Path, []byte(strings.ReplaceAll(testJob, "DATA", job.DataDir)),
			[]pipeline.Override{{Key: c.key, Value: c.value, Source: c.key}})
		if err != nil {
			t.Fatal(err)
		}
		steps, err := pipeline.Plan(changed, Experiment(), Job(), opts)
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
		if want := len(Experiment()) - 1; n != want { // every stage but bow-shard
			t.Errorf("%s: %d steps of men-image, want %d", c.key, n, want)
		}
	}
	// The key does change when a model of the experiment reads the setting.
	for _, c := range []struct{ key, value, stage string }{
		{"settings.k", "3", "train"},
		{"settings.monomer_k", "3", "train"},
		{"settings.ct_top", "0.25", "evaluate"},
	} {
		changed, err := pipeline.ParseJobWith(job.Path, []byte(strings.ReplaceAll(testJob, "DATA", job.DataDir)),
			[]pipeline.Override{{Key: c.key, Value: c.value, Source: c.key}})
		if err != nil {
			t.Fatal(err)
		}
		steps, err := pipeline.Plan(changed, Experiment(), Job(), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range steps {
			if s.ID == "men-image/"+c.stage && s.State != pipeline.Stale {
				t.Errorf("%s=%s: %s is %s, want stale", c.key, c.value, s.ID, s.State)
			}
		}
	}
}

// TestTrainKeyPerModel checks the train key directly: a setting enters only
// with the model that reads it.
func TestTrainKeyPerModel(t *testing.T) {
	s := pipeline.Defaults()
	key := func(models ...string) string {
		b, err := json.Marshal(keyTrainParams(&pipeline.Resolved{Experiment: pipeline.Experiment{Models: models}, Settings: s}))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct {
		models []string
		want   string
	}{
		{[]string{"ct"}, `{"models":["ct"]}`},
		{[]string{"wnn"}, `{"models":["wnn"],"lambdas":[0,0.000001,0.00001,0.0001,0.001,0.01],"max_iter":200,"valid_every":10,"patience":6}`},
		{[]string{"lmt"}, `{"models":["lmt"],"k":100,"lambdas":[0,0.000001,0.00001,0.0001,0.001,0.01],"max_iter":200,"valid_every":10,"patience":6}`},
		{[]string{"monomer"}, `{"models":["monomer"],"monomer_k":20,"n":4,"lambdas":[0,0.000001,0.00001,0.0001,0.001,0.01],"max_iter":200,"valid_every":10,"patience":6}`},
		{[]string{"lda"}, `{"models":["lda"],"topics":100,"lambdas":[0,0.000001,0.00001,0.0001,0.001,0.01],"max_iter":200,"valid_every":10,"patience":6}`},
	} {
		if got := key(c.models...); got != c.want {
			t.Errorf("%v: key %s, want %s", c.models, got, c.want)
		}
	}
}

// TestNegativesKeyWithoutRewiring: swaps_per_edge is rewiring's setting;
// with uniform negatives it is not part of the key.
func TestNegativesKeyWithoutRewiring(t *testing.T) {
	r := pipeline.Resolved{Settings: pipeline.Defaults()}
	key := func(method string, swaps int) string {
		r.Settings.Negatives, r.Settings.SwapsPerEdge = method, swaps
		p, _ := Negatives{}.Key(&r)
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if a, b := key("uniform", 20), key("uniform", 50); a != b || a != `{"method":"uniform"}` {
		t.Errorf("uniform keys %s and %s, want both {\"method\":\"uniform\"}", a, b)
	}
	for _, m := range []string{"rewire", "auto"} {
		if a, b := key(m, 20), key(m, 50); a == b {
			t.Errorf("%s: swaps_per_edge left out of the key: %s", m, a)
		}
	}
	if got := key("rewire", 20); got != `{"method":"rewire","swaps_per_edge":20}` {
		t.Errorf("rewire key %s changed form", got)
	}
}

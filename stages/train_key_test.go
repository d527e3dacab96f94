package stages

import (
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"monomer/job"
	"monomer/models"
)

// trainKeys are the JSON keys of the train nodes as recorded before the
// key was derived from models.TrainSettings by reflection (when it was the
// json tags of a second struct, models.Settings): variant, experiment of
// the test job, model.
var trainKeys = []struct{ variant, experiment, model, key string }{
	{"test job", "men-image", "wnn", `{"lambdas":[0.0001],"max_iter":15,"valid_every":5,"patience":6,"features":"image"}`},
	{"test job", "men-image", "ct", `{"ct_top":0.5}`},
	{"test job", "men-image", "lmt", `{"k":6,"lambdas":[0.0001],"max_iter":15,"valid_every":5,"patience":6,"features":"image"}`},
	{"test job", "men-image", "monomer", `{"monomer_k":2,"n":2,"gate_penalty":1,"gate_init":0.01,"lambdas":[0.0001],"max_iter":15,"valid_every":5,"patience":6,"features":"image"}`},
	{"test job", "men-image", "lda", `{"topics":5,"lambdas":[0.0001],"max_iter":15,"valid_every":5,"patience":6,"features":"image"}`},
	{"test job", "women-bow", "wnn", `{"lambdas":[0.0001],"max_iter":15,"valid_every":5,"patience":6,"features":"bow"}`},
	{"test job", "women-bow", "ct", `{"ct_top":0.5}`},
	{"test job", "women-bow", "lmt", `{"k":6,"lambdas":[0.0001],"max_iter":15,"valid_every":5,"patience":6,"features":"bow"}`},
	{"test job", "women-bow", "monomer", `{"monomer_k":2,"n":2,"gate_penalty":1,"gate_init":0.01,"lambdas":[0.0001],"max_iter":15,"valid_every":5,"patience":6,"features":"bow"}`},
	{"test job", "women-bow", "lda", `{"topics":5,"lambdas":[0.0001],"max_iter":15,"valid_every":5,"patience":6,"features":"bow"}`},
	{"defaults", "men-image", "wnn", `{"lambdas":[0,0.000001,0.00001,0.0001,0.001,0.01],"max_iter":200,"valid_every":10,"patience":6,"features":"image"}`},
	{"defaults", "men-image", "ct", `{"ct_top":0.5}`},
	{"defaults", "men-image", "lmt", `{"k":100,"lambdas":[0,0.000001,0.00001,0.0001,0.001,0.01],"max_iter":200,"valid_every":10,"patience":6,"features":"image"}`},
	{"defaults", "men-image", "monomer", `{"monomer_k":20,"n":4,"gate_penalty":1,"gate_init":0.01,"lambdas":[0,0.000001,0.00001,0.0001,0.001,0.01],"max_iter":200,"valid_every":10,"patience":6,"features":"image"}`},
	{"defaults", "men-image", "lda", `{"topics":100,"lambdas":[0,0.000001,0.00001,0.0001,0.001,0.01],"max_iter":200,"valid_every":10,"patience":6,"features":"image"}`},
	{"defaults", "women-bow", "wnn", `{"lambdas":[0,0.000001,0.00001,0.0001,0.001,0.01],"max_iter":200,"valid_every":10,"patience":6,"features":"bow"}`},
	{"defaults", "women-bow", "ct", `{"ct_top":0.5}`},
	{"defaults", "women-bow", "lmt", `{"k":100,"lambdas":[0,0.000001,0.00001,0.0001,0.001,0.01],"max_iter":200,"valid_every":10,"patience":6,"features":"bow"}`},
	{"defaults", "women-bow", "monomer", `{"monomer_k":20,"n":4,"gate_penalty":1,"gate_init":0.01,"lambdas":[0,0.000001,0.00001,0.0001,0.001,0.01],"max_iter":200,"valid_every":10,"patience":6,"features":"bow"}`},
	{"defaults", "women-bow", "lda", `{"topics":100,"lambdas":[0,0.000001,0.00001,0.0001,0.001,0.01],"max_iter":200,"valid_every":10,"patience":6,"features":"bow"}`},
	{"every model setting", "men-image", "wnn", `{"lambdas":[0,0.00001,0.25],"max_iter":40,"valid_every":4,"patience":-1,"warm_start":true,"features":"image"}`},
	{"every model setting", "men-image", "ct", `{"ct_top":0.125}`},
	{"every model setting", "men-image", "lmt", `{"k":7,"lambdas":[0,0.00001,0.25],"max_iter":40,"valid_every":4,"patience":-1,"warm_start":true,"features":"image"}`},
	{"every model setting", "men-image", "monomer", `{"monomer_k":3,"n":5,"gate_penalty":0.5,"gate_init":0.02,"lambdas":[0,0.00001,0.25],"max_iter":40,"valid_every":4,"patience":-1,"warm_start":true,"features":"image"}`},
	{"every model setting", "men-image", "lda", `{"topics":9,"lda_passes":3,"lambdas":[0,0.00001,0.25],"max_iter":40,"valid_every":4,"patience":-1,"warm_start":true,"features":"image"}`},
	{"every model setting", "women-bow", "wnn", `{"lambdas":[0,0.00001,0.25],"max_iter":40,"valid_every":4,"patience":-1,"warm_start":true,"features":"bow"}`},
	{"every model setting", "women-bow", "ct", `{"ct_top":0.125}`},
	{"every model setting", "women-bow", "lmt", `{"k":7,"lambdas":[0,0.00001,0.25],"max_iter":40,"valid_every":4,"patience":-1,"warm_start":true,"features":"bow"}`},
	{"every model setting", "women-bow", "monomer", `{"monomer_k":3,"n":5,"gate_penalty":0.5,"gate_init":0.02,"lambdas":[0,0.00001,0.25],"max_iter":40,"valid_every":4,"patience":-1,"warm_start":true,"features":"bow"}`},
	{"every model setting", "women-bow", "lda", `{"topics":9,"lda_passes":3,"lambdas":[0,0.00001,0.25],"max_iter":40,"valid_every":4,"patience":-1,"warm_start":true,"features":"bow"}`},
	{"zeros", "men-image", "wnn", `{"max_iter":15,"valid_every":5,"features":"image"}`},
	{"zeros", "men-image", "ct", `{}`},
	{"zeros", "men-image", "lmt", `{"k":6,"max_iter":15,"valid_every":5,"features":"image"}`},
	{"zeros", "men-image", "monomer", `{"monomer_k":2,"n":2,"max_iter":15,"valid_every":5,"features":"image"}`},
	{"zeros", "men-image", "lda", `{"topics":5,"max_iter":15,"valid_every":5,"features":"image"}`},
	{"zeros", "women-bow", "wnn", `{"max_iter":15,"valid_every":5,"features":"bow"}`},
	{"zeros", "women-bow", "ct", `{}`},
	{"zeros", "women-bow", "lmt", `{"k":6,"max_iter":15,"valid_every":5,"features":"bow"}`},
	{"zeros", "women-bow", "monomer", `{"monomer_k":2,"n":2,"max_iter":15,"valid_every":5,"features":"bow"}`},
	{"zeros", "women-bow", "lda", `{"topics":5,"max_iter":15,"valid_every":5,"features":"bow"}`},
}

// TestTrainKeysUnchanged: every registered model's train key, over a few
// settings, is byte for byte what it was, so no run retrains on upgrade.
func TestTrainKeysUnchanged(t *testing.T) {
	variants := []struct {
		name   string
		change func(*job.Settings)
	}{
		{"test job", func(*job.Settings) {}},
		{"defaults", func(s *job.Settings) { *s = job.Defaults() }},
		{"every model setting", func(s *job.Settings) {
			s.K, s.MonomerK, s.N, s.GatePenalty, s.GateInit = 7, 3, 5, 0.5, 0.02
			s.Topics, s.LDAPasses, s.Lambdas = 9, 3, []float64{0, 1e-5, 0.25}
			s.MaxIter, s.ValidEvery, s.CTTop, s.Patience, s.WarmStart = 40, 4, 0.125, -1, job.Set(true)
		}},
		{"zeros", func(s *job.Settings) { // omitted from the key, -0 too
			s.GatePenalty, s.GateInit, s.LDAPasses, s.Patience, s.Lambdas, s.CTTop = math.Copysign(0, -1), 0, 0, 0, nil, 0
			s.WarmStart = job.Set(false)
		}},
	}
	j := loadTestJob(t)
	n := 0
	for _, v := range variants {
		for i := range j.Experiments {
			r := j.Resolve(i)
			v.change(&r.Settings)
			for _, m := range models.Names() {
				b, err := json.Marshal(Train{}.PartParams(&r, m))
				if err != nil {
					t.Fatal(err)
				}
				k := slices.IndexFunc(trainKeys, func(k struct{ variant, experiment, model, key string }) bool {
					return k.variant == v.name && k.experiment == r.Name && k.model == m
				})
				if k < 0 {
					t.Errorf("%s, %s, %s: no recorded key (a new model: record its key)", v.name, r.Name, m)
					continue
				}
				n++
				if string(b) != trainKeys[k].key {
					t.Errorf("%s, %s, %s: key\n%s\nwant\n%s", v.name, r.Name, m, b, trainKeys[k].key)
				}
			}
		}
	}
	if n != len(trainKeys) {
		t.Errorf("%d keys compared, %d recorded", n, len(trainKeys))
	}
}

// TestTrainKeyNoPredecessor: a warm_from that finds no predecessor keys
// train the same wherever the root of runs lies and whatever the reason
// says, so that moving the root retrains nothing. (It keys that the
// predecessor is missing: TestParamsAreTheKey wants every field Run reads
// in the key.)
func TestTrainKeyNoPredecessor(t *testing.T) {
	key := func(j *job.Job, model string) string {
		r := j.Resolve(0)
		b, err := json.Marshal(Train{}.PartParams(&r, model))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, m := range []string{"wnn", "lmt", "monomer"} {
		cold := ""
		for _, root := range []string{t.TempDir(), t.TempDir()} {
			for _, from := range []string{job.ReservedName, filepath.Join(root, "nothing-here")} {
				j := loadTestJob(t)
				j.RunRoot, j.RunID, j.RunDir, j.WarmFrom = root, "r1", filepath.Join(root, "r1"), from
				if r := j.Resolve(0); warmFor(&r, m).Missing == "" {
					t.Fatalf("warm_from %s in %s: a predecessor found", from, root)
				}
				k := key(j, m)
				if cold == "" {
					cold = k
				} else if k != cold {
					t.Errorf("%s, warm_from %s in %s without a predecessor: key %s, elsewhere %s", m, from, root, k, cold)
				}
			}
		}
	}
}

// TestFeaturesKeyNoVocabulary: a vocabulary_from that finds no vocabulary
// keys features the same wherever the root of runs lies and whatever the
// reason says (which stays for the WARN).
func TestFeaturesKeyNoVocabulary(t *testing.T) {
	key := func(j *job.Job) (string, featuresParams) {
		r := j.Resolve(1) // women-bow
		p := Features{}.Params(&r)
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b), p
	}
	counted := ""
	for _, root := range []string{t.TempDir(), t.TempDir()} {
		for _, from := range []string{job.ReservedName, filepath.Join(root, "nothing-here")} {
			j := loadTestJob(t)
			j.RunRoot, j.RunID, j.RunDir, j.VocabularyFrom = root, "r1", filepath.Join(root, "r1"), from
			k, p := key(j)
			if counted == "" {
				counted = k
			}
			if p.VocabularyMissing == "" || k != counted {
				t.Errorf("vocabulary_from %s in %s without a vocabulary: key %s (missing %q), elsewhere %s", from, root, k, p.VocabularyMissing, counted)
			}
		}
	}
}

package job

import (
	"errors"
	"testing"
)

// A bad publish: block fails validation naming the field and its line.
func TestBadPublish(t *testing.T) {
	exp := "\n    category: A > B\n    graph: also_bought\n    features: image\n    models: [wnn, lmt]\n"
	head := "name: j\ndata: {meta: m, image_features: i}\nexperiments:\n  - name: e"
	tests := []struct{ name, yaml, want string }{
		{"counted model", "publish: {model: ct}\n" + head + exp, `j.yaml: line 1: publish.model: "ct" is not a model that ranks items (one of [wnn lda lmt monomer])`},
		{"k 0", "publish: {model: lmt, k: 0}\n" + head + exp, "j.yaml: line 1: publish.k: 0 must be from 1 to 1000"},
		{"probability", head + exp + "    publish: {model: lmt, min_probability: 1.5}\n", "j.yaml: line 9: experiments[0].publish.min_probability: 1.5 must be from 0 to 1"},
		{"churn", "publish:\n  model: lmt\n  gate: {max_churn: -0.1}\n" + head + exp, "j.yaml: line 3: publish.gate.max_churn: -0.1 must be from 0 to 1 (1 − mean Jaccard)"},
		{"no model", "publish: {k: 5}\n" + head + exp, "j.yaml: experiments[0].publish.model: required (one of [wnn lda lmt monomer])"},
		{"model not trained", "publish: {model: monomer}\n" + head + exp, "j.yaml: experiments[0].publish.model: monomer is not among the experiment's models [wnn lmt]"},
		{"unknown key", "publish: {model: lmt, top: 5}\n" + head + exp, `j.yaml: line 1: unknown key "top" in publish`},
		{"reserved experiment", "name: j\ndata: {meta: m, image_features: i}\nexperiments:\n  - name: Published" + exp, `j.yaml: line 4: experiments[0].name: "Published" is reserved for the run root's links to published runs (docs/publishing.md)`},
	}
	for _, tt := range tests {
		_, err := Parse("/jobs/j.yaml", []byte(tt.yaml))
		if !errors.Is(err, ErrConfig) || len(err.Error()) < len(tt.want) || err.Error()[:len("invalid job: /jobs/")+len(tt.want)] != "invalid job: /jobs/"+tt.want {
			t.Errorf("%s:\n got %v\nwant %q", tt.name, err, "invalid job: /jobs/"+tt.want)
		}
	}
}

// The job's publish: block is every experiment's default, which overrides
// it field by field; without either there is none.
func TestResolvePublish(t *testing.T) {
	y := `name: j
data_dir: /data
data: {meta: m, image_features: i}
publish:
  model: lmt
  exclude: banned.csv
  gate: {max_churn: 0.5}
experiments:
  - name: a
    category: A
    graph: also_bought
    features: image
  - name: b
    category: A
    graph: also_bought
    features: image
    publish: {model: monomer, k: 5, queries: q.csv, gate: {min_coverage: 0.2}}
`
	j, err := Parse("/jobs/j.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	a, b := j.Resolve(0).Publish, j.Resolve(1).Publish
	if a.Model != "lmt" || a.K.Get() != DefaultPublishK || a.CrossSubcategory.Get() || a.Queries != PublishAll ||
		a.Exclude != "/data/banned.csv" || a.Gate.MaxChurn.Get() != 0.5 || a.Gate.MinCoverage.IsSet() {
		t.Errorf("a: %+v", a)
	}
	if b.Model != "monomer" || b.K.Get() != 5 || b.Queries != "/data/q.csv" || b.Exclude != "/data/banned.csv" ||
		b.Gate.MaxChurn.Get() != 0.5 || b.Gate.MinCoverage.Get() != 0.2 {
		t.Errorf("b: %+v", b)
	}
	if j.Publish.K.IsSet() || j.Publish.Exclude != "banned.csv" {
		t.Error("resolving changed the job's block")
	}
	j.Publish = nil
	j.Experiments[1].Publish = nil
	if p := j.Resolve(0).Publish; p != nil {
		t.Errorf("no block: %+v", p)
	}
}

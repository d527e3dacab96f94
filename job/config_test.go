package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"monomer/graph"
	"monomer/models"
)

const goodJob = `name: demo
seed: 3
data_dir: data
data:
  meta: meta_Demo.json.gz
  reviews: reviews_Demo.json.gz
  image_features: image_features_Demo.b
settings:
  k: 50
experiments:
  - name: men.v2
    category: "Clothing, Shoes & Jewelry > Men"
    graph: also_bought
    features: image
  - name: elect
    category: Electronics
    depth: 2
    graph: also_viewed
    features: bow
    models: [wnn, lda]
    settings: {k: 10, lambdas: [0, 0.1]}
`

func TestBadJobFiles(t *testing.T) {
	exp := "\n    category: A > B\n    graph: also_bought\n    features: image\n"
	head := "name: j\ndata: {meta: m, image_features: i, reviews: r}\nexperiments:\n  - name: e"
	tests := []struct {
		name, yaml, want string
	}{
		{name: "empty", yaml: "", want: `j.yaml: name: required (letters, digits, '.', '_' or '-', starting with a letter or digit)`},
		{name: "bad name", yaml: "name: a b\n", want: `j.yaml: line 1: name: "a b" must start with a letter or digit and hold only letters, digits, '.', '_' or '-'`},
		// Issue 37: a second document was ignored.
		{name: "second document", yaml: head + exp + "---\nname: other\n", want: `j.yaml: line 9: a second YAML document; a job file holds one (remove the "---" and what follows, or merge it into the first)`},
		{name: "second document, broken", yaml: head + exp + "---\n[\n", want: `j.yaml: a second YAML document; a job file holds one (remove the "---" and what follows, or merge it into the first)`},
		// Issue 37: a seed beyond 64 bits was read as 2^63.
		{name: "seed of 2^64", yaml: "seed: 18446744073709551616\n" + head + exp, want: `j.yaml: line 1: seed: 18446744073709551616 is out of range (0 to 18446744073709551615)`},
		{name: "seed of 1e30", yaml: "seed: 1e30\n" + head + exp, want: `j.yaml: line 1: seed: 1e30 is out of range (0 to 18446744073709551615)`},
		{name: "k beyond int64", yaml: "settings: {k: 1e19}\n" + head + exp, want: `j.yaml: line 1: settings.k: 1e19 is out of range (-9223372036854775808 to 9223372036854775807)`},
		// Issue 37: the message refusing ".." must say what ".." breaks.
		{name: "dot dot", yaml: "name: ..\n", want: `j.yaml: line 1: name: ".." must start with a letter or digit and hold only letters, digits, '.', '_' or '-'`},
		{name: "long experiment name", yaml: strings.Replace(head, "name: e", "name: "+strings.Repeat("e", 300), 1) + exp,
			want: `j.yaml: line 4: experiments[0].name: "eeeeeeeeeeeeeeeeeeee"... is 300 characters, more than 100 (it names a directory)`},
		{name: "names differing in case", yaml: strings.Replace(head, "name: e", "name: Men", 1) + exp + "  - name: men" + exp,
			want: `j.yaml: line 8: experiments[1].name: "men" differs from experiments[0].name "Men" only in case (one directory on a case-insensitive file system)`},
		{name: "tab", yaml: "name: j\nexperiments:\n\t- name: e\n", want: "j.yaml: yaml: line 3: found character that cannot start any token (a tab: YAML indents with spaces only)"},
		// A tab elsewhere is not the cause (the hint was given for a tab anywhere).
		{name: "tab elsewhere", yaml: "name: \"a\tb\"\nseed: @x\n", want: "j.yaml: yaml: line 2: found character that cannot start any token"},
		{name: "unknown key", yaml: "name: j\nsed: 1\n", want: `j.yaml: line 2: unknown key "sed" in the job; did you mean seed? (keys: name, seed, seeds, data_dir, data, settings, warm_from, vocabulary_from, publish, blas_kernel, experiments)`},
		{name: "wrong type", yaml: "name: j\nseed: many\n", want: `j.yaml: line 2: seed: want an unsigned integer, got "many"`},
		{name: "negative unsigned", yaml: "name: j\nseed: -1\n", want: `j.yaml: line 2: seed: want an unsigned integer, got "-1"`},
		{name: "word for an integer", yaml: "name: j\nsettings:\n  k: forty\n", want: `j.yaml: line 3: settings.k: want an integer, got "forty"`},
		{name: "word for a number", yaml: "name: j\nsettings:\n  lambdas: [0, small]\n", want: `j.yaml: line 3: settings.lambdas[1]: want a number, got "small"`},
		{name: "word for a bool", yaml: "name: j\nsettings:\n  use_summary: yes\n", want: `j.yaml: line 3: settings.use_summary: want true or false, got "yes"`},
		{name: "scalar for a list", yaml: "name: j\nexperiments: many\n", want: `j.yaml: line 2: experiments: want a list, got "many"`},
		{name: "list for a section", yaml: "name: j\nsettings: [1]\n", want: `j.yaml: line 2: settings: want a mapping of keys, got a list`},
		{name: "mapping for a string", yaml: "name: {a: 1}\n", want: `j.yaml: line 1: name: want a string, got a mapping`},
		{name: "no experiments", yaml: "name: j\n", want: "j.yaml: experiments: at least one is required"},
		{name: "unknown setting", yaml: "name: j\nsettings: {kk: 1}\n", want: `j.yaml: line 2: unknown key "kk" in settings; did you mean k? (keys: ` + strings.Join(yamlKeys(reflect.TypeFor[Settings]()), ", ") + ")"},
		{name: "negative k", yaml: head + exp + "settings: {k: -1}\n", want: "j.yaml: line 8: settings.k: -1 must be positive"},
		{name: "bad lambda", yaml: head + exp + "settings: {lambdas: [0, .nan]}\n", want: "j.yaml: line 8: settings.lambdas[1]: NaN is not a finite number; it must be in [0, 1e+06]"},
		{name: "huge lambda", yaml: head + exp + "settings: {lambdas: [0, 1e308]}\n", want: "j.yaml: line 8: settings.lambdas[1]: 1e+308 must be in [0, 1e+06]"},
		{name: "null lambda", yaml: head + exp + "settings: {lambdas: [~]}\n", want: "j.yaml: line 8: settings.lambdas[0]: an empty (null) item is not allowed"},
		{name: "null in a list", yaml: head + exp + "settings: {lambdas: [0, null]}\n", want: "j.yaml: line 8: settings.lambdas[1]: an empty (null) item is not allowed"},
		{name: "repeated lambda", yaml: head + exp + "settings: {lambdas: [0, 1e-4, 0.0001]}\n", want: "j.yaml: line 8: settings.lambdas[2]: 0.0001 is listed twice"},
		{name: "ct_top", yaml: head + exp + "settings: {ct_top: 2}\n", want: "j.yaml: line 8: settings.ct_top: 2 must be in (0, 1]"},
		{name: "reject ratio", yaml: head + exp + "settings: {reject_ratio: .inf}\n", want: "j.yaml: line 8: settings.reject_ratio: +Inf is not a finite number; it must be at most 1"},
		{name: "negatives", yaml: head + exp + "settings: {negatives: random}\n", want: `j.yaml: line 8: settings.negatives: "random" is not one of rewire, uniform, auto`},
		{name: "duplicate experiment", yaml: head + exp + "  - name: e" + exp, want: `j.yaml: line 8: experiments[1].name: "e" is used twice`},
		{name: "no category", yaml: head + "\n    graph: also_bought\n    features: image\n", want: "j.yaml: experiments[0].category: required"},
		{name: "empty level", yaml: head + "\n    category: A >  > B\n    graph: also_bought\n    features: image\n", want: `j.yaml: line 5: experiments[0].category: "A >  > B" has an empty level (levels are separated by " > ")`},
		{name: "negative depth", yaml: head + exp + "    depth: -1\n", want: "j.yaml: line 8: experiments[0].depth: -1 must be at least 1 (the subcategory is the node that many levels below the category; omit depth for 1)"},
		{name: "zero depth", yaml: head + exp + "    depth: 0\n", want: "j.yaml: line 8: experiments[0].depth: 0 must be at least 1 (the subcategory is the node that many levels below the category; omit depth for 1)"},
		{name: "graph", yaml: head + "\n    category: A\n    graph: bought\n    features: image\n", want: `j.yaml: line 6: experiments[0].graph: "bought" is not one of also_bought, also_viewed, bought_together, co_review`},
		{name: "features", yaml: head + "\n    category: A\n    graph: also_bought\n    features: text\n", want: `j.yaml: line 7: experiments[0].features: "text" is not one of image, bow, embeddings`},
		{name: "embeddings without a file", yaml: head + "\n    category: A\n    graph: also_bought\n    features: embeddings\n", want: "j.yaml: experiments[0].data.embeddings: required for features: embeddings"},
		{name: "model", yaml: head + exp + "    models: [wnn, mnn]\n", want: `j.yaml: line 8: experiments[0].models[1]: "mnn" is not one of wnn, ct, lmt, monomer, lda`},
		{name: "lda on images", yaml: head + exp + "    models: [lda]\n", want: "j.yaml: line 8: experiments[0].models[0]: lda needs features: bow"},
		{name: "model twice", yaml: head + exp + "    models: [wnn, ct, wnn]\n", want: `j.yaml: line 8: experiments[0].models[2]: "wnn" is listed twice`},
		{name: "experiment setting", yaml: head + exp + "    settings: {vocab_size: -5}\n", want: "j.yaml: line 8: experiments[0].settings.vocab_size: -5 must be positive"},
		{name: "negative gate penalty", yaml: head + exp + "    settings: {gate_penalty: -0.5}\n", want: "j.yaml: line 8: experiments[0].settings.gate_penalty: -0.5 must be finite and non-negative"},
		{name: "infinite gate init", yaml: head + exp + "settings: {gate_init: .inf}\n", want: "j.yaml: line 8: settings.gate_init: +Inf is not a finite number; it must be finite and non-negative"},
		{name: "non-integral int", yaml: head + exp + "settings: {k: 10.5}\n", want: "j.yaml: line 8: settings.k: 10.5 is not an integer"},
		{name: "non-integral experiment int", yaml: head + exp + "    settings:\n      max_iter: 1e-1\n", want: "j.yaml: line 9: experiments[0].settings.max_iter: 1e-1 is not an integer"},
		{name: "empty lambdas", yaml: head + exp + "settings: {lambdas: []}\n", want: "j.yaml: line 8: settings.lambdas: an empty list is not allowed; omit the key to inherit the default"},
		{name: "empty models", yaml: head + exp + "    models: []\n", want: "j.yaml: line 8: experiments[0].models: an empty list is not allowed; omit the key to inherit the default"},
		{name: "huge k", yaml: head + exp + "settings: {k: 100000000}\n", want: "j.yaml: line 8: experiments[0].settings.k: 100000000 is above the image features' dimension, 4096 (lmt projects the features to at most that many dimensions)"},
		{name: "n above dim", yaml: head + exp + "settings: {n: 4097}\n", want: "j.yaml: line 8: experiments[0].settings.n: 4097 is above the image features' dimension, 4096 (monomer projects the features to at most that many dimensions)"},
		{name: "bow k above vocabulary", yaml: head + "\n    category: A\n    graph: also_bought\n    features: bow\n" + "settings: {k: 300, vocab_size: 200}\n", want: "j.yaml: line 8: experiments[0].settings.k: 300 is above vocab_size (the bag-of-words dimension), 200 (lmt projects the features to at most that many dimensions)"},
		{name: "topics above vocabulary", yaml: head + "\n    category: A\n    graph: also_bought\n    features: bow\n" + "settings: {topics: 300, vocab_size: 200}\n", want: "j.yaml: line 8: experiments[0].settings.topics: 300 is above vocab_size, 200 (more topics than words)"},
		{name: "huge vocabulary", yaml: head + exp + "settings: {vocab_size: 2e6}\n", want: "j.yaml: line 8: experiments[0].settings.vocab_size: 2000000 is above the maximum 1000000"},
		{name: "huge valid_every", yaml: head + exp + "settings: {valid_every: 2000000}\n", want: "j.yaml: line 8: experiments[0].settings.valid_every: 2000000 is above the maximum 1000000"},
		{name: "huge depth", yaml: head + exp + "    depth: 1000\n", want: "j.yaml: line 8: experiments[0].depth: 1000 is above the maximum 64"},
		{name: "no meta", yaml: "name: j\nexperiments:\n  - name: e" + exp, want: "j.yaml: experiments[0].data.meta: no metadata file (set data.meta on the job or the experiment)"},
		{name: "no image file", yaml: "name: j\ndata: {meta: m}\nexperiments:\n  - name: e" + exp, want: "j.yaml: experiments[0].data.image_features: required for features: image"},
		{name: "no reviews", yaml: "name: j\ndata: {meta: m}\nexperiments:\n  - name: e\n    category: A\n    graph: also_bought\n    features: bow\n", want: "j.yaml: experiments[0].data.reviews: required for features: bow"},
		{name: "co_review without reviews", yaml: "name: j\ndata: {meta: m, image_features: f}\nexperiments:\n  - name: e\n    category: A\n    graph: co_review\n    features: image\n", want: "j.yaml: experiments[0].data.reviews: required for graph: co_review (the graph is derived from the reviews)"},
		{name: "unknown format", yaml: "name: j\ndata: {meta: m, reviews: r, format: '2018'}\nexperiments:\n  - name: e\n    category: A\n    graph: co_review\n    features: bow\n", want: `j.yaml: line 2: experiments[0].data.format: "2018" is not one of 2023, catalogue (empty: 2014 or 2018)`},
		// Named before the tables it decides, with its line and the one meant.
		{name: "catalog", yaml: "name: j\ndata: {format: catalog, items: i, relations: r}\nexperiments:\n  - name: e\n    category: A\n    graph: bought_with\n    features: embeddings\n    data: {embeddings: v.parquet}\n", want: `j.yaml: line 2: experiments[0].data.format: "catalog" is not one of 2023, catalogue (empty: 2014 or 2018); did you mean catalogue?`},
		{name: "also_bought in 2023", yaml: "name: j\ndata: {meta: m, reviews: r, format: '2023'}\nexperiments:\n  - name: e\n    category: A\n    graph: also_bought\n    features: bow\n", want: "j.yaml: line 6: experiments[0].graph: also_bought does not exist in the 2023 release (data.format: 2023); use co_review"},
		{name: "experiment's format wins", yaml: "name: j\ndata: {meta: m, reviews: r}\nexperiments:\n  - name: e\n    category: A\n    graph: also_viewed\n    features: bow\n    data: {format: '2023'}\n", want: "j.yaml: line 6: experiments[0].graph: also_viewed does not exist in the 2023 release (data.format: 2023); use co_review"},
		{name: "catalogue with meta", yaml: "name: j\ndata: {format: catalogue, meta: m, items: i, relations: r}\nexperiments:\n  - name: e\n    category: A\n    graph: bought_with\n    features: embeddings\n    data: {embeddings: v.parquet}\n", want: "j.yaml: line 8: experiments[0].data: meta and reviews are not read with data.format: catalogue; name its tables in data.items, data.relations and data.text"},
		{name: "catalogue without items", yaml: "name: j\ndata: {format: catalogue, relations: r}\nexperiments:\n  - name: e\n    category: A\n    graph: bought_with\n    features: bow\n", want: "j.yaml: experiments[0].data.items: required with data.format: catalogue"},
		{name: "catalogue without relations", yaml: "name: j\ndata: {format: catalogue, items: i}\nexperiments:\n  - name: e\n    category: A\n    graph: bought_with\n    features: bow\n", want: "j.yaml: experiments[0].data.relations: required with data.format: catalogue (graph: bought_with names one of its relations)"},
		{name: "catalogue without text", yaml: "name: j\ndata: {format: catalogue, items: i, relations: r}\nexperiments:\n  - name: e\n    category: A\n    graph: bought_with\n    features: bow\n", want: "j.yaml: experiments[0].data.text: required for features: bow"},
		{name: "catalogue co_review", yaml: "name: j\ndata: {format: catalogue, items: i, relations: r, text: t}\nexperiments:\n  - name: e\n    category: A\n    graph: co_review\n    features: bow\n", want: "j.yaml: line 6: experiments[0].graph: co_review is derived from the reviewers and times of a review file, which a catalogue's text does not carry; write such pairs into data.relations under another name"},
		{name: "catalogue graph name", yaml: "name: j\ndata: {format: catalogue, items: i, relations: r, text: t}\nexperiments:\n  - name: e\n    category: A\n    graph: bought together\n    features: bow\n", want: `j.yaml: line 6: experiments[0].graph: "bought together" must name a relation of data.relations (letters, digits, '.', '_' or '-')`},
		{name: "catalogue tables without the format", yaml: "name: j\ndata: {meta: m, reviews: r, text: t}\nexperiments:\n  - name: e\n    category: A\n    graph: also_bought\n    features: bow\n", want: `j.yaml: experiments[0].data: items, relations and text are the tables of data.format: catalogue; this experiment's format is ""`},
		{name: "negative window", yaml: head + exp + "settings: {co_review_window: -1}\n", want: "j.yaml: line 8: settings.co_review_window: -1 must be non-negative"},
		{name: "max user items 1", yaml: head + exp + "settings: {co_review_max_user_items: 1}\n", want: "j.yaml: line 8: settings.co_review_max_user_items: 1 must be at least 2 (one item makes no pair; omit the setting for the default, 1000)"},
		// A zero is refused, not read as the default (issue 37).
		{name: "max user items 0", yaml: head + exp + "settings: {co_review_max_user_items: 0}\n", want: "j.yaml: line 8: settings.co_review_max_user_items: 0 must be at least 2 (one item makes no pair; omit the setting for the default, 1000)"},
		{name: "min users 0", yaml: head + exp + "settings: {co_review_min_users: 0}\n", want: "j.yaml: line 8: settings.co_review_min_users: 0 must be at least 1 (an edge needs a user; omit the setting for the default, 2)"},
		{name: "bought_together in 2023", yaml: "name: j\ndata: {meta: m, reviews: r, format: '2023'}\nexperiments:\n  - name: e\n    category: A\n    graph: bought_together\n    features: bow\n", want: "j.yaml: line 6: experiments[0].graph: bought_together is null throughout the 2023 release (data.format: 2023); use co_review"},
		{name: "train_cap leaving a split empty", yaml: head + exp + "settings: {train_cap: 3}\n", want: "j.yaml: line 8: settings.train_cap: 3 must be at least 14 (a smaller cap leaves the validation or test split without a positive and a negative pair)"},
		{name: "huge window", yaml: head + exp + "settings: {co_review_window: 2000000}\n", want: "j.yaml: line 8: experiments[0].settings.co_review_window: 2000000 is above the maximum 1000000"},
	}
	for _, tt := range tests {
		_, err := Parse("/jobs/j.yaml", []byte(tt.yaml))
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		// The file as it was given, not its base name: two jobs of one
		// name in two folders are told apart.
		if !errors.Is(err, ErrConfig) || err.Error() != "invalid job: /jobs/"+tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, err.Error(), "invalid job: /jobs/"+tt.want)
		}
	}
}

func TestResolve(t *testing.T) {
	j, err := Parse("/jobs/demo.yaml", []byte(goodJob))
	must(t, err)
	r := j.Resolve(1)
	if r.Depth.Get() != 2 || r.Seed != 3 || r.Settings.K != 10 || r.Settings.MonomerK != 20 || len(r.Settings.Lambdas) != 2 {
		t.Errorf("resolved %+v", r)
	}
	if r.Data.Meta != "/jobs/data/meta_Demo.json.gz" {
		t.Errorf("meta %s", r.Data.Meta)
	}
	if m := j.Resolve(0); m.Settings.K != 50 || m.Depth.Get() != 1 || strings.Join(m.Models, ",") != "wnn,ct,lmt,monomer" {
		t.Errorf("resolved %+v", m)
	}
}

func TestOverrides(t *testing.T) {
	tests := []struct {
		name  string
		sets  []string
		env   []string
		check func(j *Job) bool
		err   string
	}{
		{name: "seed", sets: []string{"seed=9"}, check: func(j *Job) bool { return j.Seed == 9 }},
		{name: "job setting", sets: []string{"settings.k=70"}, check: func(j *Job) bool { return j.Resolve(0).Settings.K == 70 }},
		{name: "list value", sets: []string{"settings.lambdas=[1e-4, 1e-3]"}, check: func(j *Job) bool { return j.Resolve(0).Settings.Lambdas[1] == 1e-3 }},
		{name: "new section", sets: []string{"experiments.men.v2.settings.n=2"}, check: func(j *Job) bool { return j.Resolve(0).Settings.N == 2 && j.Resolve(1).Settings.N == 4 }},
		{name: "experiment field", sets: []string{"experiments.elect.depth=3"}, check: func(j *Job) bool { return j.Resolve(1).Depth.Get() == 3 }},
		{name: "data", sets: []string{"data_dir=/data", "data.meta=m.gz"}, check: func(j *Job) bool { return j.Resolve(0).Data.Meta == "/data/m.gz" }},
		{name: "string with spaces", sets: []string{"experiments.elect.category=Home & Kitchen > Bath"}, check: func(j *Job) bool { return j.Experiments[1].Category == "Home & Kitchen > Bath" }},
		{name: "flag beats env", env: []string{"MONOMER_SETTINGS__K=1", "MONOMER_SEED=5"}, sets: []string{"settings.k=2"},
			check: func(j *Job) bool { return j.Settings.K == 2 && j.Seed == 5 }},
		{name: "env experiment", env: []string{"MONOMER_EXPERIMENTS__elect__SETTINGS__MONOMER_K=7", "MONOMER_DATA_DIR=/d", "MONOMER_RUN_DIR=/ignored"},
			check: func(j *Job) bool { return j.Resolve(1).Settings.MonomerK == 7 && j.DataDir == "/d" }},
		{name: "unknown key", sets: []string{"settings.kk=1"}, err: `demo.yaml: --set settings.kk=1: unknown key "kk" in settings; did you mean k? (keys: ` + strings.Join(yamlKeys(reflect.TypeFor[Settings]()), ", ") + ")"},
		{name: "unknown top key", sets: []string{"sed=1"}, err: `demo.yaml: --set sed=1: unknown key "sed" in the job; did you mean seed? (keys: name, seed, seeds, data_dir, data, settings, warm_from, vocabulary_from, publish, blas_kernel, experiments)`},
		{name: "unknown experiment", sets: []string{"experiments.women.settings.k=1"}, err: `demo.yaml: --set experiments.women.settings.k=1: no experiment named "women"`},
		{name: "type", sets: []string{"settings.k=many"}, err: `demo.yaml: --set settings.k=many: settings.k: want an integer, got "many"`},
		{name: "env type", env: []string{"MONOMER_SEED=-1"}, err: `demo.yaml: MONOMER_SEED: seed: want an unsigned integer, got "-1"`},
		{name: "validated like the file", sets: []string{"experiments.elect.graph=bought"}, err: `demo.yaml: experiments[1].graph: "bought" is not one of also_bought, also_viewed, bought_together, co_review`},
		{name: "non-integral override", sets: []string{"settings.k=10.5"}, err: "demo.yaml: --set settings.k=10.5: settings.k: 10.5 is not an integer"},
		{name: "empty list override", env: []string{"MONOMER_EXPERIMENTS__elect__SETTINGS__LAMBDAS=[]"}, err: "demo.yaml: MONOMER_EXPERIMENTS__elect__SETTINGS__LAMBDAS: experiments[1].settings.lambdas: an empty list is not allowed; omit the key to inherit the default"},
		{name: "value not a section", sets: []string{"seed.x=1"}, err: "demo.yaml: --set seed.x=1: seed is a value, not a section"},
		{name: "zero depth override", sets: []string{"experiments.elect.depth=0"}, err: "demo.yaml: experiments[1].depth: 0 must be at least 1 (the subcategory is the node that many levels below the category; omit depth for 1)"},
		// publish: is a section that may be absent (a pointer): --set and
		// MONOMER_ variables make it, at job level or an experiment's.
		{name: "publish section", sets: []string{"publish.model=wnn", "publish.k=3"}, check: func(j *Job) bool { return j.Resolve(0).Publish != nil && j.Resolve(0).Publish.K.Get() == 3 }},
		{name: "publish env", env: []string{"MONOMER_PUBLISH__MODEL=wnn", "MONOMER_EXPERIMENTS__elect__PUBLISH__K=4"},
			check: func(j *Job) bool {
				return j.Resolve(1).Publish != nil && j.Resolve(1).Publish.K.Get() == 4 && j.Resolve(0).Publish.K.Get() != 4
			}},
		// warm_from: a run directory relative to the job file, "published"
		// as it is; an experiment's own beats the job's.
		{name: "warm_from", sets: []string{"warm_from=../runs/day1", "experiments.elect.warm_from=published"},
			check: func(j *Job) bool {
				return j.Resolve(0).WarmFrom == filepath.FromSlash("/runs/day1") && j.Resolve(1).WarmFrom == ReservedName
			}},
		{name: "vocabulary_from", sets: []string{"vocabulary_from=/runs/day1"}, check: func(j *Job) bool { return j.Resolve(1).VocabularyFrom == "/runs/day1" }},
		{name: "vocabulary_from not bow", sets: []string{"experiments.men.v2.vocabulary_from=/runs/day1"},
			err: "demo.yaml: experiments[0].vocabulary_from: the experiment's features are image; a fixed vocabulary is for features: bow"},
		{name: "no field", sets: []string{"experiments.elect=1"}, err: "demo.yaml: --set experiments.elect=1: experiments.elect: name a field, e.g. experiments.elect.settings.k"},
	}
	for _, tt := range tests {
		sets, err := ParseSets(tt.sets)
		must(t, err)
		all := append(EnvOverrides(tt.env), sets...)
		j, err := ParseWith(filepath.FromSlash("/jobs/demo.yaml"), []byte(goodJob), all)
		switch {
		case tt.err != "":
			if want := "invalid job: " + filepath.FromSlash("/jobs/") + tt.err; err == nil || err.Error() != want || !errors.Is(err, ErrConfig) {
				t.Errorf("%s:\n got %v\nwant %q", tt.name, err, want)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case !tt.check(j):
			t.Errorf("%s: job %+v", tt.name, j)
		}
	}
	if _, err := ParseSets([]string{"novalue"}); err == nil || !errors.Is(err, ErrUsage) {
		t.Errorf("--set without '=': %v", err)
	}
}

// FuzzParseJob checks that no job file or --set override makes parsing
// panic, and that whatever parses is valid.
func FuzzParseJob(f *testing.F) {
	f.Add(goodJob, "settings.k=5")
	f.Add(goodJob, "experiments.men.v2.depth=2")
	f.Add("name: j\n", "seed=1")
	f.Fuzz(func(t *testing.T, yaml, set string) {
		var sets []Override
		if set != "" {
			var err error
			if sets, err = ParseSets([]string{set}); err != nil {
				return
			}
		}
		j, err := ParseWith("/jobs/f.yaml", []byte(yaml), sets)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error without ErrConfig: %v", err)
			}
			return
		}
		if err := j.Validate(); err != nil {
			t.Fatalf("parsed but invalid: %v", err)
		}
		for i := range j.Experiments {
			j.Resolve(i)
		}
	})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestUnsetIsNotZero: for the Opt settings, an explicit zero or false at
// the experiment level wins over the job's value; an absent or null key
// inherits it.
func TestUnsetIsNotZero(t *testing.T) {
	src := `name: j
data: {meta: m, reviews: r}
settings: {use_summary: true, reject_ratio: 0.2, warm_start: true, vocab_shards: 4}
experiments:
  - {name: zero, category: A, graph: also_bought, features: bow,
     settings: {use_summary: false, reject_ratio: 0, warm_start: false, vocab_shards: 0}}
  - {name: inherit, category: A, graph: also_bought, features: bow}
  - {name: unset, category: A, graph: also_bought, features: bow, settings: {use_summary: ~, reject_ratio: ~}}
`
	j, err := Parse("/jobs/j.yaml", []byte(src))
	must(t, err)
	type got struct {
		summary, warm bool
		reject        float64
		shards        int
	}
	for i, want := range []got{{false, false, 0, 0}, {true, true, 0.2, 4}, {true, true, 0.2, 4}} {
		s := j.Resolve(i).Settings
		if g := (got{s.UseSummary.Get(), s.WarmStart.Get(), s.RejectRatio.Get(), s.VocabShards.Get()}); g != want {
			t.Errorf("%s: got %+v, want %+v", j.Experiments[i].Name, g, want)
		}
	}
	// Overrides say zero the same way; a key set nowhere is the default.
	j, err = ParseWith("/jobs/j.yaml", []byte(src), []Override{
		{Key: "experiments.zero.settings.use_summary", Value: "true", Source: "--set"},
		{Key: "settings.reject_ratio", Value: "0", Source: "--set"},
	})
	must(t, err)
	if s := j.Resolve(0).Settings; !s.UseSummary.Get() || s.RejectRatio.Get() != 0 {
		t.Errorf("override: %+v", s)
	}
	if s := j.Resolve(1).Settings; s.RejectRatio.Get() != 0 || !s.RejectRatio.IsSet() {
		t.Errorf("job-level reject_ratio 0: got %v", s.RejectRatio.Get())
	}
	d := Defaults()
	j, err = Parse("/jobs/j.yaml", []byte("name: j\ndata: {meta: m, image_features: i}\nexperiments: [{name: e, category: A, graph: also_bought, features: image}]\n"))
	must(t, err)
	if s := j.Resolve(0).Settings; s.RejectRatio != d.RejectRatio || s.RejectRatio.Get() != 0.001 || s.UseSummary != Set(false) {
		t.Errorf("defaults: %+v", s)
	}
	// The manifest's config and the cache keys see plain values.
	b, err := json.Marshal(d)
	must(t, err)
	for _, want := range []string{`"RejectRatio":0.001,`, `"UseSummary":false,`, `"VocabShards":0,`, `"WarmStart":false,`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
	if got := fmt.Sprintf("%v %d %5.3f %t", d.UseSummary, d.VocabShards, d.RejectRatio, Set(true)); got != "false 0 0.001 true" {
		t.Errorf("fmt: %q", got)
	}
	var back Settings
	must(t, json.Unmarshal(b, &back))
	if back.RejectRatio != d.RejectRatio || back.UseSummary != d.UseSummary {
		t.Errorf("JSON round trip: %+v", back)
	}
	// Type and shape errors name the field as for plain settings.
	for _, tt := range []struct{ set, want string }{
		{"settings.use_summary=maybe", `invalid job: /jobs/j.yaml: --set settings.use_summary=maybe: settings.use_summary: want true or false, got "maybe"`},
		{"settings.vocab_shards=1.5", "invalid job: /jobs/j.yaml: --set settings.vocab_shards=1.5: settings.vocab_shards: 1.5 is not an integer"},
		{"settings.use_summary.x=1", "invalid job: /jobs/j.yaml: --set settings.use_summary.x=1: settings.use_summary is a value, not a section"},
		{"settings.reject_ratio=2", "invalid job: /jobs/j.yaml: settings.reject_ratio: 2 must be at most 1"},
	} {
		sets, err := ParseSets([]string{tt.set})
		must(t, err)
		if _, err := ParseWith("/jobs/j.yaml", []byte(src), sets); err == nil || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.set, err, tt.want)
		}
	}
}

// TestSettingsJSONWithoutCoReview: the co_review settings and data.format
// stay out of a job's JSON unless set, so adding them left every other job's hash as it
// was; set, even to 0, they are in it.
func TestSettingsJSONWithoutCoReview(t *testing.T) {
	b, err := json.Marshal(Settings{TrainSettings: models.TrainSettings{K: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "CoReview") {
		t.Errorf("unset co_review settings in the JSON: %s", b)
	}
	if b, _ := json.Marshal(Data{}); string(b) != `{"Meta":"","Reviews":"","ImageFeatures":""}` {
		t.Errorf("unset data.format in the JSON: %s", b)
	}
	b, err = json.Marshal(Settings{CoReviewSettings: graph.CoReviewSettings{CoReviewWindow: Set(0), CoReviewMinUsers: Set(2)}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"CoReviewWindow":0`) || !strings.Contains(string(b), `"CoReviewMinUsers":2`) {
		t.Errorf("set co_review settings missing from the JSON: %s", b)
	}
}

// TestEmbeddingsJob: data.embeddings resolves like the other data paths
// (the experiment's over the job's, relative to data_dir) and stays out of
// the job's JSON when unset; an embeddings experiment's dimension is not
// known before the file is read, so k, monomer_k and n are not bounded by
// one.
func TestEmbeddingsJob(t *testing.T) {
	j, err := Parse("/jobs/e.yaml", []byte(`name: e
data_dir: /data
data: {meta: m.jsonl, reviews: r.jsonl, format: "2023", embeddings: all.parquet}
settings: {k: 5000}
experiments:
  - {name: a, category: A, graph: co_review, features: embeddings}
  - {name: b, category: A, graph: co_review, features: embeddings, data: {embeddings: b.npy}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := j.Resolve(0), j.Resolve(1); a.Data.Embeddings != "/data/all.parquet" || b.Data.Embeddings != "/data/b.npy" || a.FeatureDim() != 0 {
		t.Errorf("resolved %q and %q, dimension %d", a.Data.Embeddings, b.Data.Embeddings, a.FeatureDim())
	}
	out, err := json.Marshal(Data{Meta: "m"})
	if err != nil || strings.Contains(string(out), "Embeddings") {
		t.Errorf("unset embeddings in the JSON: %s, %v", out, err)
	}
}

// TestCatalogueJob: a catalogue experiment names any relation as its
// graph and resolves its tables against data_dir; the JSON of the
// resolved data of an Amazon experiment does not change (its fields are
// omitted when empty).
func TestCatalogueJob(t *testing.T) {
	src := "name: shop\ndata_dir: tables\ndata: {format: catalogue, items: items.parquet, relations: pairs.csv.gz, text: text.csv}\n" +
		"experiments:\n  - {name: e, category: Shop > Shoes, graph: returned_together, features: bow}\n"
	j, err := Parse("/jobs/shop.yaml", []byte(src))
	must(t, err)
	r := j.Resolve(0)
	if r.Data.Items != "/jobs/tables/items.parquet" || r.Data.Relations != "/jobs/tables/pairs.csv.gz" || r.Data.Text != "/jobs/tables/text.csv" || r.Graph != "returned_together" {
		t.Errorf("resolved %+v", r.Data)
	}
	j, err = Parse("/jobs/demo.yaml", []byte(goodJob))
	must(t, err)
	b, err := json.Marshal(j.Resolve(0).Data)
	must(t, err)
	if strings.Contains(string(b), "Items") || strings.Contains(string(b), "Relations") || strings.Contains(string(b), "Text") {
		t.Errorf("an Amazon experiment's data has the catalogue's fields: %s", b)
	}
}

// TestMergeKey: YAML's merge key is not an unknown key; what it merges
// is still checked.
func TestMergeKey(t *testing.T) {
	good := "name: j\ndata: {meta: m, image_features: i}\nexperiments:\n  - &e {name: e, category: A, graph: also_bought, features: image}\n  - <<: *e\n    name: f\n"
	j, err := Parse("j.yaml", []byte(good))
	if err != nil || len(j.Experiments) != 2 || j.Experiments[1].Graph != "also_bought" {
		t.Fatalf("merge: %v", err)
	}
	bad := "name: j\nbase: &b {grap: also_bought}\n"
	if _, err := Parse("j.yaml", []byte(bad)); err == nil {
		t.Error("an unknown key accepted")
	}
}

// TestEnvNearMisses: a MONOMER_ variable one slip from a job key or a
// variable monomer reads is named with the name meant; overrides,
// the known variables and others' variables are not.
// The single "_" for a section's "__" (MONOMER_SETTINGS_REJECT_RATIO) was
// not warned of before.
func TestEnvNearMisses(t *testing.T) {
	env := []string{
		"MONOMER_SEDD=3",                          // one substitution from SEED
		"MONOMER_RUNDIR=/tmp/x",                   // RUN_DIR without its underscore
		"MONOMER_SETTING__K=5",                    // SETTINGS without its S
		"MONOMER_DATA_DRI=/d",                     // two letters swapped
		"MONOMER_SEED=2",                          // an override
		"MONOMER_SETTINGS__KK=5",                  // an override (refused when applied)
		"MONOMER_RUN_DIR=/tmp/y",                  // read by the command line
		"MONOMER_DAG_BIN=/usr/bin/x",              // the Airflow DAG's
		"MONOMER_BENCH=1",                         // a benchmark's
		"MONOMER_K=1",                             // too short to be near anything
		"OTHER_SEDD=1",                            // not ours
		"MONOMER_EXPERIMENTS__men__K=1",           // an override
		"MONOMER_SETTINGS_REJECT_RATIO=0",         // "_" for "__"
		"MONOMER_settings_k=5",                    // the same, in lower case
		"MONOMER_DATA_META=m.json",                // a key of data
		"MONOMER_SETTINGS_REJECT_RATOI=0",         // and a slip in the key
		"MONOMER_EXPERIMENTS_men-bought__DEPTH=2", // any experiment name
		"MONOMER_DATA_ROOT=/x",                    // not near a key of data: another program's
		"MONOMER_SETTINGS_=1",                     // one "_" too many
		"monomer_SEED=2",                          // the prefix in lower case
		"Monomer_settings__k=2",                   // and in mixed case
		"MONOMER__SEED=2",                         // one "_" too many after it
		"MONOMER_SETTINGS.K=2",                    // "." for "__"
		"MONOMER_EXPERIMENTS.men.DEPTH=2",         // every "."
		"monomer_dag_bin=1",                       // another program's, in lower case
	}
	got := EnvNearMisses(env, "MONOMER_RUN_DIR", "MONOMER_STORE")
	want := map[string]string{
		"MONOMER_SEDD":       "MONOMER_SEED",
		"MONOMER_RUNDIR":     "MONOMER_RUN_DIR",
		"MONOMER_SETTING__K": "MONOMER_SETTINGS__K",
		"MONOMER_DATA_DRI":   "MONOMER_DATA_DIR",

		"MONOMER_SETTINGS_REJECT_RATIO":         "MONOMER_SETTINGS__REJECT_RATIO",
		"MONOMER_settings_k":                    "MONOMER_SETTINGS__k",
		"MONOMER_DATA_META":                     "MONOMER_DATA__META",
		"MONOMER_SETTINGS_REJECT_RATOI":         "MONOMER_SETTINGS__REJECT_RATOI",
		"MONOMER_EXPERIMENTS_men-bought__DEPTH": "MONOMER_EXPERIMENTS__men-bought__DEPTH",
		"MONOMER_SETTINGS_":                     "MONOMER_SETTINGS",
		"monomer_SEED":                          "MONOMER_SEED",
		"Monomer_settings__k":                   "MONOMER_settings__k",
		"MONOMER__SEED":                         "MONOMER_SEED",
		"MONOMER_SETTINGS.K":                    "MONOMER_SETTINGS__K",
		"MONOMER_EXPERIMENTS.men.DEPTH":         "MONOMER_EXPERIMENTS__men__DEPTH",
	}
	if !maps.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

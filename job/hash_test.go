package job

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// normalHash is the job hash the report shows and keys (stages.jobHash):
// the sha256 of the job's JSON with the file locations left out.
func normalHash(t *testing.T, j *Job) string {
	t.Helper()
	c := *j
	c.DataDir, c.Data, c.Path = "", Data{}, ""
	c.Experiments = slices.Clone(j.Experiments)
	for i := range c.Experiments {
		c.Experiments[i].Data = Data{}
	}
	b, err := json.Marshal(c)
	must(t, err)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// resolvedHash hashes the JSON of every experiment's resolved settings, so
// that a changed default (or a changed field order) shows.
func resolvedHash(t *testing.T, j *Job) string {
	t.Helper()
	h := sha256.New()
	for i := range j.Experiments {
		b, err := json.Marshal(j.Resolve(i).Settings)
		must(t, err)
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// The test jobs of stages (testJob, with its sharded twin as
// TestStageVersions adds it) and of cmd/monomer (cmdJob), as written there.
const (
	stagesTestJob = `
name: stages-test
seed: 7
data_dir: DATA
data:
  meta: meta_Demo.json.gz
  reviews: reviews_Demo.json.gz
  image_features: image_features_Demo.b
settings:
  k: 6
  monomer_k: 2
  n: 2
  topics: 5
  lambdas: [0.0001]
  max_iter: 15
  valid_every: 5
  report_map_items: 150 # small maps: the tests check the report, not t-SNE
experiments:
  - name: men-image
    category: "Clothing, Shoes & Jewelry > Men"
    graph: also_bought
    features: image
    models: [wnn, ct, lmt, monomer]
  - name: women-bow
    category: "Clothing, Shoes & Jewelry > Women"
    graph: also_viewed
    features: bow
    models: [wnn, ct, lda, lmt, monomer]
`
	cmdTestJob = `name: cmdtest
data: {meta: meta.txt, image_features: img.b}
experiments:
  - {name: a, category: "T > A", graph: also_bought, features: image}
  - {name: b, category: "T > B", graph: also_viewed, features: image}
`
	coReviewJob = `name: co
data: {meta: m, reviews: r, format: '2023'}
settings: {co_review_window: 0, co_review_max_user_items: 50, use_summary: true, reject_ratio: 0}
experiments:
  - {name: e, category: A, graph: co_review, features: bow, settings: {co_review_min_users: 3, warm_start: true, vocab_shards: 0}}
`
)

// TestJobHashes pins the job hash (and the resolved settings) of every job
// file shipped in jobs/ and of the tests' jobs, recorded before the
// settings moved into the libraries: moving, embedding or reordering a
// field must not change a hash a report or a cache key holds.
func TestJobHashes(t *testing.T) {
	type pin struct{ job, resolved string }
	want := map[string]pin{
		"cmd":                     {"de0cd12c419a3d3f44551313d2667d8fe928668a19df78034d72c595fdcbef04", "efaa61e4bf1f84f260222249dee72e0055c3df2605c60d0f7f0818f2999e4a88"},
		"co_review":               {"d762098e5eb9f990f30a0f04a35aa27d537a22d8f62ce9612d4fb994fccb8117", "e0156588c06097b05f2c2d42d799dcd5c1b96130e9555bd0b12376797970516f"},
		"demo.yaml":               {"17a67e1dd90f2fc388fc43156c8d59f46196f81c3cae5274e1eddeedcbbfcc56", "15a37aa31cd129ef8268148ca4b4bc6fc99f4cc35e51fb11a51d6e26ec309edb"},
		"goodJob":                 {"9b7ad935f4e78e44bc3bd5e7b8fc441f26fd8772dfb95f11aae5a062a9e27b40", "ce505d5474c2fc16cb77602847fcee4322d4f1d9cd135e5ea3f79ae682d9b281"},
		"paper-table2-image.yaml": {"18781651cf2ccc83ab843ecf4a188e67ff2935a5253f0fd51a502ac60611ae18", "343fe0e589212c40459688b0ca23559ee3d723fe306ea347839a78312870444c"},
		"paper-table4-bow.yaml":   {"ff290268496f833546529b6cea00225413619583e9fe1901d49a9427432d8896", "a1a0b64be39153aefa0a17a83d4aa3aa0c72f776c0da1f87515dd6acf89c29a4"},
		"realdata-2018-bow.yaml":  {"023e3d7a43166b4faca8ddfd5987f9ef54a5533aa81b6f14a0e53db404c4aa2f", "4c01b9aba4991ed040b635b378e60a724d9bb6ebdf2340b2bca293dc869a2063"},
		"scale-women.yaml":        {"516cf6f5de99ba61519d1ba580024c48c65c160a93ab787cc2897cfa30c0e92e", "d68039037fb2d01d8be4d951669442a8c221097f2d19e3d60037642cd8502471"},
		"stages":                  {"f9efa5bd31d7598a66576147d4555fae83e8be7a60d76ebdd82854e2bbd285eb", "01bbcf6b435a29c26a25ca1b6cbfdbce2cec00f14508afa556d8120c9d15b37e"},
		"stages-sharded":          {"59f2d6663c38321249d9e8c29782c4e2856302473660ad6d45c43cb4c161862e", "f02405e777f5b4fa705d7f664799fed0409732952ee0ffc8fcd97b92712a293f"},
		"synthetic-small.yaml":    {"8ea160c3525f3d02e0cf77e0c4762d8967a0b7c2d4b67d3c71e25d407b9f00ca", "bc40aa63582ca1c861d517db642f3cfe0c2198f1ed82a966bb9d1784f368212a"},
	}
	got := map[string]pin{}
	add := func(name string, j *Job) {
		got[name] = pin{normalHash(t, j), resolvedHash(t, j)}
	}
	files, err := filepath.Glob("../jobs/*.yaml")
	must(t, err)
	for _, f := range files {
		j, err := Load(f)
		must(t, err)
		add(filepath.Base(f), j)
	}
	for name, src := range map[string]string{"stages": stagesTestJob, "cmd": cmdTestJob, "goodJob": goodJob, "co_review": coReviewJob} {
		j, err := Parse("/jobs/j.yaml", []byte(strings.ReplaceAll(src, "DATA", "/data")))
		must(t, err)
		add(name, j)
		if name == "stages" {
			sharded := j.Experiments[1]
			sharded.Name += "-sharded"
			sharded.Settings.VocabShards = Set(2)
			j.Experiments = append(j.Experiments, sharded)
			add("stages-sharded", j)
		}
	}
	for name, g := range got {
		if w, ok := want[name]; !ok || w != g {
			t.Errorf("%s: hashes %+v, want %+v", name, g, w)
		}
	}
}

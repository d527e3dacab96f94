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

// resolvedHash hashes the JSON of every experiment's resolved settings,
// so that a changed default shows; the settings that existed when the
// hashes were recorded, so that a new one changes no hash.
func resolvedHash(t *testing.T, j *Job) string {
	t.Helper()
	h := sha256.New()
	for i := range j.Experiments {
		b, err := json.Marshal(j.Resolve(i).Settings)
		must(t, err)
		var all map[string]json.RawMessage
		must(t, json.Unmarshal(b, &all))
		pinned := map[string]json.RawMessage{}
		for _, k := range pinnedSettings {
			v, ok := all[k]
			if !ok {
				t.Fatalf("setting %s is gone", k)
			}
			pinned[k] = v
		}
		b, err = json.Marshal(pinned)
		must(t, err)
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// pinnedSettings are the settings the resolved hashes cover.
var pinnedSettings = strings.Fields(`RejectRatio ImageScale VocabSize UseSummary
	VocabSampleTokens VocabShards Negatives SwapsPerEdge TrainCap K MonomerK N
	GatePenalty GateInit Topics LDAPasses Lambdas MaxIter ValidEvery CTTop
	Patience WarmStart CoReviewWindow CoReviewMinUsers CoReviewMaxUserItems
	RecommendQueries RecommendK ReportMapItems`)

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
// file shipped in jobs/ and of the tests' jobs (a new job file gets its pin
// when it is added), recorded before the
// settings moved into the libraries (the resolved hashes recomputed on that
// code when they came to cover only the settings of then): moving, embedding or reordering a
// field must not change a hash a report or a cache key holds.
func TestJobHashes(t *testing.T) {
	type pin struct{ job, resolved string }
	want := map[string]pin{
		"catalogue-demo.yaml":           {"93526611b28b80ac85be4ec350a6c0b9a4ca99ecd843adde07369cb9659fb2c0", "affaf7d3154213d22a80f1d235b7fb801263d4ff35da8ffa04d93176d16c4833"},
		"cmd":                           {"de0cd12c419a3d3f44551313d2667d8fe928668a19df78034d72c595fdcbef04", "0fab379578eb97d205ce4bc0287c56bdc246a2f44150f915a66ea2d19b6e4d8a"},
		"co_review":                     {"d762098e5eb9f990f30a0f04a35aa27d537a22d8f62ce9612d4fb994fccb8117", "1c143a6c71cd5ef369026f16a0221619dd3f8537171dc97dcad25d97ae7a7b42"},
		"demo.yaml":                     {"17a67e1dd90f2fc388fc43156c8d59f46196f81c3cae5274e1eddeedcbbfcc56", "affaf7d3154213d22a80f1d235b7fb801263d4ff35da8ffa04d93176d16c4833"},
		"elect-bow-one-lambda.yaml":     {"f42da2e1200cd2b3f3ca0f9679f99044396c318eabcfd25602f67577009a859c", "baba6d24e6899ae339ee0e2183fa610d6274c54920cf5d86c39021652ab84a0b"},
		"goodJob":                       {"9b7ad935f4e78e44bc3bd5e7b8fc441f26fd8772dfb95f11aae5a062a9e27b40", "79280bd97fa0db01c6be3471450ba7e82d05b220cb187092ad4feb1b88dacc38"},
		"nightly-elect.yaml":            {"b4be8888a4d5fc4473f0a3dc32b513dab09f19f1bc53663a8af295bbe3fe94a7", "baba6d24e6899ae339ee0e2183fa610d6274c54920cf5d86c39021652ab84a0b"},
		"nightly-medium.yaml":           {"8f161519bb721fd8c8e6b6c5e0dd9135b95fde71f242c3407cc604fab2fd6c18", "2326d649a420ef1858f9cafdcf443d94eb40b0a6911a87fb12e7ac505c64e798"},
		"paper-table2-image.yaml":       {"210e1ada8e1497654544a6363b474faa9a19865f3bc28e5702c0564f9f868cc4", "8e2555d14105191f0a182b4b03483c479c63f50cb4ac22bf55fa044a63b8e0a2"},
		"paper-table4-bow.yaml":         {"7dc56b3439475a244532df247bbfb3b27259624aa0dc706b64c8251595900058", "235f4cb0d1b19b9a287f09c375b257db414c76cc6689bfa624c93df9260862b0"},
		"paper-table4-electronics.yaml": {"01507161c64aa819242b981d8a86167afd414374b6e0fed05b43f939c8e67d08", "a06410f9f467eb1890dc8b3a979f2ce2769e7c570d27f79f2ed66f4e124ba8a5"},
		"realdata-2018-bow.yaml":        {"023e3d7a43166b4faca8ddfd5987f9ef54a5533aa81b6f14a0e53db404c4aa2f", "798610aa11089ba96bb26f66afb9f1e33f4a824d4c1106c7f01ccc23b4cd4745"},
		"scale-women.yaml":              {"516cf6f5de99ba61519d1ba580024c48c65c160a93ab787cc2897cfa30c0e92e", "630b2a3844a7238fcf335c8923713faee813b01fce4e27513ec59e1c99678627"},
		"stages":                        {"f9efa5bd31d7598a66576147d4555fae83e8be7a60d76ebdd82854e2bbd285eb", "417491104a3514a69805bbfce6c057d2ecffefdb2cdb2c6552786e410e686378"},
		"stages-sharded":                {"59f2d6663c38321249d9e8c29782c4e2856302473660ad6d45c43cb4c161862e", "857e930d1eaee9b1041ad4998934eb01edb7f47f538e172bb2ab02cd45a5fec3"},
		"synthetic-2023.yaml":           {"f3b0dce89327d2a47ec7fa9646145f5d9bb669bcc8f6dba5c0a1dbd3cbd7fefa", "5aa4d828d70d6d330c0ecd6701be6a83ed6d8bed58efdce7d9ae18f784bc8728"},
		"synthetic-small.yaml":          {"8ea160c3525f3d02e0cf77e0c4762d8967a0b7c2d4b67d3c71e25d407b9f00ca", "9ce974dcf060f41b849d3fafa13678796c47aea7d44a4f25e27403f499a0a1e4"},
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

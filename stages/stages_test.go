package stages

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"monomer/amazon"
	"monomer/imagefeat"
	"monomer/job"
	"monomer/pipeline"
	"monomer/schema"
)

// testJob is the demo job on the committed tiny data with a short training
// budget, so the whole pipeline runs in seconds.
const testJob = `
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

func loadTestJob(t *testing.T) *job.Job {
	t.Helper()
	data, err := filepath.Abs(testData)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(data, "meta_Demo.json.gz")); err != nil {
		t.Fatalf("the committed tiny data set is missing (make testdata): %v", err)
	}
	j, err := job.Parse(filepath.Join(t.TempDir(), "job.yaml"), []byte(strings.ReplaceAll(testJob, "DATA", data)))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// runID is the run ID runJob gives a run in dir: distinct directories
// get distinct IDs, which must not reach any output but the manifests.
func runID(dir string) string { return "test-" + filepath.Base(dir) }

func runJob(t *testing.T, j *job.Job, dir string) {
	t.Helper()
	if _, err := runStages(context.Background(), j, Experiment(), Job(), pipeline.Options{RunDir: dir, RunID: runID(dir)}); err != nil {
		t.Fatal(err)
	}
}

// parquetFiles maps every Parquet file under dir (relative path) to its bytes.
func parquetFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") && !strings.HasSuffix(p, ".arrow") {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameReport fails unless the report's pictures and page in run directory
// b (run at GOMAXPROCS procs) are a's (GOMAXPROCS 1).
func sameReport(t *testing.T, a, b string, procs int) {
	t.Helper()
	files := must(filepath.Glob(filepath.Join(a, "report", "*.png")))(t)
	for _, f := range append(files, filepath.Join(a, "report", "index.html")) {
		x, err1 := os.ReadFile(f)
		y, err2 := os.ReadFile(filepath.Join(b, "report", filepath.Base(f)))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Errorf("report/%s differs between GOMAXPROCS 1 and %d (%v, %v)", filepath.Base(f), procs, err1, err2)
		}
	}
}

// TestPipelineDeterministic runs the whole pipeline at GOMAXPROCS 1, 2, 3, 7
// and 16 (odd counts catch a split that assumes an even one): every table
// must come out byte-identical.
func TestPipelineDeterministic(t *testing.T) {
	job := loadTestJob(t)
	procs := []int{1, 2, 3, 7, 16}
	dirs := make([]string, len(procs))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for i, p := range procs {
		dirs[i] = t.TempDir()
		runtime.GOMAXPROCS(p)
		runJob(t, job, dirs[i])
	}
	a := parquetFiles(t, dirs[0])
	if len(a) < 20 {
		t.Fatalf("%d tables", len(a))
	}
	for i, dir := range dirs[1:] {
		b := parquetFiles(t, dir)
		if len(a) != len(b) {
			t.Fatalf("%d and %d tables at GOMAXPROCS 1 and %d", len(a), len(b), procs[i+1])
		}
		for name, x := range a {
			if !bytes.Equal(x, b[name]) {
				t.Errorf("%s differs between GOMAXPROCS 1 and %d", name, procs[i+1])
			}
		}
	}
	checkDeclared(t, dirs[0])
	checkIngest(t, job, dirs[0])
	checkNegativesAndSplit(t, dirs[0])
	checkEvaluate(t, job, dirs[0])
	checkRecommend(t, job, dirs[0])
	checkReport(t, [2]string{dirs[0], dirs[1]})
	for i, dir := range dirs[2:] {
		sameReport(t, dirs[0], dir, procs[i+2])
	}
	checkEveryModel(t, job, dirs[0])
}

func open(t *testing.T, path string) *schema.Table {
	t.Helper()
	tb, err := schema.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Release)
	return tb
}

func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// checkIngest recomputes each experiment's items and edges from the raw
// files with ingest's rules, written out again here, and compares them to
// the tables.
func checkIngest(t *testing.T, j *job.Job, dir string) {
	for i := range j.Experiments {
		e := j.Resolve(i)
		prefix := amazon.CategoryPrefix(e.Category)
		reviews := map[string]int32{}
		for r, err := range amazon.Reviews(e.Data.Reviews, nil, nil) {
			must(0, err)(t)
			reviews[r.ASIN]++
		}
		type raw struct {
			sub     string
			related []string
		}
		valid := map[string]raw{}
		must(amazon.ReadMeta(context.Background(), e.Data.Meta, func(p *amazon.Product) error {
			for _, path := range p.Categories {
				if len(path) < len(prefix) || !slices.Equal(path[:len(prefix)], prefix) {
					continue
				}
				if len(path) > len(prefix) && (e.Features != "bow" || reviews[p.ASIN] > 0) {
					valid[p.ASIN] = raw{path[len(prefix)], slices.Clone(p.Related(e.Graph))}
				}
				break
			}
			return nil
		}, func(amazon.Reject) {}))(t)
		if e.Features == "image" {
			img := map[string]bool{}
			asins := must(imagefeat.ScanASINs(context.Background(), e.Data.ImageFeatures))(t)
			for _, a := range asins {
				img[a] = true
			}
			for a := range valid {
				if !img[a] {
					delete(valid, a)
				}
			}
		}

		items := open(t, filepath.Join(dir, e.Name, "ingest", "items.parquet"))
		asins := must(items.Strings("asin"))(t)
		subs := must(items.Strings("subcategory"))(t)
		nrev := must(items.Int32s("n_reviews"))(t)
		if !slices.IsSorted(asins) || len(slices.Compact(slices.Clone(asins))) != len(asins) {
			t.Errorf("%s: items not sorted and unique by asin", e.Name)
		}
		if len(asins) != len(valid) {
			t.Errorf("%s: %d items, the raw files give %d", e.Name, len(asins), len(valid))
		}
		index := map[string]int{}
		for k, a := range asins {
			index[a] = k
			if r, ok := valid[a]; !ok || r.sub != subs[k] {
				t.Errorf("%s: item %s subcategory %q, raw %q (valid %v)", e.Name, a, subs[k], r.sub, ok)
			}
			if nrev[k] != reviews[a] {
				t.Errorf("%s: item %s n_reviews %d, raw %d", e.Name, a, nrev[k], reviews[a])
			}
		}

		// Edges: both ends valid, different subcategories, no self loops, no
		// duplicates, sorted, and nothing that the rules keep is missing.
		want := map[[2]string]bool{}
		for a, r := range valid {
			for _, b := range r.related {
				if rb, ok := valid[b]; ok && a != b && rb.sub != r.sub {
					want[[2]string{a, b}] = true
				}
			}
		}
		edges := open(t, filepath.Join(dir, e.Name, "ingest", "edges.parquet"))
		src := must(edges.Strings("src"))(t)
		dst := must(edges.Strings("dst"))(t)
		si := must(edges.Int32s("src_idx"))(t)
		di := must(edges.Int32s("dst_idx"))(t)
		if len(src) != len(want) {
			t.Errorf("%s: %d edges, the rules keep %d", e.Name, len(src), len(want))
		}
		for k := range src {
			if !want[[2]string{src[k], dst[k]}] {
				t.Errorf("%s: edge %s -> %s breaks a rule", e.Name, src[k], dst[k])
			}
			if asins[si[k]] != src[k] || asins[di[k]] != dst[k] {
				t.Errorf("%s: edge %d indices disagree with asins", e.Name, k)
			}
			if k > 0 && (si[k-1] > si[k] || si[k-1] == si[k] && di[k-1] >= di[k]) {
				t.Errorf("%s: edges not sorted or duplicated at row %d", e.Name, k)
			}
		}
		if len(src) == 0 {
			t.Errorf("%s: no edges", e.Name)
		}
	}
}

func checkNegativesAndSplit(t *testing.T, dir string) {
	for _, exp := range []string{"men-image", "women-bow"} {
		pos := must(readEdges(context.Background(), runInputs(dir, exp), "negatives", "positives.parquet"))(t)
		neg := must(readEdges(context.Background(), runInputs(dir, exp), "negatives", "negatives.parquet"))(t)
		it := must(readItems(t.Context(), runInputs(dir, exp)))(t)
		inPos := map[[2]int32]bool{}
		outDeg, inDeg := map[int32]int{}, map[int32]int{}
		for _, e := range pos {
			inPos[[2]int32{e.Src, e.Dst}] = true
			outDeg[e.Src]++
			inDeg[e.Dst]++
		}
		for _, e := range neg {
			if inPos[[2]int32{e.Src, e.Dst}] || e.Src == e.Dst || it.sub[e.Src] == it.sub[e.Dst] {
				t.Errorf("%s: bad negative %v", exp, e)
			}
			outDeg[e.Src]--
			inDeg[e.Dst]--
		}
		for i, d := range outDeg {
			if d != 0 || inDeg[i] != 0 {
				t.Errorf("%s: item %d degree changed by rewiring (out %d, in %d)", exp, i, d, inDeg[i])
				break
			}
		}
		pairs := must(readPairs(context.Background(), runInputs(dir, exp)))(t)
		if len(pairs) != len(pos)+len(neg) {
			t.Errorf("%s: %d pairs from %d + %d", exp, len(pairs), len(pos), len(neg))
		}
		var count [3]int
		for _, p := range pairs {
			count[p.Split]++
		}
		if n := float64(len(pairs)); math.Abs(float64(count[0])/n-0.8) > 0.01 || math.Abs(float64(count[1])/n-0.1) > 0.01 {
			t.Errorf("%s: split sizes %v", exp, count)
		}
	}
}

func checkEvaluate(t *testing.T, j *job.Job, dir string) {
	for i := range j.Experiments {
		e := j.Resolve(i)
		pairs := must(readPairs(context.Background(), runInputs(dir, e.Name)))(t)
		var scored int
		for _, p := range pairs {
			if p.Split != 0 {
				scored++
			}
		}
		pr := open(t, filepath.Join(dir, e.Name, "evaluate", "predictions.parquet"))
		if pr.Rows() != scored*len(e.Models) {
			t.Errorf("%s: %d predictions, want %d pairs x %d models", e.Name, pr.Rows(), scored, len(e.Models))
		}
		prob := must(pr.Float64s("probability"))(t)
		pred := must(pr.Int8s("predicted"))(t)
		for k, p := range prob {
			if !(p >= 0 && p <= 1) || (pred[k] == 1) != (p > 0.5) {
				t.Fatalf("%s: prediction %d: probability %v predicted %d", e.Name, k, p, pred[k])
			}
		}
		m := open(t, filepath.Join(dir, e.Name, "evaluate", "metrics.parquet"))
		models := must(m.Strings("model"))(t)
		splits := must(m.Strings("split"))(t)
		sel := must(m.Bools("selected"))(t)
		errs := must(m.Float64s("error"))(t)
		got := map[string]int{}
		for k := range models {
			if sel[k] {
				got[models[k]]++
				if !(errs[k] >= 0 && errs[k] <= 1) {
					t.Errorf("%s: %s %s error %v", e.Name, models[k], splits[k], errs[k])
				}
			}
		}
		for _, model := range e.Models {
			if got[model] != 3 {
				t.Errorf("%s: %d selected metric rows for %s, want 3 (train, valid, test)", e.Name, got[model], model)
			}
		}
		checkMetricsOfPredictions(t, e.Name, pr, m)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report", "tables.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| men-image | Men | also_bought |", "| women-bow | Women | also_viewed |", "## Chosen λ and test AUC", "| men-image | Men | LMT | 0.0001 |", "(56)"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("tables.md lacks %q:\n%s", want, md)
		}
	}
}

// checkMetricsOfPredictions recomputes each selected valid and test
// metric row's error rate and AUC from the predictions table by counting
// its mistakes and comparing every related pair with every unrelated one
// (closer wins, equal distances half), independently of models.AUC.
func checkMetricsOfPredictions(t *testing.T, exp string, pr, m *schema.Table) {
	t.Helper()
	pModel, pSplit := must(pr.Strings("model"))(t), must(pr.Strings("split"))(t)
	label, pred := must(pr.Int8s("label"))(t), must(pr.Int8s("predicted"))(t)
	dist := must(pr.Float64s("distance"))(t)
	mModel, mSplit, sel := must(m.Strings("model"))(t), must(m.Strings("split"))(t), must(m.Bools("selected"))(t)
	errs, auc := must(m.Float64s("error"))(t), must(m.Float64s("auc"))(t)
	for r := range mModel {
		if !sel[r] || mSplit[r] == "train" {
			continue
		}
		var pos, neg []float64
		wrong := 0
		for k := range pModel {
			if pModel[k] != mModel[r] || pSplit[k] != mSplit[r] {
				continue
			}
			if pred[k] != label[k] {
				wrong++
			}
			if label[k] == 1 {
				pos = append(pos, dist[k])
			} else {
				neg = append(neg, dist[k])
			}
		}
		var won float64
		for _, p := range pos {
			for _, q := range neg {
				switch {
				case p < q:
					won++
				case p == q:
					won += 0.5
				}
			}
		}
		n := float64(len(pos) + len(neg))
		wantErr, wantAUC := float64(wrong)/n, won/float64(len(pos)*len(neg))
		if math.Abs(errs[r]-wantErr) > 1e-12 || math.Abs(auc[r]-wantAUC) > 1e-12 {
			t.Errorf("%s %s %s: metrics say error %v AUC %v, its %d predictions give %v %v",
				exp, mModel[r], mSplit[r], errs[r], auc[r], int(n), wantErr, wantAUC)
		}
	}
}

// testData is the committed tiny data set.
var testData = "../testdata/amazon"

// TestBowShards: with vocab_shards 3 the DAG counts text in three
// bow-shard nodes, run by the runner; run one at a time (as separate tasks
// would, or a run killed after one) and then the rest, the merged
// vocabulary and vectors are byte-identical to one process's. A shard of
// another code version is not reused.
func TestBowShards(t *testing.T) {
	j := loadTestJob(t)
	j.Experiments = j.Experiments[1:] // women-bow
	one, sharded := t.TempDir(), t.TempDir()
	run := func(dir, only string, stages []Stage) *pipeline.Summary {
		t.Helper()
		var jobSt []Stage
		if len(stages) == len(Experiment()) {
			jobSt = Job()
		}
		sum, err := runStages(context.Background(), j, stages, jobSt, pipeline.Options{RunDir: dir, Only: only})
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	run(one, "ingest", Experiment())
	run(one, "features", Experiment())
	j.Experiments[0].Settings.VocabShards = job.Set(3)
	e := j.Resolve(0)
	run(sharded, "ingest", Experiment())
	if _, err := runStages(context.Background(), j, Experiment(), Job(), pipeline.Options{RunDir: sharded, Only: "features"}); err == nil ||
		!strings.Contains(err.Error(), "women-bow/features needs the outputs of women-bow/bow-shard-0-of-3, which has not run") {
		t.Fatalf("features without shards: err = %v", err)
	}
	if s := run(sharded, "bow-shard-1-of-3", Experiment()); s.Run != 1 {
		t.Fatalf("one shard: %+v", s)
	}
	if s := run(sharded, "", Experiment()[:3]); s.Run != 3 { // the other two shards, then features
		t.Fatalf("the rest: %+v", s)
	}
	for _, table := range []string{"vocabulary.parquet", "bow.parquet", "feature_items.parquet"} {
		a, err1 := os.ReadFile(filepath.Join(one, e.Name, "features", table))
		b, err2 := os.ReadFile(filepath.Join(sharded, e.Name, "features", table))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: sharded differs from one process (%v, %v)", table, err1, err2)
		}
	}
	if _, err := os.Stat(filepath.Join(sharded, e.Name, "bow-shard-2-of-3", "counts.parquet")); err != nil {
		t.Error(err)
	}

	// Another code version of the shards: every shard is stale and reruns.
	stages := Experiment()
	stages[1] = Sharded[bowShardParams](otherVersion{BowShard{}})
	steps, err := planStages(j, stages[:3], nil, pipeline.Options{RunDir: sharded})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if st.Stage == "bow-shard" && (st.State != pipeline.Stale || !strings.HasPrefix(st.Why, `stale: code version changed ("v`+BowShard{}.Version()+`" -> "v9.9.9")`)) {
			t.Errorf("%s: %s %s", st.ID, st.State, st.Why)
		}
	}
	if s := run(sharded, "bow-shard", stages); s.Run != 3 {
		t.Errorf("shards of another version: %+v", s)
	}
}

type otherVersion struct{ BowShard }

func (otherVersion) Version() string { return "9.9.9" }

// Over the reject threshold ingest fails with ErrBadInput and leaves every
// reject in a table beside the stage directory; under it, the rejects are
// the stage's rejects table.
func TestIngestRejects(t *testing.T) {
	data := t.TempDir()
	meta := "{'asin': 'B000000001', 'title': 'Shirt', 'categories': [['Clothing, Shoes & Jewelry', 'Men', 'Shirts']], 'related': {'also_bought': ['B000000002']}}\n" +
		"{'asin': 'B000000002', 'title': 'Shoe', 'categories': [['Clothing, Shoes & Jewelry', 'Men', 'Shoes']]}\n" +
		"{'asin': 'B000000003', 'title': 'unterminated}\n"
	reviews := `{"asin": "B000000001", "reviewText": "Soft cotton shirt.", "overall": 5}` + "\n" +
		`{"asin": "B000000002", "reviewText": "Warm leather shoe.", "overall": 4}` + "\n"
	if err := os.WriteFile(filepath.Join(data, "meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "reviews.json"), []byte(reviews), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		ratio   string
		wantErr bool
	}{{"over", "0.1", true}, {"under", "0.5", false}} {
		t.Run(tc.name, func(t *testing.T) {
			src := "name: rejects\ndata: {meta: meta.json, reviews: reviews.json}\nsettings: {reject_ratio: " + tc.ratio + "}\n" +
				"experiments:\n  - {name: men, category: \"Clothing, Shoes & Jewelry > Men\", graph: also_bought, features: bow}\n"
			j, err := job.Parse(filepath.Join(data, "job.yaml"), []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			_, err = runStages(context.Background(), j, Experiment(), Job(), pipeline.Options{RunDir: dir, Only: "ingest"})
			failed := filepath.Join(dir, "men", "ingest.failed.rejects.parquet")
			path := filepath.Join(dir, "men", "ingest", "rejects.parquet")
			if tc.wantErr {
				if !errors.Is(err, pipeline.ErrBadInput) || !strings.Contains(err.Error(), "meta.json: 1 of 3 lines rejected (over reject_ratio 0.1); first: line 3 (byte ") ||
					!strings.Contains(err.Error(), failed) {
					t.Fatalf("err = %v", err)
				}
				path = failed
			} else if err != nil {
				t.Fatal(err)
			}
			tb := open(t, path)
			lines := must(tb.Int64s("line"))(t)
			files := must(tb.Strings("file"))(t)
			if len(lines) != 1 || lines[0] != 3 || files[0] != "meta.json" {
				t.Fatalf("rejects %v %v", files, lines)
			}
		})
	}
}

package stages

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"monomer/bow"
	"monomer/job"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// scoreJob is one bag-of-words experiment of the committed tiny data with
// a publish: block.
const scoreJob = `
name: score-test
seed: 3
data_dir: DATA
data:
  meta: meta_Demo.json.gz
  reviews: reviews_Demo.json.gz
settings:
  k: 6
  monomer_k: 2
  n: 2
  lambdas: [0.0001]
  max_iter: 10
  valid_every: 5
  recommend_k: 5
  report_map_items: 100
publish:
  model: monomer
  k: 7
  exclude: EXCLUDE
experiments:
  - name: men-bow
    category: "Clothing, Shoes & Jewelry > Men"
    graph: also_bought
    features: bow
    models: [wnn, lmt, monomer]
`

// scoreTestRun runs scoreJob into a temporary directory.
func scoreTestRun(t *testing.T) string {
	t.Helper()
	data, err := filepath.Abs(testData)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The publish: block excludes a few Men items (the last of the
	// metadata, none an original of newItemFiles), so that score applies,
	// and an export carries, an exclude table.
	ex := "id\n"
	lines := gzLines(t, filepath.Join(data, "meta_Demo.json.gz"))
	for i, n := len(lines)-1, 0; i >= 0 && n < 10; i-- {
		if _, a, ok := strings.Cut(lines[i], "'asin': '"); ok && strings.Contains(lines[i], "'Men'") {
			ex += a[:strings.IndexByte(a, '\'')] + "\n"
			n++
		}
	}
	exclude := filepath.Join(dir, "exclude.csv")
	if err := os.WriteFile(exclude, []byte(ex), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(strings.NewReplacer("DATA", data, "EXCLUDE", exclude).Replace(scoreJob)))
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	if _, err := runStages(t.Context(), j, Experiment(), Job(), pipeline.Options{RunDir: run, RunID: "score-test"}); err != nil {
		t.Fatal(err)
	}
	return run
}

// TestScore shares one small run between its cases.
func TestScore(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a small run")
	}
	run := scoreTestRun(t)
	t.Run("in_run_items", func(t *testing.T) { scoreInRunItems(t, run) })
	t.Run("new_items", func(t *testing.T) { scoreNewItems(t, run) })
	t.Run("version_check", func(t *testing.T) { scoreVersionCheck(t, run) })
	t.Run("model_dir", func(t *testing.T) { scoreModelDir(t, run) })
	t.Run("refusals", func(t *testing.T) { scoreRefusals(t, run) })
	t.Run("export_run_id", func(t *testing.T) { exportRunID(t, run) })
}

// exportRunID: model.json's run_id is the run exported, the last to leave
// the experiment's outputs as they are (its run log), and trained_in_run
// the run that trained the fit: after a later run of the directory found
// train up to date, the two differ.
func exportRunID(t *testing.T, run string) {
	read := func(ex string) ExportModel {
		var m ExportModel
		if err := json.Unmarshal(must(os.ReadFile(filepath.Join(ex, ExportModelFile)))(t), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	ex := filepath.Join(t.TempDir(), "ex")
	must(Export(t.Context(), ExportOptions{RunDir: run, Experiment: "men-bow", Model: "monomer", Out: ex}))(t)
	if m := read(ex); m.RunID != "score-test" || m.TrainedInRun != "score-test" {
		t.Errorf("export of the run that trained: run_id %q, trained_in_run %q, want score-test for both", m.RunID, m.TrainedInRun)
	}
	// A later run of the directory, every stage up to date (its end record).
	later := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(later, os.DirFS(run)); err != nil {
		t.Fatal(err)
	}
	rec := must(json.Marshal(pipeline.RunRecord{Event: "end", RunID: "later", Job: "score",
		Stages: &pipeline.Stages{Skipped: []string{"men-bow/ingest", "men-bow/train.monomer"}}}))(t)
	f := must(os.OpenFile(filepath.Join(later, pipeline.RunLogName), os.O_WRONLY|os.O_APPEND, 0))(t)
	if _, err := f.Write(append(rec, '\n')); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ex = filepath.Join(t.TempDir(), "ex")
	must(Export(t.Context(), ExportOptions{RunDir: later, Experiment: "men-bow", Model: "monomer", Out: ex}))(t)
	if m := read(ex); m.RunID != "later" || m.TrainedInRun != "score-test" {
		t.Errorf("export after a later run: run_id %q, trained_in_run %q, want later and score-test", m.RunID, m.TrainedInRun)
	}
}

// scoreRefusals: score and export refuse, with one usage line (exit 2)
// and nothing written, an --out in the run they read (by any spelling,
// or through a symlink), a --k beside a publish: block or out of bounds;
// and a full --out names the command refusing it.
func scoreRefusals(t *testing.T, run string) {
	data := must(filepath.Abs(testData))(t)
	before := treeSum(t, run)
	link := filepath.Join(t.TempDir(), "run-link")
	if err := os.Symlink(run, link); err != nil {
		t.Fatal(err)
	}
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(t.TempDir(), "out")
	score := func(out string, k int) error {
		_, err := Score(t.Context(), ScoreOptions{RunDir: run, Experiment: "men-bow", K: k,
			Items: filepath.Join(data, "meta_Demo.json.gz"), Text: filepath.Join(data, "reviews_Demo.json.gz"), Out: out})
		return err
	}
	export := func(out string, _ int) error {
		_, err := Export(t.Context(), ExportOptions{RunDir: run, Experiment: "men-bow", Model: "monomer", Out: out})
		return err
	}
	for _, tc := range []struct {
		name string
		cmd  func(string, int) error
		out  string
		k    int
		want string
	}{
		{"score into the run", score, run, 0, "--out " + run + " is " + run + ", which score only reads"},
		{"score into the run/", score, run + "/", 0, "which score only reads"},
		{"score under the run", score, filepath.Join(run, "men-bow", "scored"), 0, "is inside " + run + ", which score only reads"},
		{"score under the run by ..", score, filepath.Join(run, "x", "..", "new"), 0, "which score only reads"},
		{"score through a symlink", score, filepath.Join(link, "scored"), 0, "which score only reads"},
		{"export into the run", export, filepath.Join(run, "exported"), 0, "which export only reads"},
		{"export through a symlink", export, filepath.Join(link, "men-bow"), 0, "which export only reads"},
		{"score into a full directory", score, full, 0, "is not empty: score writes a new directory"},
		{"export into a full directory", export, full, 0, "is not empty: export writes a new directory"},
		{"--k beside publish:", score, fresh, 5, "has a publish: block, whose k (7) the lists follow"},
		{"--k above the cap", score, fresh, 1001, "--k 1001: a list length from 1 to 1000"},
		{"--k negative", score, fresh, -1, "--k -1: a list length"},
	} {
		err := tc.cmd(tc.out, tc.k)
		if !errors.Is(err, pipeline.ErrUsage) || !strings.Contains(fmt.Sprint(err), tc.want) || strings.Contains(fmt.Sprint(err), "\n") {
			t.Errorf("%s: %v, want a usage error with %q", tc.name, err, tc.want)
		}
	}
	if _, err := os.Stat(fresh); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused score made --out: %v", err)
	}
	if treeSum(t, run) != before {
		t.Errorf("a refused command changed the run")
	}
}

// treeSum is a digest of every path, mode and byte under dir.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h.Write([]byte(p + "\x00" + fi.Mode().String() + "\x00"))
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			h.Write([]byte(l))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// scoreInRunItems scores the run's own input files as new items:
// every item of the run with features gets its list again, byte for byte
// the run's publish table (the featurisation, projection and rules are
// the run's code), the Women's items and those without a usable text are
// rejects with their reasons, and the run directory is not touched.
func scoreInRunItems(t *testing.T, run string) {
	before := treeSum(t, run)
	out := filepath.Join(t.TempDir(), "scored")
	data, _ := filepath.Abs(testData)
	sum, err := Score(t.Context(), ScoreOptions{RunDir: run, Experiment: "men-bow",
		Items: filepath.Join(data, "meta_Demo.json.gz"), Text: filepath.Join(data, "reviews_Demo.json.gz"), Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if after := treeSum(t, run); after != before {
		t.Fatal("score changed the run directory")
	}
	want, err := os.ReadFile(filepath.Join(run, "men-bow", "publish", publishedFile))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, publishedFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("score's recommendations.parquet (%d bytes) differs from the run's publish table (%d bytes)", len(got), len(want))
	}
	feat := open(t, filepath.Join(run, "men-bow", "features", "feature_items.parquet"))
	if sum.Scored != int(feat.NumRows()) || sum.InRun != sum.Scored || sum.Model != "monomer" || sum.Rules.K != 7 || sum.Projection != "sparse" {
		t.Fatalf("summary %+v; the run has %d items with features", sum, feat.NumRows())
	}
	// Every line of the metadata is an item scored or a reject.
	rej, err := schema.ReadAll[schema.CatalogueRejectsCols](t.Context(), filepath.Join(out, scoreRejectsFile))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Items != 3848 || sum.Scored+len(rej.ID) != sum.Items || sum.Rejects != len(rej.ID) {
		t.Fatalf("%d items read, %d scored, %d rejects (summary %d)", sum.Items, sum.Scored, len(rej.ID), sum.Rejects)
	}
	reasons := map[string]int{}
	for _, e := range rej.Error {
		reasons[e]++
	}
	if reasons[ReasonOutOfScope] == 0 || reasons[ReasonNoFeatures] == 0 {
		t.Fatalf("reject reasons %v: want items outside Men and items without features", reasons)
	}
	// The vectors are monomer export's of the same items, byte for byte:
	// one projection and one inner-product form.
	exp := filepath.Join(t.TempDir(), "export")
	if _, err := Export(t.Context(), ExportOptions{RunDir: run, Experiment: "men-bow", Model: "monomer", Out: exp}); err != nil {
		t.Fatal(err)
	}
	wantVec, err := os.ReadFile(filepath.Join(exp, ExportVectorsFile))
	if err != nil {
		t.Fatal(err)
	}
	gotVec, err := os.ReadFile(filepath.Join(out, scoreVectorsFile))
	if err != nil {
		t.Fatal(err)
	}
	if vec := open(t, filepath.Join(out, scoreVectorsFile)); vec.NumRows() != int64(sum.Scored) || !bytes.Equal(gotVec, wantVec) {
		t.Fatalf("%d vectors for %d items scored; equal to export's: %v", vec.NumRows(), sum.Scored, bytes.Equal(gotVec, wantVec))
	}
	if _, err := os.Stat(filepath.Join(out, scoreManifestFile)); err != nil {
		t.Fatal(err)
	}
	// A second score into the same directory is refused, not overwritten.
	_, err = Score(t.Context(), ScoreOptions{RunDir: run, Experiment: "men-bow",
		Items: filepath.Join(data, "meta_Demo.json.gz"), Text: filepath.Join(data, "reviews_Demo.json.gz"), Out: out})
	if !errors.Is(err, pipeline.ErrUsage) {
		t.Fatalf("score into a full directory: %v", err)
	}
}

// writeGz writes lines as a gzipped file.
func writeGz(t *testing.T, path string, lines []string) {
	t.Helper()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	for _, l := range lines {
		z.Write([]byte(l + "\n"))
	}
	z.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gzLines reads a gzipped file's lines.
func gzLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	s := bufio.NewScanner(z)
	s.Buffer(nil, 1<<24)
	for s.Scan() {
		out = append(out, s.Text())
	}
	return out
}

// newItemFiles writes, in dir, an Amazon metadata and reviews file of
// copies of three items of run with a bag of words under new ids (newID),
// and of rows each a reject of its own reason. It returns the files, the
// originals, and the number of metadata lines.
func newItemFiles(t *testing.T, run, dir string) (items, text string, orig []string, lines int) {
	t.Helper()
	data, _ := filepath.Abs(testData)
	in := runInputs(run, "men-bow")
	it, err := readItems(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	bowRun, err := readBow(t.Context(), filepath.Join(run, "men-bow", "features"), len(it.asin), false)
	if err != nil {
		t.Fatal(err)
	}
	// Three originals with a bag of words.
	for i, a := range it.asin {
		if !bowRun.empty(i) && len(orig) < 3 {
			orig = append(orig, a)
		}
	}
	var meta, reviews []string
	for _, l := range gzLines(t, filepath.Join(data, "meta_Demo.json.gz")) {
		for _, a := range orig {
			if strings.Contains(l, "'asin': '"+a+"'") {
				meta = append(meta, strings.Replace(l, a, newID(a), 1))
			}
		}
	}
	for _, l := range gzLines(t, filepath.Join(data, "reviews_Demo.json.gz")) {
		for _, a := range orig {
			if strings.Contains(l, `"asin": "`+a+`"`) {
				reviews = append(reviews, strings.Replace(l, a, newID(a), 1))
			}
		}
	}
	meta = append(meta,
		`{'asin': 'NEWNOTEXT1', 'categories': [['Clothing, Shoes & Jewelry', 'Men', 'Shirts']], 'title': 'no review'}`,
		`{'asin': 'NEWWOMEN01', 'categories': [['Clothing, Shoes & Jewelry', 'Women', 'Shirts']], 'title': 'elsewhere'}`,
		`{'asin': 'NEWTOPLVL1', 'categories': [['Clothing, Shoes & Jewelry', 'Men']], 'title': 'no subcategory'}`,
		`{'asin': 'NEWBROKEN1', 'categories': [[`)
	reviews = append(reviews, `{"asin": "NEWNOVOCAB", "reviewText": "zzzq", "summary": "", "overall": 5.0, "unixReviewTime": 1}`)
	meta = append(meta, `{'asin': 'NEWNOVOCAB', 'categories': [['Clothing, Shoes & Jewelry', 'Men', 'Shirts']], 'title': 'qq'}`)
	items, text = filepath.Join(dir, "meta_New.json.gz"), filepath.Join(dir, "reviews_New.json.gz")
	writeGz(t, items, meta)
	writeGz(t, text, reviews)
	return items, text, orig, len(meta)
}

// newID is the id of a copy of item a (newItemFiles).
func newID(a string) string { return "NEW" + a[3:] }

// scoreNewItems scores copies of run items under new ids: a copy's
// bag of words is the features stage's row of its original, its list
// holds the original, the bad and featureless rows are counted rejects,
// and a run of another train code version is refused with exit 3.
func scoreNewItems(t *testing.T, run string) {
	in := runInputs(run, "men-bow")
	it, err := readItems(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	bowRun, err := readBow(t.Context(), filepath.Join(run, "men-bow", "features"), len(it.asin), false)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	items, text, orig, lines := newItemFiles(t, run, dir)
	out := filepath.Join(dir, "out")
	sum, err := Score(t.Context(), ScoreOptions{RunDir: run, Experiment: "men-bow", Model: "lmt", Items: items, Text: text, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Scored != len(orig) || sum.InRun != 0 || sum.Items != lines-1 {
		t.Fatalf("summary %+v", sum)
	}
	rej, err := schema.ReadAll[schema.CatalogueRejectsCols](t.Context(), filepath.Join(out, scoreRejectsFile))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for i, id := range rej.ID {
		got[id] = rej.Error[i]
	}
	wantRej := map[string]string{"NEWNOTEXT1": ReasonNoFeatures, "NEWNOVOCAB": ReasonNoFeatures,
		"NEWWOMEN01": ReasonOutOfScope, "NEWTOPLVL1": ReasonNoSub}
	for id, why := range wantRej {
		if got[id] != why {
			t.Errorf("reject of %s: %q, want %q (rejects %v)", id, got[id], why, got)
		}
	}
	if len(rej.ID) != len(wantRej)+1 { // and the broken line, a reader's reject with its line
		t.Fatalf("%d rejects: %v", len(rej.ID), rej.Error)
	}

	// Each copy's bag of words is its original's row of the features
	// stage; rebuild the new rows as Score does.
	r, err := openScoreRun(run, "men-bow", "lmt")
	if err != nil {
		t.Fatal(err)
	}
	nw, _, err := readNewItems(t.Context(), r, items, &rejectSink{})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := newDocs(t.Context(), r, text, nw, &rejectSink{})
	if err != nil {
		t.Fatal(err)
	}
	vocab, err := readVocabulary(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := bowRows(t.Context(), bow.SliceDocs(docs), len(nw.id), vocab, bowOptions(r.features))
	if err != nil {
		t.Fatal(err)
	}
	row := it.rows()
	for _, a := range orig {
		gi, gv := res.Matrix.SparseRow(int(nw.row[newID(a)]))
		wi, wv := bowRun.SparseRow(int(row[a]))
		if !slices.Equal(gi, wi) || !slices.Equal(gv, wv) || len(gi) == 0 {
			t.Fatalf("%s: bag of words %v %v, the features stage's row of %s %v %v", newID(a), gi, gv, a, wi, wv)
		}
	}
	// A copy's list holds its original.
	pub, err := schema.ReadAll[schema.PublishedCols](t.Context(), filepath.Join(out, publishedFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range orig {
		found := false
		for i, q := range pub.Query {
			if q == newID(a) && pub.Item[i] == a {
				found = true
			}
		}
		if !found {
			t.Errorf("%s's list does not hold its original %s", newID(a), a)
		}
	}
}

// scoreVersionCheck refuses, with exit 3's ErrBadInput and one line
// naming both versions, a run whose train or features code is another
// version than this binary's.
func scoreVersionCheck(t *testing.T, run string) {
	for _, stage := range []string{"features", "train.lmt", "ingest"} {
		t.Run(stage, func(t *testing.T) {
			fake := filepath.Join(t.TempDir(), "run")
			for _, st := range []string{"ingest", "features", "train.lmt"} {
				m, err := cache.ReadManifest(filepath.Join(run, "men-bow", st))
				if err != nil {
					t.Fatal(err)
				}
				if st == stage {
					_, rest, _ := strings.Cut(m.Inputs.Code, " ")
					m.Inputs.Code = "v0.0.1 " + rest
				}
				dir := filepath.Join(fake, "men-bow", st)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := cache.WriteManifest(dir, m); err != nil {
					t.Fatal(err)
				}
			}
			_, err := openScoreRun(fake, "men-bow", "lmt")
			now := map[string]string{"features": Features{}.Version(), "train.lmt": Train{}.Version(), "ingest": Ingest{}.Version()}[stage]
			if !errors.Is(err, pipeline.ErrBadInput) || !strings.Contains(err.Error(), "version 0.0.1, this monomer's "+now) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// TestScoreImage scores an image experiment's own metadata and image
// features as new items: its publish table again, byte for byte (the
// run's image_scale, and the dense projection chosen by the same
// function over the same blocks of queries), the run directory untouched,
// and the temporary matrix gone.
func TestScoreImage(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a small run")
	}
	run, _, err := runPublish(t, publishJob(t, "", ""), "", "", pipeline.Options{RunDir: filepath.Join(t.TempDir(), "run")})
	if err != nil {
		t.Fatal(err)
	}
	before := treeSum(t, run)
	data, _ := filepath.Abs(testData)
	out := filepath.Join(t.TempDir(), "scored")
	sum, err := Score(t.Context(), ScoreOptions{RunDir: run, Experiment: "men-image",
		Items: filepath.Join(data, "meta_Demo.json.gz"), ImageFeatures: filepath.Join(data, "image_features_Demo.b"), Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if treeSum(t, run) != before {
		t.Fatal("score changed the run directory")
	}
	want, err := os.ReadFile(filepath.Join(run, "men-image", "publish", publishedFile))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, publishedFile))
	if err != nil {
		t.Fatal(err)
	}
	// The demo's image features are mostly zeros (ReLU): projected in Go.
	if !bytes.Equal(got, want) || sum.Scored == 0 || sum.InRun != sum.Scored || sum.Projection != "go" {
		t.Fatalf("score's lists (%d bytes) differ from the run's publish table (%d bytes), or summary %+v", len(got), len(want), sum)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{scoreManifestFile, publishedFile, scoreRejectsFile, scoreVectorsFile}) {
		t.Fatalf("score wrote %v", names)
	}
}

// TestScoreEmbeddings scores a planted 2023 world's embeddings experiment
// (dense vectors: the BLAS path, one gemm per block) with its own files
// as new items: its publish table again, byte for byte. Embeddings of
// another dimension are refused with one line naming both (exit 3).
func TestScoreEmbeddings(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a small run")
	}
	_, dir := write2023World(t, "tiny", 0.3, 24)
	emb := filepath.Join(dir, "embeddings_Clothing_Shoes_and_Jewelry.parquet")
	// Shifted off zero: dense rows, which Project multiplies by the BLAS.
	c, err := schema.ReadAll[schema.EmbeddingsCols](t.Context(), emb)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.Embedding {
		for j := range e {
			e[j] += 1
		}
	}
	if _, err := schema.Write(emb, c); err != nil {
		t.Fatal(err)
	}
	y := `
name: score-emb
seed: 5
data_dir: ` + dir + `
data:
  format: "2023"
  meta: meta_Clothing_Shoes_and_Jewelry.jsonl.gz
  reviews: Clothing_Shoes_and_Jewelry.jsonl.gz
  embeddings: embeddings_Clothing_Shoes_and_Jewelry.parquet
settings: {k: 6, monomer_k: 2, n: 2, lambdas: [0.0001], max_iter: 10, valid_every: 5, recommend_k: 5, report_map_items: 100}
publish: {model: lmt, k: 9}
experiments:
  - name: men
    category: "Clothing, Shoes & Jewelry > Men"
    graph: co_review
    features: embeddings
    models: [lmt, monomer]
`
	j, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(t.TempDir(), "run")
	if _, err := runStages(t.Context(), j, Experiment(), Job(), pipeline.Options{RunDir: run, RunID: "emb"}); err != nil {
		t.Fatal(err)
	}
	before := treeSum(t, run)
	meta := filepath.Join(dir, "meta_Clothing_Shoes_and_Jewelry.jsonl.gz")
	out := filepath.Join(t.TempDir(), "scored")
	sum, err := Score(t.Context(), ScoreOptions{RunDir: run, Experiment: "men", Items: meta, Embeddings: emb, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if treeSum(t, run) != before {
		t.Fatal("score changed the run directory")
	}
	want, err := os.ReadFile(filepath.Join(run, "men", "publish", publishedFile))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, publishedFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || sum.Scored == 0 || sum.InRun != sum.Scored || sum.Projection != "blas" || sum.BLAS != sum.RunBLAS || sum.BLAS == "" {
		t.Fatalf("score's lists (%d bytes) differ from the run's publish table (%d bytes), or summary %+v", len(got), len(want), sum)
	}

	// The same ids with vectors of 16 values: refused, naming 16 and 24.
	for i := range c.Embedding {
		c.Embedding[i] = c.Embedding[i][:16]
	}
	short := filepath.Join(t.TempDir(), "embeddings_short.parquet")
	if _, err := schema.Write(short, c); err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	_, err = Score(t.Context(), ScoreOptions{RunDir: run, Experiment: "men", Items: meta, Embeddings: short, Out: filepath.Join(parent, "short")})
	if !errors.Is(err, pipeline.ErrBadInput) || !strings.Contains(err.Error(), "dimension 16, the run's features 24") {
		t.Fatalf("short embeddings: %v", err)
	}
	// A refused score leaves nothing: no output directory, no temporary.
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Fatalf("a refused score left %v", left)
	}
}

// TestScoreCatalogue scores a catalogue run (the demo as a shop's CSV
// tables) with its own items and text tables: its publish table again,
// byte for byte, through the catalogue's readers and under
// cross_subcategory.
func TestScoreCatalogue(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a small run")
	}
	dir := t.TempDir()
	items, relations, text := demoAsCatalogue(t, dir, true)
	y := `
name: shop
seed: 2
data: {format: catalogue, items: ` + items + `, relations: ` + relations + `, text: ` + text + `}
settings: {k: 6, monomer_k: 2, n: 2, lambdas: [0.0001], max_iter: 10, valid_every: 5, recommend_k: 5, report_map_items: 100}
publish: {model: monomer, k: 5, cross_subcategory: true}
experiments:
  - {name: men, category: "Clothing, Shoes & Jewelry > Men", graph: also_bought, features: bow, models: [lmt, monomer]}
`
	j, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	if _, err := runStages(t.Context(), j, Experiment(), Job(), pipeline.Options{RunDir: run, RunID: "shop"}); err != nil {
		t.Fatal(err)
	}
	before := treeSum(t, run)
	out := filepath.Join(dir, "scored")
	sum, err := Score(t.Context(), ScoreOptions{RunDir: run, Experiment: "men", Items: items, Text: text, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if treeSum(t, run) != before {
		t.Fatal("score changed the run directory")
	}
	want, err := os.ReadFile(filepath.Join(run, "men", "publish", publishedFile))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, publishedFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || sum.Scored == 0 || sum.InRun != sum.Scored || !sum.Rules.Cross || sum.Rules.K != 5 {
		t.Fatalf("score's lists (%d bytes) differ from the run's publish table (%d bytes), or summary %+v", len(got), len(want), sum)
	}
}

// scoreModelDir scores from `monomer export`'s directory in place of the
// run: the same bytes of recommendations, vectors and rejects as a score
// of the run, for the run's own items and for new ones, with both models;
// neither directory touched; and a tampered file, another code version or
// another experiment refused with one line.
func scoreModelDir(t *testing.T, run string) {
	data, _ := filepath.Abs(testData)
	dir := t.TempDir()
	newItems, newText, _, _ := newItemFiles(t, run, dir)
	inputs := []struct{ name, items, text string }{
		{"in_run", filepath.Join(data, "meta_Demo.json.gz"), filepath.Join(data, "reviews_Demo.json.gz")},
		{"new", newItems, newText},
	}
	exports := map[string]string{}
	for _, model := range []string{"monomer", "lmt", "wnn"} {
		ex := filepath.Join(dir, "export-"+model)
		exports[model] = ex
		if _, err := Export(t.Context(), ExportOptions{RunDir: run, Experiment: "men-bow", Model: model, Out: ex, WNNFeatures: model == "wnn"}); err != nil {
			t.Fatal(err)
		}
		if got := filepath.Join(ex, ExportScoreDir, "publish", "exclude.csv"); !fileExists(got) {
			t.Fatalf("%s: the export holds no copy of the exclude table", model)
		}
		runBefore, exBefore := treeSum(t, run), treeSum(t, ex)
		for _, in := range inputs {
			fromRun, fromEx := filepath.Join(dir, model+"-"+in.name+"-run"), filepath.Join(dir, model+"-"+in.name+"-export")
			want, err := Score(t.Context(), ScoreOptions{RunDir: run, Experiment: "men-bow", Model: model, Items: in.items, Text: in.text, Out: fromRun})
			if err != nil {
				t.Fatal(err)
			}
			got, err := Score(t.Context(), ScoreOptions{ModelDir: ex, Items: in.items, Text: in.text, Out: fromEx})
			if err != nil {
				t.Fatalf("%s %s: %v", model, in.name, err)
			}
			if got.Scored != want.Scored || got.Scored == 0 || got.Rejects != want.Rejects || got.Model != model ||
				got.Experiment != "men-bow" || got.ModelDir != ex || got.Run != want.Run ||
				got.Rules.K != 7 || want.Rules.Exclude == "" || got.Rules.Exclude != filepath.Join(ex, ExportScoreDir, "publish", "exclude.csv") {
				t.Errorf("%s %s: summary from the export %+v, from the run %+v", model, in.name, got, want)
			}
			// The exclude table applied: its items of the run are queries
			// but never in a list.
			exIDs, err := os.ReadFile(filepath.Join(ex, ExportScoreDir, "publish", "exclude.csv"))
			if err != nil {
				t.Fatal(err)
			}
			banned := map[string]bool{}
			for _, id := range strings.Split(strings.TrimSpace(string(exIDs)), "\n")[1:] {
				banned[id] = true
			}
			pub, err := schema.ReadAll[schema.PublishedCols](t.Context(), filepath.Join(fromEx, publishedFile))
			if err != nil {
				t.Fatal(err)
			}
			queried := 0
			for i, y := range pub.Item {
				if banned[y] {
					t.Fatalf("%s %s: excluded %s in %s's list", model, in.name, y, pub.Query[i])
				}
				if banned[pub.Query[i]] && pub.Rank[i] == 1 {
					queried++
				}
			}
			if in.name == "in_run" && queried == 0 {
				t.Fatalf("%s: no excluded id is an item of the run", model)
			}
			for _, f := range []string{publishedFile, scoreVectorsFile, scoreRejectsFile} {
				a, err := os.ReadFile(filepath.Join(fromRun, f))
				if err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(filepath.Join(fromEx, f))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a, b) {
					t.Errorf("%s %s: %s from the export (%d bytes) differs from the run's (%d bytes)", model, in.name, f, len(b), len(a))
				}
			}
		}
		if treeSum(t, run) != runBefore || treeSum(t, ex) != exBefore {
			t.Fatalf("%s: score --model-dir changed the run or the export", model)
		}
	}

	ex := exports["monomer"]
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
		exp    string
		err    error
		msg    string
	}{
		{"tampered params", func(t *testing.T, dir string) {
			p := filepath.Join(dir, ExportScoreDir, "train.monomer", "params.parquet")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 1
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "", pipeline.ErrBadInput, "params.parquet: sha256 "},
		{"train code", func(t *testing.T, dir string) { editModelJSON(t, dir, "train_code") }, "", pipeline.ErrBadInput,
			"the export's train code is version 0.0.1, this monomer's " + Train{}.Version()},
		{"features code", func(t *testing.T, dir string) { editModelJSON(t, dir, "features_code") }, "", pipeline.ErrBadInput,
			"the export's features code is version 0.0.1, this monomer's " + Features{}.Version()},
		{"other experiment", func(*testing.T, string) {}, "men-image", pipeline.ErrUsage, "is of experiment men-bow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "export")
			copyTree(t, ex, bad)
			tc.change(t, bad)
			out := filepath.Join(t.TempDir(), "out")
			_, err := Score(t.Context(), ScoreOptions{ModelDir: bad, Experiment: tc.exp, Items: inputs[1].items, Text: inputs[1].text, Out: out})
			if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v; want %v with %q on one line", err, tc.err, tc.msg)
			}
			if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a refused score made %s: %v", out, err)
			}
		})
	}
}

// editModelJSON sets the version of code field of dir's model.json to 0.0.1.
func editModelJSON(t *testing.T, dir, field string) {
	t.Helper()
	p := filepath.Join(dir, ExportModelFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(m[field].(string), " ")
	m[field] = "v0.0.1 " + rest
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the regular files and directories under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

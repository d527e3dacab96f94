package stages

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"monomer/amazon"
	"monomer/bow"
	"monomer/catalogue"
	"monomer/imagefeat"
	"monomer/job"
	"monomer/models"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// monomer score (docs/scoring.md) places items a run never saw with the
// run's trained parameters, reusing every step of the pipeline rather than
// a copy of it: the items are scoped as ingest scopes them (amazon.Subcategory),
// featurised by the features stage's function over the run's stored
// vocabulary (bowRows, docText), projected by models.Fit.Project with the
// run's catalogue projected by its own call (models.NewRetrieverParts),
// and listed by publish's publishLists under the experiment's publish:
// rules. Items of the run given again therefore get the bytes the run's
// publish table gave them (TestScoreInRunItems).

// ScoreOptions are the inputs of one score.
type ScoreOptions struct {
	RunDir, Experiment string
	// ModelDir is a `monomer export` directory read in place of RunDir
	// (one of the two); Experiment may then be "" (the export's).
	ModelDir string
	// Model is the model to score with; "" is the publish: block's model,
	// or monomer when the experiment has no publish node.
	Model string
	// Items is the new items, in the experiment's input format (a
	// catalogue items table, or an Amazon metadata file); Text their
	// documents (a catalogue text table or a reviews file) for features:
	// bow.
	Items, Text string
	// ImageFeatures is the new items' .b image-feature file (features:
	// image), Embeddings their embeddings file (features: embeddings, with
	// its .ids file beside a .npy).
	ImageFeatures, Embeddings string
	// K is the list length when the experiment has no publish node (0:
	// 10); with one, its k rules.
	K int
	// Out is the directory written: it must not exist, or be empty.
	Out string
}

// ScoreSummary is what a score did, as its manifest records it.
type ScoreSummary struct {
	Format int    `json:"format"`
	Run    string `json:"run"`
	// ModelDir is the export scored with in place of the run (absolute),
	// "" when the run itself was read.
	ModelDir   string `json:"model_dir,omitempty"`
	Experiment string `json:"experiment"`
	Model      string `json:"model"`
	Features   string `json:"features"`
	// Monomer is the binary that scored; TrainCode and FeaturesCode the
	// run's train and features code versions, which it checked against
	// its own.
	Monomer      string `json:"monomer"`
	TrainCode    string `json:"train_code"`
	FeaturesCode string `json:"features_code"`
	// Rules are the publish rules applied (the run's publish: block, or k
	// alone).
	Rules scoreRules `json:"rules"`
	// Projection is how the run's catalogue is projected (models.Fit.
	// ProjectPath: sparse, go or blas); with blas, RunBLAS is the BLAS the
	// run's train node recorded and BLAS this binary's: when they differ,
	// the lists of the run's items may differ from the run's in the last
	// bits (docs/scoring.md).
	Projection string `json:"projection"`
	RunBLAS    string `json:"run_blas,omitempty"`
	BLAS       string `json:"blas,omitempty"`
	// Items counts the items read, Scored those with a list, InRun those
	// whose id is an item of the run (scored with their new features, the
	// run's copy left out of their list), Rejects the rows of rejects.parquet.
	Items   int              `json:"items"`
	Scored  int              `json:"scored"`
	InRun   int              `json:"in_run"`
	Rejects int              `json:"rejects"`
	Inputs  []cache.FileHash `json:"inputs"`
	Outputs []cache.Output   `json:"outputs"`
}

type scoreRules struct {
	K       int     `json:"k"`
	Cross   bool    `json:"cross_subcategory"`
	MinProb float64 `json:"min_probability"`
	Exclude string  `json:"exclude,omitempty"`
}

// The files of a score's directory.
const (
	scoreVectorsFile  = "vectors.parquet"
	scoreRejectsFile  = "rejects.parquet"
	scoreManifestFile = "manifest.json"
)

// Score reasons: the Err of a new item's reject that is not a reader's.
const (
	ReasonOutOfScope  = "outside the experiment's category"
	ReasonNoSub       = "no subcategory at the experiment's depth"
	ReasonNoFeatures  = "no usable features"
	ReasonDuplicateID = "duplicate id"
)

// scoreRun is what score reads of the run: the experiment's parameters as
// its stages' manifests recorded them.
type scoreRun struct {
	in       inputs
	ingest   ingestParams
	features featuresParams
	pub      publishParams
	exclude  string // the publish: block's exclude table, "" for none
	trainC   string
	featC    string
	// run is the run directory scored with; modelDir the export read in
	// its place ("" for a run).
	run, modelDir string
	exp           string // the experiment
}

func readStageManifest(expDir, stage string) (*cache.Manifest, error) {
	dir := filepath.Join(expDir, stage)
	m, err := cache.ReadManifest(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s: stage %s has not finished (run `monomer run` first)", pipeline.ErrUsage, dir, stage)
		}
		return nil, err
	}
	return m, nil
}

// openScoreRun reads and checks what score needs of experiment exp of
// runDir for model: a run whose train, features, ingest or publish code
// is another version than this binary's is refused (exit 3), since the
// items it would scope, the features it would compute, the parameters'
// meaning or the lists may differ.
func openScoreRun(runDir, exp, model string) (*scoreRun, error) {
	if fi, err := os.Stat(runDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a run directory (run `monomer run` first)", pipeline.ErrUsage, runDir)
	}
	expDir := filepath.Join(runDir, exp)
	if fi, err := os.Stat(expDir); err != nil || !fi.IsDir() || exp == "" || strings.ContainsAny(exp, `/\`) {
		return nil, fmt.Errorf("%w: unknown experiment %q; the run directory %s has %s", pipeline.ErrUsage, exp, runDir, runExperiments(runDir))
	}
	r := &scoreRun{in: runInputs(runDir, exp), run: runDir, exp: exp}
	ing, err := readStageManifest(expDir, Ingest{}.Name())
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(ing.Inputs.Params, &r.ingest); err != nil {
		return nil, fmt.Errorf("stages: %s: ingest's params: %w", expDir, err)
	}
	fm, err := readStageManifest(expDir, Features{}.Name())
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(fm.Inputs.Params, &r.features); err != nil {
		return nil, fmt.Errorf("stages: %s: features' params: %w", expDir, err)
	}
	pubCode := ""
	if _, err := os.Stat(filepath.Join(expDir, Publish{}.Name(), cache.ManifestName)); err == nil {
		pm, err := readStageManifest(expDir, Publish{}.Name())
		if err != nil {
			return nil, err
		}
		pubCode = pm.Inputs.Code
		if err := json.Unmarshal(pm.Inputs.Params, &r.pub); err != nil {
			return nil, fmt.Errorf("stages: %s: publish's params: %w", expDir, err)
		}
		if r.pub.HasExclude && len(pm.Inputs.Files) > 0 {
			// publishParams.Files: the exclude table comes first.
			f := pm.Inputs.Files[0]
			if sum, err := cache.HashFile(f.Path); err != nil || sum != f.SHA256 {
				return nil, fmt.Errorf("%w: %s: the publish: block's exclude table is gone or changed since the run (sha256 %s); score applies the rules the run published under", pipeline.ErrBadInput, f.Path, cache.Short(f.SHA256))
			}
			r.exclude = f.Path
		}
	}
	if model == "" {
		model = cmp.Or(r.pub.Model, models.ModelMonomer)
	}
	r.pub.Model = model
	tm, err := readStageManifest(expDir, pipeline.PartName(Train{}.Name(), model))
	if err != nil {
		if errors.Is(err, pipeline.ErrUsage) {
			return nil, fmt.Errorf("%w: experiment %s has no trained %s", pipeline.ErrUsage, exp, model)
		}
		return nil, err
	}
	r.trainC, r.featC = tm.Inputs.Code, fm.Inputs.Code
	if err := checkScoreCodes(expDir, "run", ing.Inputs.Code, fm.Inputs.Code, tm.Inputs.Code, pubCode); err != nil {
		return nil, err
	}
	return r, nil
}

// checkScoreCodes refuses (exit 3) a source (a run, or an export: what)
// made by other ingest, features, train or publish code than this binary's.
// Scope, featurisation, parameters and lists are each the code of a stage:
// another version of any may give other items, rows or bits than the
// run's. pubCode "" is a run without a publish node.
func checkScoreCodes(where, what, ingCode, featCode, trainCode, pubCode string) error {
	checks := []struct{ stage, run, now string }{
		{"train", codeVersion(trainCode), Train{}.Version()},
		{"features", codeVersion(featCode), Features{}.Version()},
		{"ingest", codeVersion(ingCode), Ingest{}.Version()},
	}
	if pubCode != "" {
		checks = append(checks, struct{ stage, run, now string }{"publish", codeVersion(pubCode), Publish{}.Version()})
	}
	for _, c := range checks {
		if c.run != c.now {
			return fmt.Errorf("%w: %s: the %s's %s code is version %s, this monomer's %s: score with the monomer that made the %s, or rerun it", pipeline.ErrBadInput, where, what, c.stage, c.run, c.now, what)
		}
	}
	return nil
}

// openScoreModelDir reads and checks an export directory (`monomer
// export`, docs/serving.md) as openScoreRun reads a run: the parameters
// from model.json, the tables from its score directory, served as the
// run's stage directories are (inputs), so that Score reads an export by
// the same code as a run. Every file model.json lists must have its
// sha256, and its codes this binary's versions (exit 3). exp and model,
// when given, must be the export's.
func openScoreModelDir(dir, exp, model string) (*scoreRun, error) {
	path := filepath.Join(dir, ExportModelFile)
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s has no %s: not a `monomer export` directory", pipeline.ErrUsage, dir, ExportModelFile)
		}
		return nil, err
	}
	var m ExportModel
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", pipeline.ErrBadInput, path, err)
	}
	switch {
	case m.Score == "" || m.IngestCode == "":
		return nil, fmt.Errorf("%w: %s: the export holds no %s directory (made by a monomer before score --model-dir): export the run again", pipeline.ErrBadInput, path, ExportScoreDir)
	case exp != "" && exp != m.Experiment:
		return nil, fmt.Errorf("%w: --experiment %s: the export at %s is of experiment %s", pipeline.ErrUsage, exp, dir, m.Experiment)
	case model != "" && model != m.Model:
		return nil, fmt.Errorf("%w: --model %s: the export at %s is of model %s", pipeline.ErrUsage, model, dir, m.Model)
	}
	if err := checkScoreCodes(path, "export", m.IngestCode, m.FeaturesCode, m.TrainCode, m.PublishCode); err != nil {
		return nil, err
	}
	names := slices.Sorted(maps.Keys(m.Files))
	for _, name := range names {
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			return nil, fmt.Errorf("%w: %s: file %q is not inside the export", pipeline.ErrBadInput, path, name)
		}
		sum, err := cache.HashFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", pipeline.ErrBadInput, path, err)
		}
		if sum != m.Files[name] {
			return nil, fmt.Errorf("%w: %s: sha256 %s, model.json records %s: the export was changed since monomer export wrote it", pipeline.ErrBadInput, filepath.Join(dir, name), cache.Short(sum), cache.Short(m.Files[name]))
		}
	}
	root := filepath.Join(dir, m.Score)
	r := &scoreRun{in: func(stage string) (string, error) { return filepath.Join(root, stage), nil },
		trainC: m.TrainCode, featC: m.FeaturesCode, run: m.Run, modelDir: dir, exp: m.Experiment}
	if err := json.Unmarshal(m.IngestParams, &r.ingest); err != nil {
		return nil, fmt.Errorf("%w: %s: ingest_params: %v", pipeline.ErrBadInput, path, err)
	}
	if err := json.Unmarshal(m.FeaturesParams, &r.features); err != nil {
		return nil, fmt.Errorf("%w: %s: features_params: %v", pipeline.ErrBadInput, path, err)
	}
	if len(m.PublishParams) > 0 && string(m.PublishParams) != "null" {
		if err := json.Unmarshal(m.PublishParams, &r.pub); err != nil {
			return nil, fmt.Errorf("%w: %s: publish_params: %v", pipeline.ErrBadInput, path, err)
		}
	}
	if r.pub.HasExclude {
		if m.Exclude == "" || m.Files[m.Exclude] == "" {
			return nil, fmt.Errorf("%w: %s: the publish rules exclude a table the export does not hold", pipeline.ErrBadInput, path)
		}
		r.exclude = filepath.Join(dir, filepath.FromSlash(m.Exclude))
	}
	r.pub.Model = m.Model
	return r, nil
}

// newItems are the new items scoped, by id (byte order), with what each
// needs to be scored.
type newItems struct {
	id, sub []string
	row     map[string]int32 // id → index in id
}

// readNewItems reads and scopes the items file as ingest does (scope.add's
// amazon.Subcategory under the experiment's category and depth): an item
// outside the category, or without a subcategory at its depth, is a reject
// with that reason, as is a second row of one id.
func readNewItems(ctx context.Context, r *scoreRun, path string, rej *rejectSink) (*newItems, int, error) {
	p := r.ingest
	prefix := amazon.CategoryPrefix(p.Category)
	base := filepath.Base(path)
	seen := map[string]string{}
	read := 0
	f := rej.file(path)
	add := func(id string, cats [][]string) {
		read++
		sub, _, matched, ok := amazon.Subcategory(cats, prefix, p.Depth)
		_, dup := seen[id]
		switch {
		case dup:
			f.add(amazon.Reject{File: base, ID: id, Err: ReasonDuplicateID, Detail: "its first row is scored"})
		case !matched:
			seen[id] = "\x00"
			f.add(amazon.Reject{File: base, ID: id, Err: ReasonOutOfScope, Detail: fmt.Sprintf("not under %q", p.Category)})
		case !ok:
			seen[id] = "\x00"
			f.add(amazon.Reject{File: base, ID: id, Err: ReasonNoSub, Detail: fmt.Sprintf("no category level %d below %q", p.Depth, p.Category)})
		default:
			seen[id] = sub
		}
	}
	var err error
	if p.Format == job.FormatCatalogue {
		_, err = catalogue.ReadItems(ctx, path, func(it *catalogue.Item) error {
			add(it.ID, it.Categories)
			return nil
		}, f.add)
		err = tableError(err)
	} else {
		_, err = amazon.ReadMetaFormat(ctx, p.Format, path, func(pr *amazon.Product) error {
			add(pr.ASIN, pr.Categories)
			return nil
		}, f.add)
	}
	if err != nil {
		return nil, 0, err
	}
	n := &newItems{row: map[string]int32{}}
	for id, sub := range seen {
		if sub != "\x00" {
			n.id = append(n.id, id)
		}
	}
	slices.Sort(n.id)
	n.sub = make([]string, len(n.id))
	for i, id := range n.id {
		n.row[id], n.sub[i] = int32(i), seen[id]
	}
	return n, read, nil
}

// newDocs reads the text file's documents of the new items, in file order,
// as the features stage reads ingest's reviews table (docText).
func newDocs(ctx context.Context, r *scoreRun, path string, n *newItems, rej *rejectSink) ([]bow.Doc, error) {
	var docs []bow.Doc
	add := func(id, summary, text string) {
		if i, ok := n.row[id]; ok {
			docs = append(docs, bow.Doc{Item: i, Text: docText(summary, text, r.features.UseSummary)})
		}
	}
	f := rej.file(path)
	if r.ingest.Format == job.FormatCatalogue {
		_, err := catalogue.ReadText(ctx, path, func(d *catalogue.Doc) error {
			add(d.ID, d.Summary, d.Text)
			return nil
		}, f.add)
		return docs, tableError(err)
	}
	var st amazon.Stats
	// Ingest's options: a co_review experiment's ingest rejects reviews
	// without a user or a time, so its bag of words never saw them.
	opts := amazon.ReviewOptions{Format: r.ingest.Format, UserTime: r.ingest.CoReview != nil}
	for rv, err := range reviewsOf(opts, path, f.add, &st) {
		if err != nil {
			return nil, err
		}
		add(rv.ASIN, rv.Summary, rv.ReviewText)
	}
	return docs, nil
}

// readVocabulary reads the run's vocabulary, in term-id order.
func readVocabulary(ctx context.Context, in inputs) ([]bow.Term, error) {
	path, err := in.file(Features{}.Name(), "vocabulary.parquet")
	if err != nil {
		return nil, err
	}
	var c schema.VocabularyCols
	if err := schema.ReadFields(ctx, path, &c, &c.TermID, &c.Term, &c.Count); err != nil {
		return nil, err
	}
	v := make([]bow.Term, len(c.Term))
	for i, t := range c.Term {
		if c.TermID[i] != int32(i) {
			return nil, fmt.Errorf("stages: %s row %d: term_id %d, want %d", path, i, c.TermID[i], i)
		}
		v[i] = bow.Term{Term: t, Count: c.Count[i]}
	}
	return v, nil
}

// withRows is the run's bag-of-words rows with rows appended after them.
func withRows(run *csr, m *bow.Matrix, rows []int32) *csr {
	out := &csr{dim: run.dim, ptr: slices.Clone(run.ptr), idx: slices.Clone(run.idx), val: slices.Clone(run.val)}
	for _, i := range rows {
		idx, val := m.SparseRow(int(i))
		out.idx, out.val = append(out.idx, idx...), append(out.val, val...)
		out.ptr = append(out.ptr, int64(len(out.idx)))
	}
	return out
}

// newBowFeatures is the bag of words of the new items' documents in
// textPath over the run's vocabulary (bowRows, the features stage's
// function), appended to the run's rows; an item without a row goes to
// noFeatures.
func newBowFeatures(ctx context.Context, r *scoreRun, textPath string, nw *newItems, rej *rejectSink, run *csr, noFeatures func(int, string)) (*csr, []int32, error) {
	docs, err := newDocs(ctx, r, textPath, nw, rej)
	if err != nil {
		return nil, nil, err
	}
	vocab, err := readVocabulary(ctx, r.in)
	if err != nil {
		return nil, nil, err
	}
	if len(vocab) != run.dim {
		return nil, nil, fmt.Errorf("%w: score: the run's bag of words has dimension %d, its vocabulary %d terms", pipeline.ErrBadInput, run.dim, len(vocab))
	}
	res, err := bowRows(ctx, bow.SliceDocs(docs), len(nw.id), vocab, bowOptions(r.features))
	if err != nil {
		return nil, nil, err
	}
	hasDoc := make([]bool, len(nw.id))
	for _, d := range docs {
		hasDoc[d.Item] = true
	}
	var keep []int32
	for i := range nw.id {
		if ids, _ := res.Matrix.SparseRow(i); len(ids) > 0 {
			keep = append(keep, int32(i))
			continue
		}
		why := "no document in " + filepath.Base(textPath)
		if hasDoc[i] {
			why = "no term of the run's vocabulary in its text"
		}
		noFeatures(i, why)
	}
	return withRows(run, res.Matrix, keep), keep, nil
}

// newMatrixFile is the new items' dense matrix while score runs, in the
// output directory; removed before score returns.
const newMatrixFile = ".new-features.arrow"

// newDenseFeatures extracts the new items' image features (the run's
// image_scale, imagefeat.Extract as the features stage calls it) or
// embeddings (imagefeat.ExtractEmbeddings, with the run's reject_ratio and
// its checks) into tmp, and stacks them under the run's matrix. An item
// without a record or vector goes to noFeatures; vectors of another
// dimension than the run's are refused (exit 3). done closes and removes
// tmp.
func newDenseFeatures(ctx context.Context, r *scoreRun, path string, nw *newItems, run models.Dense, tmp string, noFeatures func(int, string)) (models.Features, []int32, func(), error) {
	var keep []int32
	var rows map[string]int32
	if r.features.Kind == "image" {
		asins, err := imagefeat.ScanASINs(ctx, path)
		if err != nil {
			return nil, nil, nil, err
		}
		has := map[string]bool{}
		for _, a := range asins {
			has[a] = true
		}
		rows = map[string]int32{}
		for i, id := range nw.id {
			if !has[id] {
				noFeatures(i, "no record in "+filepath.Base(path))
				continue
			}
			rows[id] = int32(len(keep))
			keep = append(keep, int32(i))
		}
		if len(keep) == 0 {
			return run, nil, func() {}, nil // nothing to stack
		}
		if _, err := imagefeat.Extract(ctx, path, rows, len(keep), float32(r.features.ImageScale), tmp, imagefeat.WithDim(run.Dim())); err != nil {
			if errors.Is(err, imagefeat.ErrDim) {
				return nil, nil, nil, fmt.Errorf("%w: score: %s: the run's image features have dimension %d: %w", pipeline.ErrBadInput, path, run.Dim(), err)
			}
			return nil, nil, nil, err
		}
	} else {
		all := map[string]int32{}
		for i, id := range nw.id {
			all[id] = int32(i)
		}
		st, err := imagefeat.ExtractEmbeddings(ctx, path, all, len(nw.id), r.features.RejectRatio, tmp)
		if errors.Is(err, imagefeat.ErrEmbeddings) {
			return nil, nil, nil, fmt.Errorf("%w: %w", pipeline.ErrBadInput, err)
		}
		if err != nil {
			return nil, nil, nil, err
		}
		missing := map[int32]bool{}
		for _, m := range st.Missing {
			missing[m] = true
		}
		for i := range nw.id {
			if missing[int32(i)] {
				noFeatures(i, "no vector in "+filepath.Base(path))
				continue
			}
			keep = append(keep, int32(i))
		}
	}
	m, err := imagefeat.OpenMatrix(tmp)
	if err != nil {
		os.Remove(tmp) // made by Extract above
		return nil, nil, nil, err
	}
	done := func() { m.Close(); os.Remove(tmp) }
	if m.Dim() != run.Dim() {
		done()
		return nil, nil, nil, fmt.Errorf("%w: score: %s: the new items' vectors have dimension %d, the run's features %d", pipeline.ErrBadInput, path, m.Dim(), run.Dim())
	}
	// Image: the matrix holds the kept items only, row j keep[j]'s;
	// embeddings: every new item, row i item i's.
	at := make([]int32, len(keep))
	for j, i := range keep {
		at[j] = i
		if r.features.Kind == "image" {
			at[j] = int32(j)
		}
	}
	return &stacked{run: run, more: m, at: at}, keep, done, nil
}

// stacked is the run's dense matrix with the new items' rows after it:
// row Rows(run)+j is more's row at[j].
type stacked struct {
	run, more models.Dense
	at        []int32
}

func (s *stacked) Rows() int { return s.run.Rows() + len(s.at) }
func (s *stacked) Dim() int  { return s.run.Dim() }
func (s *stacked) Row(i int) []float32 {
	if n := s.run.Rows(); i >= n {
		return s.more.Row(int(s.at[i-n]))
	}
	return s.run.Row(i)
}

// Score scores the new items of o through the run's model and writes
// o.Out's recommendations.parquet (the publish table's schema),
// vectors.parquet, rejects.parquet and manifest.json. It reads the run,
// or the export o.ModelDir in its place (openScoreModelDir), only.
func Score(ctx context.Context, o ScoreOptions) (*ScoreSummary, error) {
	if o.Items == "" {
		return nil, fmt.Errorf("%w: score needs --items (see --help)", pipeline.ErrUsage)
	}
	if o.Out == "" {
		return nil, fmt.Errorf("%w: score needs --out (see --help)", pipeline.ErrUsage)
	}
	if o.K < 0 || o.K > job.MaxPublishK { // publish.k's bounds (job/publish.go)
		return nil, fmt.Errorf("%w: --k %d: a list length from 1 to %d (0: 10)", pipeline.ErrUsage, o.K, job.MaxPublishK)
	}
	if o.Model != "" {
		if _, err := models.Lookup(o.Model); err != nil || !retrievable(o.Model) {
			return nil, fmt.Errorf("%w: --model %s is not a model that ranks items (use %s)", pipeline.ErrUsage, o.Model, RetrievableNames())
		}
	}
	var r *scoreRun
	var err error
	switch {
	case o.ModelDir != "" && o.RunDir != "":
		return nil, fmt.Errorf("%w: score reads a run directory or --model-dir, not both", pipeline.ErrUsage)
	case o.ModelDir != "":
		r, err = openScoreModelDir(o.ModelDir, o.Experiment, o.Model)
	default:
		r, err = openScoreRun(o.RunDir, o.Experiment, o.Model)
	}
	if err != nil {
		return nil, err
	}
	o.Experiment = cmp.Or(o.Experiment, r.exp)
	model := r.pub.Model
	if registered(model).Topics {
		return nil, fmt.Errorf("%w: score %s: new text needs topic inference with the run's topics, which score does not do yet (score with lmt, monomer or wnn)", pipeline.ErrUsage, model)
	}
	source := map[string]struct{ flag, path string }{
		"bow": {"text", o.Text}, "image": {"image-features", o.ImageFeatures}, "embeddings": {"embeddings", o.Embeddings},
	}[r.features.Kind]
	if source.path == "" {
		return nil, fmt.Errorf("%w: score: experiment %s has %s features: give the new items' with --%s", pipeline.ErrUsage, o.Experiment, r.features.Kind, source.flag)
	}
	// docs/scoring.md: the publish: block's k rules; --k only without one.
	switch {
	case r.pub.K != 0 && o.K != 0:
		return nil, fmt.Errorf("%w: --k %d: experiment %s has a publish: block, whose k (%d) the lists follow; drop --k", pipeline.ErrUsage, o.K, o.Experiment, r.pub.K)
	case r.pub.K == 0: // no publish node: k alone
		r.pub.K = cmp.Or(o.K, 10)
	}
	inputsRead := []string{o.Items, source.path}
	for _, f := range inputsRead {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("%w: %v", pipeline.ErrMissingInput, err)
		}
	}
	if err := outOfRun("score", o.Out, cmp.Or(o.ModelDir, o.RunDir)); err != nil {
		return nil, err
	}
	if err := emptyOut("score", o.Out); err != nil {
		return nil, err
	}
	// Written in a temporary directory beside Out and renamed into place,
	// as export does: Out holds a whole score or nothing.
	final := o.Out
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(final)), "."+filepath.Base(final)+".score-")
	if err != nil {
		return nil, fmt.Errorf("%w: --out %s: %v", pipeline.ErrUsage, final, err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp) // made by this call, holding only its files
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp's 0700 is for the temporary name only
		return nil, fmt.Errorf("stages: score: %w", err)
	}
	o.Out = tmp

	rej := &rejectSink{catalogue: true}
	nw, read, err := readNewItems(ctx, r, o.Items, rej)
	if err != nil {
		return nil, err
	}
	run, err := readItems(ctx, r.in)
	if err != nil {
		return nil, err
	}
	keepRun, err := readFeatureItems(ctx, r.in, len(run.asin))
	if err != nil {
		return nil, err
	}
	// A run with cold_items held its items out: they are no part of the
	// catalogue new items are listed against (docs/scoring.md "Cold
	// items"), as in the recommend stage's evaluation of them.
	cold, _, err := readColdItems(ctx, r.in, len(run.asin))
	if err != nil {
		return nil, err
	}
	for i, c := range cold {
		keepRun[i] = keepRun[i] && !c
	}
	fits, err := readTrainedFits(ctx, r.in, []string{model})
	if err != nil {
		return nil, err
	}
	featRun, _, closeFeat, err := loadFeatures(ctx, r.in, r.features.Kind, false)
	if err != nil {
		return nil, err
	}
	defer closeFeat()
	noFeatures := func(i int, why string) {
		rej.file(o.Items).add(amazon.Reject{File: filepath.Base(o.Items), ID: nw.id[i], Err: ReasonNoFeatures, Detail: why})
	}
	var feat models.Features
	var keep []int32 // the new items with features, by id
	dropMatrix := func() {}
	defer func() { dropMatrix() }()
	if r.features.Kind == "bow" {
		feat, keep, err = newBowFeatures(ctx, r, o.Text, nw, rej, featRun.(*csr), noFeatures)
	} else {
		var drop func()
		feat, keep, drop, err = newDenseFeatures(ctx, r, source.path, nw, featRun.(models.Dense), filepath.Join(o.Out, newMatrixFile), noFeatures)
		if drop != nil {
			dropMatrix = drop
		}
	}
	if err != nil {
		return nil, err
	}

	// The run's items, then the new ones with features: item nRun+j is
	// keep[j].
	nRun := int32(len(run.asin))
	it := &items{asin: slices.Clone(run.asin), sub: slices.Clone(run.sub), subName: slices.Clone(run.subName)}
	subID := map[string]int32{}
	for i, s := range it.subName {
		subID[s] = int32(i)
	}
	runRow := run.rows()
	var runCand, newCand, queries []int32
	for i, k := range keepRun {
		if k {
			runCand = append(runCand, int32(i))
		}
	}
	twin := make([]int32, len(keep)) // the run's item of the same id, or -1
	inRun := 0
	for j, k := range keep {
		x := nRun + int32(j)
		id, sub := nw.id[k], nw.sub[k]
		s, ok := subID[sub]
		if !ok {
			s = int32(len(it.subName))
			subID[sub], it.subName = s, append(it.subName, sub)
		}
		it.asin, it.sub = append(it.asin, id), append(it.sub, s)
		queries = append(queries, x)
		twin[j] = -1
		if y, ok := runRow[id]; ok {
			twin[j] = y
			inRun++
			continue // the run's copy is the candidate
		}
		newCand = append(newCand, x)
	}

	s := fits[model]
	fit, err := models.NewFit(registered(model).Scorer, s.c, s.params)
	if err != nil {
		return nil, err
	}
	path := ""
	if fit.Model != models.ModelWNN {
		if path, err = fit.ProjectPath(feat, runCand); err != nil {
			return nil, err
		}
	}
	ret, err := models.NewRetrieverParts(fit, feat, runCand, newCand)
	if err != nil {
		return nil, fmt.Errorf("stages: score %s: %w", model, err)
	}
	var ex []bool
	if r.exclude != "" {
		e := &recExperiment{it: it, cand: slices.Concat(runCand, newCand)}
		ids, _, err := idTable(ctx, r.exclude, e)
		if err != nil {
			return nil, err
		}
		ex = make([]bool, len(it.asin))
		for _, x := range ids {
			ex[x] = true
		}
	}
	excluded := func(x, y int32) bool {
		return (ex != nil && ex[y]) || twin[x-nRun] == y
	}

	w, err := schema.NewWriter[schema.PublishedCols](filepath.Join(o.Out, publishedFile), schema.RowGroupRows)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	scored := 0
	err = publishLists(ret, it, queries, r.pub, excluded, func(int32, []models.Hit) error {
		scored++
		return nil
	}, func(c schema.PublishedCols, _ int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := w.Append(c); err != nil {
			return err
		}
		return w.EndGroup()
	})
	if err != nil {
		return nil, err
	}
	if _, err := w.Close(); err != nil {
		return nil, err
	}
	if err := writeScoreVectors(filepath.Join(o.Out, scoreVectorsFile), fit, feat, it, queries, r.pub.K); err != nil {
		return nil, err
	}
	if _, err := rej.write(filepath.Join(o.Out, scoreRejectsFile)); err != nil {
		return nil, err
	}

	dropMatrix() // before the rename: the matrix is not an output
	dropMatrix = func() {}

	sum := &ScoreSummary{Format: 1, Run: r.run, Experiment: o.Experiment, Model: model, Features: r.features.Kind,
		Monomer: cache.Version(), TrainCode: r.trainC, FeaturesCode: r.featC,
		Rules: scoreRules{K: r.pub.K, Cross: r.pub.Cross, MinProb: r.pub.MinProb, Exclude: r.exclude},
		Items: read, Scored: scored, InRun: inRun, Rejects: len(rej.rows), Projection: path}
	if path == "blas" {
		// The code's bracket: "v2.13.0 go1.25/amd64 [openblas 0.3.21 Haswell]".
		if _, env, ok := strings.Cut(r.trainC, "["); ok {
			sum.RunBLAS = strings.TrimSuffix(env, "]")
		}
		sum.BLAS = blasEnv()
	}
	if abs, err := filepath.Abs(r.run); err == nil {
		sum.Run = abs
	}
	if r.modelDir != "" {
		if sum.ModelDir, err = filepath.Abs(r.modelDir); err != nil {
			return nil, err
		}
	}
	for _, f := range inputsRead {
		h, err := cache.HashFile(f)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		sum.Inputs = append(sum.Inputs, cache.FileHash{Path: f, SHA256: h, Bytes: fi.Size()})
	}
	for _, name := range []string{publishedFile, scoreRejectsFile, scoreVectorsFile} {
		path := filepath.Join(o.Out, name)
		h, err := cache.HashFile(path)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		rows, err := schema.NumRows(path)
		if err != nil {
			return nil, err
		}
		sum.Outputs = append(sum.Outputs, cache.Output{Name: name, SHA256: h, Bytes: fi.Size(), Rows: &rows})
	}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(o.Out, scoreManifestFile), append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	// rename(2) replaces an empty directory, and only an empty one.
	if err := os.Rename(tmp, final); err != nil {
		return nil, fmt.Errorf("%w: --out %s: %v", pipeline.ErrUsage, final, err)
	}
	done = true
	return sum, nil
}

// writeScoreVectors writes the new items' vectors in export's
// inner-product form (schema export_vectors, `monomer export`'s table), so
// that they can join an exported index: each block of queries projected by
// one Project call as publishLists' TopKLists projects it. WNN has no
// inner-product form here: its table is empty.
func writeScoreVectors(path string, fit *models.Fit, feat models.Features, it *items, queries []int32, k int) error {
	var c schema.ExportVectorsCols
	if d := fit.InnerDim(); d > 0 {
		bs := publishBlock(k)
		for lo := 0; lo < len(queries); lo += bs {
			block := queries[lo:min(lo+bs, len(queries))]
			p, err := fit.Project(feat, block)
			if err != nil {
				return err
			}
			v, err := fit.ItemVectors(p)
			if err != nil {
				return err
			}
			q, off, err := fit.QueryVectors(p)
			if err != nil {
				return err
			}
			b := exportCols(it, block, d, toFloat32(q), toFloat32(v), off)
			c.ID, c.QueryVector = append(c.ID, b.ID...), append(c.QueryVector, b.QueryVector...)
			c.ItemVector, c.QueryOffset = append(c.ItemVector, b.ItemVector...), append(c.QueryOffset, b.QueryOffset...)
		}
	}
	_, err := schema.Write(path, c)
	return err
}

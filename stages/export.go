package stages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"monomer/internal/npy"
	"monomer/models"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// ExportOptions are `monomer export`'s arguments.
type ExportOptions struct {
	RunDir, Experiment, Model string
	// Out is the directory written: it must not exist or be empty.
	Out string
	// Version is the binary's version line, recorded in model.json.
	Version string
	// WNNFeatures lets a WNN be exported: its item vectors are the
	// features themselves, F+1 floats an item (--wnn-features).
	WNNFeatures bool
}

// The files of an export directory (docs/serving.md).
const (
	ExportModelFile   = "model.json"
	ExportVectorsFile = "vectors.parquet"
	exportIDsNpy      = "ids.npy"
	exportQueryNpy    = "query_vectors.npy"
	exportItemNpy     = "item_vectors.npy"
	exportOffsetNpy   = "query_offsets.npy"
	exportVocabulary  = "vocabulary.parquet"
	// ExportScoreDir holds what score --model-dir reads (ExportModel.Score).
	ExportScoreDir = "score"
)

// ExportModel is model.json: what a consumer of the vectors, and `monomer
// score --model-dir`, need to know.
type ExportModel struct {
	Format     int    `json:"format"`
	Model      string `json:"model"`
	Experiment string `json:"experiment"`
	// Features is the experiment's feature kind, bow or image (image
	// features or embeddings: the dense matrix).
	Features string `json:"features"`
	// Items is the number of rows of every table and array.
	Items int `json:"items"`
	// Dimension is the length of query_vector and item_vector.
	Dimension int `json:"dimension"`
	// FeatureDimension is F, the features' length; K and N the model's
	// rank and spaces (N 0 for LMT).
	FeatureDimension int `json:"feature_dimension"`
	K                int `json:"k"`
	N                int `json:"n"`
	// Metric is "inner_product": larger q·v is nearer.
	Metric string `json:"metric"`
	// Probability is P(related) in the exported terms.
	Probability string  `json:"probability"`
	C           float64 `json:"c"`
	// MonomerVersion is the exporting binary's version line.
	MonomerVersion string `json:"monomer_version"`
	// TrainCode and FeaturesCode are the code parts of the run's train and
	// features cache keys ("v2.13.0 go1.26.8/amd64 …"), the versions their
	// first word: score refuses an export of other versions than its own.
	TrainCode           string `json:"train_code"`
	TrainCodeVersion    string `json:"train_code_version"`
	FeaturesCode        string `json:"features_code"`
	FeaturesCodeVersion string `json:"features_code_version"`
	// Run is the run directory exported (absolute), RunID its run id: the
	// last run of it to finish with the experiment's stages (its run log,
	// exportedRunID). TrainedInRun is the run that trained the model, from
	// its train manifest: another run's when the fit was restored from the
	// store or was up to date.
	Run          string `json:"run"`
	RunID        string `json:"run_id,omitempty"`
	TrainedInRun string `json:"trained_in_run,omitempty"`
	// FeaturesParams and IngestParams are the run's features and ingest
	// parameters as their manifests recorded them (tokeniser settings,
	// image_scale; category and depth): how a new item is featurised and
	// scoped. Vocabulary names the copy of the run's vocabulary table (bag
	// of words only).
	FeaturesParams json.RawMessage `json:"features_params"`
	IngestParams   json.RawMessage `json:"ingest_params"`
	Vocabulary     string          `json:"vocabulary,omitempty"`
	// Score is the directory (ScoreDir) of the copies of the run's tables
	// `monomer score --model-dir` reads, laid out as the run's stage
	// directories so that score reads them by the same code as a run's:
	// ingest's items table (ids, subcategories), the features stage's
	// rows and kept items (the catalogue is projected as publish projects
	// it), the train node's fits and params (c and the parameters at the
	// chosen λ). IngestCode and PublishCode are the code parts of those
	// stages' keys, PublishParams the publish: rules ("" and null without
	// a publish node), Exclude the copy of its exclude table.
	Score         string          `json:"score,omitempty"`
	IngestCode    string          `json:"ingest_code,omitempty"`
	PublishCode   string          `json:"publish_code,omitempty"`
	PublishParams json.RawMessage `json:"publish_params,omitempty"`
	Exclude       string          `json:"exclude,omitempty"`
	// Files are the other files of the directory with their sha256.
	Files map[string]string `json:"files"`
}

// ExportSummary is what Export wrote.
type ExportSummary struct {
	Dir       string
	Model     *ExportModel
	Exported  []string // file names, sorted
	ItemsSkip int      // items of the experiment without features
}

// codeVersion is the stage version of a manifest's code ("v2.13.0 go1.26.8/amd64
// …" → "2.13.0").
func codeVersion(code string) string {
	f, _, _ := strings.Cut(code, " ")
	return strings.TrimPrefix(f, "v")
}

// Export writes o.Out: every item of the experiment with features in the
// inner-product form of the trained model (models.Fit.ItemVectors and
// QueryVectors, the retriever's own vectors, in float32), as
// vectors.parquet and .npy arrays in the same row order, with model.json
// and what featurising a new item needs (the vocabulary table, the
// features parameters), and under ExportScoreDir the run's tables
// `monomer score --model-dir` reads (exportScoreFiles). LMT and Monomer; WNN only with o.WNNFeatures,
// its item side being the features themselves; LDA+WNN, which needs topic
// inference for new text, is refused with one line (usage, exit 2). The run is only read; Out is
// written in a temporary directory beside it and renamed into place, so
// it holds a whole export or nothing.
func Export(ctx context.Context, o ExportOptions) (*ExportSummary, error) {
	m, err := models.Lookup(o.Model)
	if err != nil || !retrievable(o.Model) {
		return nil, fmt.Errorf("%w: --model %s: export writes lmt or monomer (wnn with --wnn-features)", pipeline.ErrUsage, o.Model)
	}
	switch {
	case m.Topics:
		return nil, fmt.Errorf("%w: --model %s: its items are topic proportions, which a new item's text would need inferred; export writes lmt or monomer (wnn with --wnn-features)", pipeline.ErrUsage, o.Model)
	case !m.Embeds && !o.WNNFeatures:
		return nil, fmt.Errorf("%w: --model %s: its item side is the features themselves (feature dimension + 1 floats an item, 4,097 for image features); export writes them with --wnn-features", pipeline.ErrUsage, o.Model)
	}
	if o.Out == "" {
		return nil, fmt.Errorf("%w: export needs --out", pipeline.ErrUsage)
	}
	kind, in, err := finishedRun(o.RunDir, o.Experiment, o.Model)
	if err != nil {
		return nil, err
	}
	if err := outOfRun("export", o.Out, o.RunDir); err != nil {
		return nil, err
	}
	if err := emptyOut("export", o.Out); err != nil {
		return nil, err
	}
	expDir := filepath.Join(o.RunDir, o.Experiment)
	trainM, err := cache.ReadManifest(filepath.Join(expDir, pipeline.PartName(Train{}.Name(), o.Model)))
	if err != nil {
		return nil, err
	}
	featM, err := cache.ReadManifest(filepath.Join(expDir, Features{}.Name()))
	if err != nil {
		return nil, err
	}
	ingM, err := cache.ReadManifest(filepath.Join(expDir, Ingest{}.Name()))
	if err != nil {
		return nil, err
	}

	e, err := openRecExperiment(ctx, in, kind, []string{o.Model})
	if err != nil {
		return nil, err
	}
	defer e.close()
	if !slices.IsSorted(e.it.asin) {
		return nil, errors.New("stages: export: the items table is not in id order")
	}
	s := e.fits[o.Model]
	if s == nil {
		return nil, fmt.Errorf("stages: export: no trained %s", o.Model)
	}
	fit, err := models.NewFit(m.Scorer, s.c, s.params)
	if err != nil {
		return nil, err
	}
	q32, v32, off, d, err := exportVectors(ctx, e, fit, o.Model)
	if err != nil {
		return nil, err
	}
	n := len(e.cand)
	cols := exportCols(e.it, e.cand, d, q32, v32, off)
	ids := cols.ID

	abs, _ := filepath.Abs(o.RunDir)
	meta := &ExportModel{Format: 1, Model: o.Model, Experiment: o.Experiment, Features: kind, Items: n,
		Dimension: d, FeatureDimension: fit.Dim, K: fit.K, N: fit.N, Metric: "inner_product",
		Probability: "sigmoid(c - query_offset + dot(query_vector, item_vector))", C: fit.C,
		MonomerVersion: o.Version, TrainCode: trainM.Inputs.Code, TrainCodeVersion: codeVersion(trainM.Inputs.Code),
		FeaturesCode: featM.Inputs.Code, FeaturesCodeVersion: codeVersion(featM.Inputs.Code),
		Run: abs, RunID: exportedRunID(o.RunDir, o.Experiment), TrainedInRun: trainM.RunID, FeaturesParams: featM.Inputs.Params, IngestParams: ingM.Inputs.Params,
		Score: ExportScoreDir, IngestCode: ingM.Inputs.Code, Files: map[string]string{}}

	parent := filepath.Dir(filepath.Clean(o.Out))
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(o.Out)+".export-")
	if err != nil {
		return nil, fmt.Errorf("%w: --out %s: %v", pipeline.ErrUsage, o.Out, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp's 0700 is for the temporary name only
		os.Remove(tmp)
		return nil, fmt.Errorf("stages: export: %w", err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp) // made by this call, holding only its files
		}
	}()
	if _, err := schema.Write(filepath.Join(tmp, ExportVectorsFile), cols); err != nil {
		return nil, err
	}
	for _, w := range []struct {
		name  string
		write func(string) error
	}{
		{exportIDsNpy, func(p string) error { return npy.WriteStrings(p, ids) }},
		{exportQueryNpy, func(p string) error { return npy.WriteFloat32(p, q32, n, d) }},
		{exportItemNpy, func(p string) error { return npy.WriteFloat32(p, v32, n, d) }},
		{exportOffsetNpy, func(p string) error { return npy.WriteFloat64(p, off) }},
	} {
		if err := w.write(filepath.Join(tmp, w.name)); err != nil {
			return nil, err
		}
	}
	if kind == "bow" {
		src, err := in.file(Features{}.Name(), "vocabulary.parquet")
		if err != nil {
			return nil, err
		}
		if err := copyFile(src, filepath.Join(tmp, exportVocabulary)); err != nil {
			return nil, err
		}
		meta.Vocabulary = exportVocabulary
	}
	names := []string{ExportVectorsFile, exportIDsNpy, exportQueryNpy, exportItemNpy, exportOffsetNpy}
	if meta.Vocabulary != "" {
		names = append(names, exportVocabulary)
	}
	copied, err := exportScoreFiles(in, expDir, o.Model, kind, tmp, meta)
	if err != nil {
		return nil, err
	}
	names = append(names, copied...)
	for _, name := range names {
		sum, err := cache.HashFile(filepath.Join(tmp, name))
		if err != nil {
			return nil, err
		}
		meta.Files[name] = sum
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, ExportModelFile), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("stages: export: %w", err)
	}
	// rename(2) replaces an empty directory, and only an empty one: a
	// directory that filled since emptyOut is left as it is. (os.Rename
	// refuses any directory at the new name.)
	if err := syscall.Rename(tmp, o.Out); err != nil {
		return nil, fmt.Errorf("%w: --out %s: %v", pipeline.ErrUsage, o.Out, err)
	}
	done = true
	names = append(names, ExportModelFile)
	slices.Sort(names)
	return &ExportSummary{Dir: o.Out, Model: meta, Exported: names, ItemsSkip: len(e.it.asin) - n}, nil
}

// exportScoreFiles copies into tmp's ExportScoreDir the run's tables
// score reads (ExportModel.Score), each under its stage's directory name,
// and records the publish node's code, rules and exclude table in meta. It
// returns the files' names relative to tmp.
func exportScoreFiles(in inputs, expDir, model, kind, tmp string, meta *ExportModel) ([]string, error) {
	feat := []string{"feature_items.parquet", "bow.parquet", "vocabulary.parquet"}
	if kind != "bow" {
		feat = []string{"feature_items.parquet", imageMatrixFile}
	}
	train := pipeline.PartName(Train{}.Name(), model)
	var names []string
	for _, g := range []struct {
		stage string
		files []string
	}{
		{Ingest{}.Name(), []string{"items.parquet"}},
		{Features{}.Name(), feat},
		{train, []string{"fits.parquet", "params.parquet"}},
	} {
		if err := os.MkdirAll(filepath.Join(tmp, ExportScoreDir, g.stage), 0o755); err != nil {
			return nil, fmt.Errorf("stages: export: %w", err)
		}
		for _, f := range g.files {
			src, err := in.file(g.stage, f)
			if err != nil {
				return nil, err
			}
			name := filepath.ToSlash(filepath.Join(ExportScoreDir, g.stage, f))
			if err := copyFile(src, filepath.Join(tmp, name)); err != nil {
				return nil, err
			}
			names = append(names, name)
		}
	}
	pubDir := filepath.Join(expDir, Publish{}.Name())
	if _, err := os.Stat(filepath.Join(pubDir, cache.ManifestName)); err != nil {
		return names, nil // no publish node: score's k alone
	}
	pm, err := cache.ReadManifest(pubDir)
	if err != nil {
		return nil, err
	}
	meta.PublishCode, meta.PublishParams = pm.Inputs.Code, pm.Inputs.Params
	var p publishParams
	if err := json.Unmarshal(pm.Inputs.Params, &p); err != nil {
		return nil, fmt.Errorf("stages: %s: publish's params: %w", pubDir, err)
	}
	if p.HasExclude && len(pm.Inputs.Files) > 0 {
		// publishParams.Files: the exclude table comes first; the copy is
		// of the content the run published under.
		f := pm.Inputs.Files[0]
		if sum, err := cache.HashFile(f.Path); err != nil || sum != f.SHA256 {
			return nil, fmt.Errorf("%w: %s: the publish: block's exclude table is gone or changed since the run (sha256 %s)", pipeline.ErrBadInput, f.Path, cache.Short(f.SHA256))
		}
		name := filepath.ToSlash(filepath.Join(ExportScoreDir, Publish{}.Name(), "exclude"+filepath.Ext(f.Path)))
		if err := os.MkdirAll(filepath.Join(tmp, ExportScoreDir, Publish{}.Name()), 0o755); err != nil {
			return nil, fmt.Errorf("stages: export: %w", err)
		}
		if err := copyFile(f.Path, filepath.Join(tmp, name)); err != nil {
			return nil, err
		}
		meta.Exclude = name
		names = append(names, name)
	}
	return names, nil
}

// exportVectors is q, v (row-major, float32) and the query offsets of
// every candidate of e, of dimension d: the retriever's own vectors
// (models.Fit.ItemVectors and QueryVectors; WNN's Retriever.WNNRow).
func exportVectors(ctx context.Context, e *recExperiment, fit *models.Fit, model string) (q, v []float32, off []float64, d int, err error) {
	if fit.Model == models.ModelWNN {
		r, err := e.retriever(ctx, model)
		if err != nil {
			return nil, nil, nil, 0, err
		}
		d = fit.Dim + 1
		n := len(e.cand)
		q, v, off = make([]float32, n*d), make([]float32, n*d), make([]float64, n)
		q64, v64 := make([]float64, d), make([]float64, d)
		for c := range n {
			if off[c], err = r.WNNRow(c, q64, v64); err != nil {
				return nil, nil, nil, 0, err
			}
			for j := range d {
				q[c*d+j], v[c*d+j] = float32(q64[j]), float32(v64[j])
			}
		}
		return q, v, off, d, nil
	}
	p, err := fit.Project(e.feat, e.cand)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	v64, err := fit.ItemVectors(p)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	q64, off, err := fit.QueryVectors(p)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	return toFloat32(q64), toFloat32(v64), off, fit.InnerDim(), nil
}

func toFloat32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

// exportedRunID is the id of the last run of runDir whose end record
// (pipeline.RunLogName) lists a stage of experiment as run, up to date or
// restored: the run that left its outputs as they are; "" when the log
// has none.
func exportedRunID(runDir, experiment string) string {
	recs, _, err := pipeline.ReadRunLog(runDir)
	if err != nil {
		return ""
	}
	ofExp := func(id string) bool { return strings.HasPrefix(id, experiment+"/") }
	for _, r := range slices.Backward(recs) {
		if r.Event == "end" && r.Stages != nil &&
			(slices.ContainsFunc(r.Stages.Run, ofExp) || slices.ContainsFunc(r.Stages.Skipped, ofExp) || slices.ContainsFunc(r.Stages.Restored, ofExp)) {
			return r.RunID
		}
	}
	return ""
}

// outOfRun refuses an --out that is dir (a run directory, or the export
// score reads) or lies inside it: the command only reads dir, and a file in
// a run is the pipeline's. Paths compare absolute and cleaned, symlinks
// resolved in dir and in out's nearest existing parent, since out itself
// is yet to be made.
func outOfRun(command, out, dir string) error {
	real := func(p string) (string, error) {
		p, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		var rest []string
		for {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				return filepath.Join(append([]string{r}, rest...)...), nil
			}
			parent := filepath.Dir(p)
			if parent == p {
				return p, nil
			}
			rest = append([]string{filepath.Base(p)}, rest...)
			p = parent
		}
	}
	o, err := real(out)
	if err != nil {
		return fmt.Errorf("%w: --out %s: %v", pipeline.ErrUsage, out, err)
	}
	d, err := real(dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", pipeline.ErrUsage, dir, err)
	}
	if rel, err := filepath.Rel(d, o); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		where := "inside "
		if rel == "." {
			where = ""
		}
		return fmt.Errorf("%w: --out %s is %s%s, which %s only reads: write it elsewhere", pipeline.ErrUsage, out, where, dir, command)
	}
	return nil
}

// emptyOut checks that dir does not exist or is an empty directory:
// command (export, score) writes only files it creates.
func emptyOut(command, dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: --out %s: %v", pipeline.ErrUsage, dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: --out %s is not a directory: %s writes a new directory (or fills an empty one)", pipeline.ErrUsage, dir, command)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%w: --out %s: %v", pipeline.ErrUsage, dir, err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("%w: --out %s is not empty: %s writes a new directory (or fills an empty one)", pipeline.ErrUsage, dir, command)
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("stages: export: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("stages: export: %w", err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("stages: export: %s: %w", dst, err)
	}
	return nil
}

// exportCols are the export_vectors rows of items rows (indices into it)
// from their vectors, d values a row: `monomer export`'s table, and `monomer
// score`'s of new items.
func exportCols(it *items, rows []int32, d int, q32, v32 []float32, off []float64) schema.ExportVectorsCols {
	n := len(rows)
	c := schema.ExportVectorsCols{ID: make([]string, n), QueryVector: make([][]float32, n), ItemVector: make([][]float32, n), QueryOffset: off}
	for i, r := range rows {
		c.ID[i] = it.asin[r]
		c.QueryVector[i] = q32[i*d : (i+1)*d : (i+1)*d]
		c.ItemVector[i] = v32[i*d : (i+1)*d : (i+1)*d]
	}
	return c
}

package stages

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"monomer/graph"
	"monomer/internal/setting"
	"monomer/job"
	"monomer/models"
	"monomer/pipeline"
	"monomer/schema"
)

// Train fits the experiment's models on the train pairs, choosing λ on the
// validation pairs: one DAG node per model (PartedStage), train.wnn,
// train.ct, train.lda, train.lmt, train.monomer, each with its own key
// holding only that model's settings, so changing Monomer's K retrains
// Monomer alone and a scheduler can train the models on several machines.
// Each learned model's node writes, in <exp>/train.<model>/, params.parquet
// (the model's learned parameters), fits.parquet (its grid points),
// trace.parquet (its L-BFGS iterations) and, for LDA, topics.parquet (the
// topic proportions WNN ran on). CT, a counting model, has no λ and no
// iterations: train.ct writes its count matrix, ct_counts.parquet.
type Train struct{}

var _ PartedStage[trainParams] = Train{}

func (Train) Name() string { return "train" }

// Deps: ingest too, for the item count the feature rows are checked
// against (loadFeatures).
func (Train) Deps() []string { return []string{"ingest", "features", "split"} }

// Parts are the experiment's models, in job order.
func (Train) Parts(e *job.Resolved) []string { return slices.Clone(e.Models) }

// learned are the models of ms with learned parameters (fits.parquet and
// the like): all but the counted (CT).
func learned(ms []string) []string {
	return slices.DeleteFunc(slices.Clone(ms), func(m string) bool { return registered(m).Counted })
}

// registered is the registry's entry of model, which job validation
// checked is there.
func registered(model string) *models.Model {
	m, err := models.Lookup(model)
	if err != nil {
		panic(err) // job.Validate rejects a model the registry does not have
	}
	return m
}

// trainDir is the directory node train.<model> of the experiment wrote.
func trainDir(in inputs, model string) (string, error) {
	return in(pipeline.PartName(Train{}.Name(), model))
}

// trainParams holds only what one model reads (models.Model.Reads): a
// setting of another model is zero and left out of the key, so changing it
// reruns nothing of this one. Features is the kind of features a learned
// model trains on (CT reads none). The key is setting.Key's: the settings
// by their job-file names, so a new model setting needs no line here.
type trainParams struct {
	models.TrainSettings `yaml:",inline"`
	Features             string `yaml:"features"`
	// Warm is the predecessor of warm_from (train_warm.go), zero without.
	Warm warmParams `yaml:"warm_from"`
}

// MarshalJSON is the node's key (setting.Key): a method of trainParams, not
// of TrainSettings, whose promotion would take over the job's JSON. Why a
// predecessor is missing is for the WARN: the key holds only that it is
// missing, so it is the same wherever the run root lies.
func (p trainParams) MarshalJSON() ([]byte, error) {
	if p.Warm.Missing != "" {
		p.Warm.Missing = "no predecessor"
	}
	return setting.Key(p)
}

// PartParams are the parameters of node train.<model>: the settings model
// reads.
func (Train) PartParams(e *job.Resolved, model string) trainParams {
	m := registered(model)
	p := trainParams{TrainSettings: setting.Settle(m.Reads(e.Settings.TrainSettings))}
	if !m.Counted {
		p.Features = e.Features
	}
	p.Warm = warmFor(e, model)
	return p
}

// specFor is the training spec of a learned model.
func specFor(p trainParams, model string) models.Spec {
	return registered(model).Spec(p.TrainSettings)
}

// fitsTable and paramsTable accumulate a model's rows.
type fitsTable struct {
	model, status, flags               []string
	lambda, verr, vll, tobj, c, spread []float64
	iters, best, k, n                  []int32
	selected                           []bool
	evals, grads                       []int32
	fobj                               []float64
	gateSpaces, gateRoutes             []float64
}

func (t *fitsTable) add(model string, f *models.Fit) {
	for _, g := range f.Grid {
		t.spread = append(t.spread, g.ValidSpread)
		t.flags = append(t.flags, strings.Join(g.Flags(), ","))
		sel := g.Lambda == f.Lambda
		c := math.NaN()
		if sel {
			c = f.C
		}
		t.model = append(t.model, model)
		t.lambda = append(t.lambda, g.Lambda)
		t.verr = append(t.verr, g.ValidError)
		t.vll = append(t.vll, g.ValidLogLik)
		t.tobj = append(t.tobj, g.TrainObjective)
		t.iters = append(t.iters, int32(g.Iterations))
		t.best = append(t.best, int32(g.BestIteration))
		t.status = append(t.status, g.Status)
		t.selected = append(t.selected, sel)
		t.k = append(t.k, int32(f.K))
		t.n = append(t.n, int32(f.N))
		t.c = append(t.c, c)
		t.evals = append(t.evals, int32(g.Evaluations))
		t.grads = append(t.grads, int32(g.GradEvaluations))
		t.fobj = append(t.fobj, g.FinalObjective)
		t.gateSpaces = append(t.gateSpaces, g.Gate.Spaces)
		t.gateRoutes = append(t.gateRoutes, g.Gate.Routes)
	}
}

// traceTable accumulates a model's per-iteration trace.
type traceTable struct {
	model              []string
	lambda, obj, verr  []float64
	iter, evals, grads []int32
}

func (t *traceTable) add(model string, f *models.Fit) {
	for _, p := range f.Trace {
		t.model = append(t.model, model)
		t.lambda = append(t.lambda, p.Lambda)
		t.iter = append(t.iter, int32(p.Iteration))
		t.obj = append(t.obj, p.Objective)
		t.verr = append(t.verr, p.ValidError)
		t.evals = append(t.evals, int32(p.Evaluations))
		t.grads = append(t.grads, int32(p.GradEvaluations))
	}
}

type paramsTable struct {
	model, param []string
	row          []int32
	values       [][]float64
}

// add appends a row-major rows × cols matrix, one table row per matrix row.
func (t *paramsTable) add(model, name string, rows, cols int, data []float64) {
	for r := range rows {
		t.addRow(model, name, r, data[r*cols:(r+1)*cols])
	}
}

func (t *paramsTable) addRow(model, name string, r int, values []float64) {
	t.model = append(t.model, model)
	t.param = append(t.param, name)
	t.row = append(t.row, int32(r))
	t.values = append(t.values, values)
}

func (Train) Run(ctx context.Context, env *pipeline.Env, p trainParams) (*pipeline.Result, error) {
	switch env.Part {
	case "":
		return nil, fmt.Errorf("stages: train runs one node per model (train.<model>), and was given none")
	}
	if registered(env.Part).Counted {
		return trainCT(ctx, env, p)
	}
	return trainModel(ctx, env, p, env.Part)
}

// ctCountsFile is train.ct's table.
const ctCountsFile = "ct_counts.parquet"

// trainCT counts the train positives between subcategories (models.FitCT)
// and writes the count matrix.
func trainCT(ctx context.Context, env *pipeline.Env, p trainParams) (*pipeline.Result, error) {
	it, err := readItems(ctx, env.InDir)
	if err != nil {
		return nil, err
	}
	pairs, err := readPairs(ctx, env.InDir)
	if err != nil {
		return nil, err
	}
	ct, err := models.FitCT(it.sub, it.subName, splitPairs(pairs)[graph.Train], p.CTTop)
	if err != nil {
		return nil, err
	}
	var t schema.CTCountsCols
	for _, c := range ct.Counts() {
		t.Source, t.Target = append(t.Source, c.SourceName), append(t.Target, c.TargetName)
		t.Links, t.Rank, t.Kept = append(t.Links, c.Links), append(t.Rank, c.Rank), append(t.Kept, c.Kept)
		t.SourceIdx, t.TargetIdx = append(t.SourceIdx, c.Source), append(t.TargetIdx, c.Target)
	}
	n, err := schema.Write(filepath.Join(env.OutDir, ctCountsFile), t)
	if err != nil {
		return nil, err
	}
	return &pipeline.Result{Rows: map[string]int64{"ct_counts": n}, Stats: map[string]any{"ct_top": ct.Top()}}, nil
}

// readCT rebuilds the CT node train.ct fitted over its items.
func readCT(ctx context.Context, in inputs, it *items) (*models.CT, error) {
	dir, err := trainDir(in, models.ModelCT)
	if err != nil {
		return nil, err
	}
	c, err := schema.ReadAll[schema.CTCountsCols](ctx, filepath.Join(dir, ctCountsFile))
	if err != nil {
		return nil, err
	}
	counts := make([]models.CTCount, len(c.Source))
	for i := range counts {
		counts[i] = models.CTCount{Source: c.SourceIdx[i], Target: c.TargetIdx[i], SourceName: c.Source[i], TargetName: c.Target[i],
			Links: c.Links[i], Rank: c.Rank[i], Kept: c.Kept[i]}
	}
	return models.NewCT(it.sub, it.subName, counts)
}

// trainModel fits one model and writes its tables into env.OutDir. Its
// random streams are named by the model ("train/<model>", "lda" for the
// topics), so a
// model draws the same numbers whichever other models the experiment has.
func trainModel(ctx context.Context, env *pipeline.Env, p trainParams, model string) (*pipeline.Result, error) {
	feat, counts, closeFeat, err := loadFeatures(ctx, env.InDir, p.Features, registered(model).Topics)
	if err != nil {
		return nil, err
	}
	defer closeFeat()
	if p.Features == "embeddings" {
		if err := checkEmbeddingDim(env.Experiment, model, p.TrainSettings, feat.Dim()); err != nil {
			return nil, err
		}
	}
	pairs, err := readPairs(ctx, env.InDir)
	if err != nil {
		return nil, err
	}
	sp := splitPairs(pairs)
	train, valid := sp[graph.Train], sp[graph.Valid]
	var fits fitsTable
	var params paramsTable
	var trace traceTable
	rows := map[string]int64{}
	stats := map[string]any{}
	f := feat
	if registered(model).Topics {
		topics, words, st, err := fitTopics(ctx, env, p, counts)
		if err != nil {
			return nil, err
		}
		stats["lda_topics"] = st
		rows["topics"], err = writeTopics(env.OutDir, topics, counts)
		if err != nil {
			return nil, err
		}
		// The topic-word matrix (topics × vocabulary) sits with the
		// WNN that reads its proportions.
		for i, row := range words {
			params.addRow(model, "topic_words", i, row)
		}
		f = topics
	}
	spec := specFor(p, model)
	var estimate int64
	spec.Memory = func(data int64) error {
		// The parameters' share (the pre-flight's), the data's, and the
		// pairs this stage read and split.
		estimate = modelMemory(model, f.Dim(), p.TrainSettings) + data +
			int64(len(pairs)+len(train)+len(valid))*int64(unsafe.Sizeof(graph.Pair{}))
		if have, err := machineMemory(); err == nil && estimate > have {
			return fmt.Errorf("%w: experiment %s: training %s needs about %s for %d train and %d validation pairs on %d-dimensional features, more than the %s this machine has available",
				job.ErrConfig, env.Experiment, model, pipeline.GiB(estimate), len(train), len(valid), f.Dim(), pipeline.GiB(have))
		}
		return nil
	}
	var vocab []string // the bag of words' terms, which warm_from maps the parameters through
	if p.Features == "bow" && p.Warm.Dir != "" && !registered(model).Topics {
		v, err := readVocabulary(ctx, env.InDir)
		if err != nil {
			return nil, err
		}
		for _, t := range v {
			vocab = append(vocab, t.Term)
		}
	}
	start, warnings, err := warmStart(ctx, p.Warm, spec, model, f.Dim(), vocab)
	if err != nil {
		return nil, err
	}
	spec.Start = start
	if start != nil {
		stats["warm_from"] = map[string]any{"lambda": start.Lambda, "train_version": p.Warm.TrainVersion}
	}
	bar := newFitProgress(env, model, spec.MaxIter)
	fit, err := models.Train(ctx, f, train, valid, spec, env.RNG("train/"+model), bar.update)
	bar.done()
	if err != nil {
		return nil, fmt.Errorf("stages: train %s: %w", model, err)
	}
	fits.add(model, fit)
	trace.add(model, fit)
	params.add(model, "c", 1, 1, []float64{fit.C})
	for _, p := range fit.Params {
		params.add(model, p.Name, p.Rows, p.Cols, p.Data)
	}
	st := map[string]any{"lambda": fit.Lambda, "valid_error": fit.ValidError,
		"iterations": fit.Iterations, "params": fit.NumParams(), "feature_scale": fit.FeatureScale,
		"sparse_density": fit.SparseDensity, "memory_estimate": estimate}
	if registered(model).Spaces() {
		for _, g := range fit.Grid {
			if g.Lambda == fit.Lambda {
				st["gate_spaces"], st["gate_routes"] = g.Gate.Spaces, g.Gate.Routes
			}
		}
	}
	stats[model] = st
	warnings = append(warnings, degenerateWarnings(model, fit)...)
	rows["fits"], err = schema.Write(filepath.Join(env.OutDir, "fits.parquet"), schema.FitsCols{
		Model: fits.model, Lambda: fits.lambda, ValidError: fits.verr, ValidLogLikelihood: fits.vll,
		TrainObjective: fits.tobj, Iterations: fits.iters, BestIteration: fits.best, Status: fits.status,
		Selected: fits.selected, K: fits.k, N: fits.n, C: fits.c, ValidSpread: fits.spread, Flags: fits.flags,
		Evaluations: fits.evals, GradEvaluations: fits.grads, FinalObjective: fits.fobj,
		GateSpaces: fits.gateSpaces, GateRoutes: fits.gateRoutes})
	if err != nil {
		return nil, err
	}
	rows["trace"], err = schema.Write(filepath.Join(env.OutDir, "trace.parquet"), schema.TraceCols{
		Model: trace.model, Lambda: trace.lambda, Iteration: trace.iter, Objective: trace.obj,
		ValidError: trace.verr, Evaluations: trace.evals, GradEvaluations: trace.grads})
	if err != nil {
		return nil, err
	}
	rows["params"], err = schema.Write(filepath.Join(env.OutDir, "params.parquet"), schema.ParamsCols{
		Model: params.model, Param: params.param, Row: params.row, Values: params.values})
	if err != nil {
		return nil, err
	}
	return &pipeline.Result{Rows: rows, Stats: stats, Warnings: warnings}, nil
}

// degenerateWarnings names every grid point of fit whose predictions are
// (nearly) constant or whose line search failed at the start (see
// models.GridPoint.Flags).
func degenerateWarnings(model string, fit *models.Fit) []pipeline.Warning {
	var out []pipeline.Warning
	for _, g := range fit.Grid {
		for _, flag := range g.Flags() {
			msg := fmt.Sprintf("constant predictor: validation probabilities span %.2g (< %g)", g.ValidSpread, models.ConstantSpread)
			switch flag {
			case models.FlagEarlyLineSearchEnd:
				msg = fmt.Sprintf("line search failed after %d iterations (< %d): %s", g.Iterations, models.EarlyStopIters, g.Status)
			case models.FlagKeptStart:
				msg = fmt.Sprintf("no iteration of %d beat the random start on validation; the start was kept", g.Iterations)
			}
			out = append(out, pipeline.Warning{Msg: msg, Attrs: map[string]any{
				"model": model, "lambda": g.Lambda, "flag": flag, "selected": g.Lambda == fit.Lambda}})
		}
	}
	return out
}

// fitTopics runs LDA on the items' raw vocabulary counts (gensim defaults but
// the topic count and the passes: lda_passes, or enough for
// models.LDAMinUpdates M-steps) and returns the topic proportions of every
// item.
func fitTopics(ctx context.Context, env *pipeline.Env, p trainParams, counts *csr) (*models.TopicMatrix, [][]float64, models.LDAStats, error) {
	if counts == nil {
		return nil, nil, models.LDAStats{}, fmt.Errorf("stages: lda needs bag-of-words features")
	}
	lda, st, err := models.FitLDA(ctx, counts, models.LDAOptions{
		Topics: p.Topics, Passes: p.LDAPasses, MinUpdates: models.LDAMinUpdates,
	}, env.RNG("lda"))
	if err != nil {
		return nil, nil, st, err
	}
	st.Evaluations = nil // the last bound (PerWordBound) is kept; the series would bloat the manifest
	return lda.Transform(counts), lda.Topics(), st, nil
}

func writeTopics(dir string, t *models.TopicMatrix, counts *csr) (int64, error) {
	var idx []int32
	var props [][]float32
	for i := range t.Rows() {
		if counts.empty(i) {
			continue
		}
		idx = append(idx, int32(i))
		props = append(props, t.Row(i))
	}
	return schema.Write(filepath.Join(dir, "topics.parquet"), schema.TopicsCols{ItemIdx: idx, Proportions: props})
}

package stages

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"monomer/graph"
	"monomer/models"
	"monomer/pipeline"
	"monomer/schema"
)

// Train fits every model of the experiment on the train pairs, choosing λ on
// the validation pairs. Outputs: params.parquet (learned parameters of every
// model), fits.parquet (every grid point), trace.parquet (every L-BFGS
// iteration) and, with LDA, topics.parquet (the
// topic proportions WNN ran on). CT is a counting model fitted where it is
// scored, in evaluate.
type Train struct{}

var _ pipeline.Stage = Train{}

func (Train) Name() string   { return "train" }
func (Train) Deps() []string { return []string{"features", "split"} }

// trainParams holds only what the experiment's models read: a setting of a
// model it does not train is zero and omitted, so changing it reruns nothing
// (omitempty also keeps the key of an experiment training every model as it
// was).
type trainParams struct {
	Models     []string  `json:"models"`
	K          int       `json:"k,omitempty"`
	MonomerK   int       `json:"monomer_k,omitempty"`
	N          int       `json:"n,omitempty"`
	Topics     int       `json:"topics,omitempty"`
	LDAPasses  int       `json:"lda_passes,omitempty"`
	Lambdas    []float64 `json:"lambdas,omitempty"`
	MaxIter    int       `json:"max_iter,omitempty"`
	ValidEvery int       `json:"valid_every,omitempty"`
	Patience   int       `json:"patience,omitempty"`
	WarmStart  bool      `json:"warm_start,omitempty"`
}

func (Train) Key(e *pipeline.Resolved) (any, []string) {
	return keyTrainParams(e), nil
}

// keyTrainParams keeps each setting only when a model of e reads it.
func keyTrainParams(e *pipeline.Resolved) trainParams {
	s := e.Settings
	p := trainParams{Models: e.Models}
	for _, m := range e.Models {
		switch m {
		case "ct":
			continue // fitted in evaluate
		case "lmt":
			p.K = s.K
		case "monomer":
			p.MonomerK, p.N = s.MonomerK, s.N
		case "lda":
			p.Topics, p.LDAPasses = s.Topics, s.LDAPasses
		}
		p.Lambdas, p.MaxIter, p.ValidEvery = s.Lambdas, s.MaxIter, s.ValidEvery
		p.Patience, p.WarmStart = s.Patience, s.WarmStart
	}
	return p
}

// specFor is the training spec of a learned model; LDA trains WNN.
func specFor(e *pipeline.Resolved, model string) models.Spec {
	s := e.Settings
	spec := models.Spec{Model: model, Lambdas: s.Lambdas, MaxIter: s.MaxIter, ValidEvery: s.ValidEvery,
		Patience: max(s.Patience, 0), WarmStart: s.WarmStart}
	switch model {
	case "lmt":
		spec.K = s.K
	case "monomer":
		spec.K, spec.N = s.MonomerK, s.N
	case "lda":
		spec.Model = models.ModelWNN
	}
	return spec
}

// fitsTable and paramsTable accumulate rows across models.
type fitsTable struct {
	model, status, flags               []string
	lambda, verr, vll, tobj, c, spread []float64
	iters, best, k, n                  []int32
	selected                           []bool
	evals, grads                       []int32
	fobj                               []float64
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
	}
}

// traceTable accumulates every model's per-iteration trace.
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

func (Train) Run(ctx context.Context, env *pipeline.Env) (*pipeline.Result, error) {
	feat, counts, closeFeat, err := loadFeatures(env)
	if err != nil {
		return nil, err
	}
	defer closeFeat()
	pairs, err := readPairs(env.InDir("split"))
	if err != nil {
		return nil, err
	}
	train, valid := bySplit(pairs, graph.Train), bySplit(pairs, graph.Valid)
	var fits fitsTable
	var params paramsTable
	var trace traceTable
	rows := map[string]int64{}
	stats := map[string]any{}
	var warnings []pipeline.Warning
	for _, model := range env.Exp.Models {
		if model == "ct" {
			continue
		}
		f := feat
		if model == "lda" {
			topics, words, st, err := fitTopics(env, counts)
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
		spec := specFor(env.Exp, model)
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
		stats[model] = map[string]any{"lambda": fit.Lambda, "valid_error": fit.ValidError,
			"iterations": fit.Iterations, "params": fit.NumParams(), "feature_scale": fit.FeatureScale}
		warnings = append(warnings, degenerateWarnings(model, fit)...)
	}
	var err2 error
	rows["fits"], err2 = schema.Write(filepath.Join(env.OutDir, "fits.parquet"), schema.Fits,
		fits.model, fits.lambda, fits.verr, fits.vll, fits.tobj, fits.iters, fits.best, fits.status,
		fits.selected, fits.k, fits.n, fits.c, fits.spread, fits.flags, fits.evals, fits.grads, fits.fobj)
	if err2 != nil {
		return nil, err2
	}
	rows["trace"], err2 = schema.Write(filepath.Join(env.OutDir, "trace.parquet"), schema.Trace,
		trace.model, trace.lambda, trace.iter, trace.obj, trace.verr, trace.evals, trace.grads)
	if err2 != nil {
		return nil, err2
	}
	rows["params"], err2 = schema.Write(filepath.Join(env.OutDir, "params.parquet"), schema.Params,
		params.model, params.param, params.row, params.values)
	if err2 != nil {
		return nil, err2
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
func fitTopics(env *pipeline.Env, counts *csr) (*models.TopicMatrix, [][]float64, models.LDAStats, error) {
	if counts == nil {
		return nil, nil, models.LDAStats{}, fmt.Errorf("stages: lda needs bag-of-words features")
	}
	lda, st, err := models.FitLDA(counts, models.LDAOptions{
		Topics: env.Exp.Settings.Topics, Passes: env.Exp.Settings.LDAPasses, MinUpdates: models.LDAMinUpdates,
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
	return schema.Write(filepath.Join(dir, "topics.parquet"), schema.Topics, idx, props)
}

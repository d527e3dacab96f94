package stages

import (
	"context"
	"fmt"
	"math"
	"path/filepath"

	"monomer/graph"
	"monomer/models"
	"monomer/pipeline"
	"monomer/schema"
)

// Train fits every model of the experiment on the train pairs, choosing λ on
// the validation pairs. Outputs: params.parquet (learned parameters of every
// model), fits.parquet (every grid point) and, with LDA, topics.parquet (the
// topic proportions WNN ran on). CT is a counting model fitted where it is
// scored, in evaluate.
type Train struct{}

var _ pipeline.Stage = Train{}

func (Train) Name() string   { return "train" }
func (Train) Deps() []string { return []string{"features", "split"} }

type trainParams struct {
	Models     []string  `json:"models"`
	K          int       `json:"k"`
	MonomerK   int       `json:"monomer_k"`
	N          int       `json:"n"`
	Topics     int       `json:"topics"`
	LDAPasses  int       `json:"lda_passes"`
	Lambdas    []float64 `json:"lambdas"`
	MaxIter    int       `json:"max_iter"`
	ValidEvery int       `json:"valid_every"`
}

func (Train) Key(e *pipeline.Resolved) (any, []string) {
	s := e.Settings
	return trainParams{e.Models, s.K, s.MonomerK, s.N, s.Topics, s.LDAPasses, s.Lambdas, s.MaxIter, s.ValidEvery}, nil
}

// specFor is the training spec of a learned model; LDA trains WNN.
func specFor(e *pipeline.Resolved, model string) models.Spec {
	s := e.Settings
	spec := models.Spec{Model: model, Lambdas: s.Lambdas, MaxIter: s.MaxIter, ValidEvery: s.ValidEvery}
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
	model, status              []string
	lambda, verr, vll, tobj, c []float64
	fobj                       []float64
	iters, best, k, n          []int32
	selected                   []bool
}

func (t *fitsTable) add(model string, f *models.Fit) {
	for _, g := range f.Grid {
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
		t.fobj = append(t.fobj, g.FinalObjective)
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
	rows := map[string]int64{}
	stats := map[string]any{}
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
		tr := env.Track("train "+model, int64(spec.MaxIter*max(1, len(spec.Lambdas))))
		fit, err := models.Train(ctx, f, train, valid, spec, env.RNG("train/"+model), func(models.Progress) { tr.Add(1) })
		tr.Done()
		if err != nil {
			return nil, fmt.Errorf("stages: train %s: %w", model, err)
		}
		fits.add(model, fit)
		params.add(model, "c", 1, 1, []float64{fit.C})
		for _, p := range fit.Params {
			params.add(model, p.Name, p.Rows, p.Cols, p.Data)
		}
		stats[model] = map[string]any{"lambda": fit.Lambda, "valid_error": fit.ValidError,
			"iterations": fit.Iterations, "params": fit.NumParams(), "feature_scale": fit.FeatureScale}
	}
	var err2 error
	rows["fits"], err2 = schema.Write(filepath.Join(env.OutDir, "fits.parquet"), schema.Fits,
		fits.model, fits.lambda, fits.verr, fits.vll, fits.tobj, fits.iters, fits.best, fits.status,
		fits.selected, fits.k, fits.n, fits.c, fits.fobj)
	if err2 != nil {
		return nil, err2
	}
	rows["params"], err2 = schema.Write(filepath.Join(env.OutDir, "params.parquet"), schema.Params,
		params.model, params.param, params.row, params.values)
	if err2 != nil {
		return nil, err2
	}
	return &pipeline.Result{Rows: rows, Stats: stats}, nil
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

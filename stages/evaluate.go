package stages

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime"

	"monomer/graph"
	"monomer/job"
	"monomer/models"
	"monomer/pipeline"
	"monomer/schema"
)

// Evaluate scores every model from its saved parameters (so the parameter
// table is proven complete) on the train, validation and test pairs. It
// writes predictions.parquet (validation and test pairs) and metrics.parquet
// (every split at the chosen λ, and the validation error of every other grid
// point), and slices.parquet (each model's test pairs by cold items, the
// query's training degree and category pair: newTestSlices). CT is scored
// from the count matrix node train.ct wrote.
type Evaluate struct{}

var _ ExpStage[evaluateParams] = Evaluate{}

func (Evaluate) Name() string   { return "evaluate" }
func (Evaluate) Deps() []string { return []string{"ingest", "features", "negatives", "split", "train"} }

// Features is the kind of features the models score on.
type evaluateParams struct {
	Models   []string `json:"models"`
	Features string   `json:"features"`
}

func (Evaluate) Params(e *job.Resolved) evaluateParams {
	return evaluateParams{Models: e.Models, Features: e.Features}
}

// newPredTable returns an empty predictions table with room for n rows:
// appended to from nil, its columns were regrown for every model.
func newPredTable(n int) schema.PredictionsCols {
	return schema.PredictionsCols{
		Model: make([]string, 0, n), Split: make([]string, 0, n), X: make([]string, 0, n), Y: make([]string, 0, n),
		Label: make([]int8, 0, n), Predicted: make([]int8, 0, n),
		Distance: make([]float64, 0, n), Probability: make([]float64, 0, n),
	}
}

type metricTable struct {
	exp, model, split     []string
	errs, auc, ll, lambda []float64
	pairs                 []int64
	k, n, iters           []int32
	selected              []bool
}

func (t *metricTable) add(exp, model, split string, errRate, auc, ll float64, pairs int, lambda float64, k, n, iters int, sel bool) {
	t.exp, t.model, t.split = append(t.exp, exp), append(t.model, model), append(t.split, split)
	t.errs, t.auc, t.ll, t.lambda = append(t.errs, errRate), append(t.auc, auc), append(t.ll, ll), append(t.lambda, lambda)
	t.pairs = append(t.pairs, int64(pairs))
	t.k, t.n, t.iters = append(t.k, int32(k)), append(t.n, int32(n)), append(t.iters, int32(iters))
	t.selected = append(t.selected, sel)
}

// savedFit is one model's training record read back from its train node's
// tables.
type savedFit struct {
	c      float64
	params []models.Param
	grid   []models.GridPoint
	lambda float64
	k, n   int
	iters  int
	// gate is Monomer's models.GateUse at the chosen λ (NaN for others).
	gate models.GateUse
}

// readTrainedFits reads the fits of the learned models among ms from their
// train.<model> directories, as in serves them.
func readTrainedFits(ctx context.Context, in inputs, ms []string) (map[string]*savedFit, error) {
	out := map[string]*savedFit{}
	for _, m := range ms {
		if registered(m).Counted {
			continue
		}
		dir, err := trainDir(in, m)
		if err != nil {
			return nil, err
		}
		one, err := readFits(ctx, dir)
		if err != nil {
			return nil, err
		}
		if one[m] == nil {
			return nil, fmt.Errorf("stages: %s: no fit of %s", dir, m)
		}
		out[m] = one[m]
	}
	return out, nil
}

// readFits reads the fits and parameters of the models in dir (under
// context.TODO: see readItems).
func readFits(ctx context.Context, dir string) (map[string]*savedFit, error) {
	out := map[string]*savedFit{}
	var fits schema.FitsCols
	err := schema.ReadFields(ctx, filepath.Join(dir, "fits.parquet"), &fits, &fits.Model, &fits.Lambda, &fits.ValidError,
		&fits.Iterations, &fits.Selected, &fits.K, &fits.N, &fits.C, &fits.GateSpaces, &fits.GateRoutes)
	if err != nil {
		return nil, err
	}
	for i, m := range fits.Model {
		s := out[m]
		if s == nil {
			s = &savedFit{}
			out[m] = s
		}
		s.grid = append(s.grid, models.GridPoint{Lambda: fits.Lambda[i], ValidError: fits.ValidError[i], Iterations: int(fits.Iterations[i])})
		if fits.Selected[i] {
			s.c, s.lambda, s.k, s.n, s.iters = fits.C[i], fits.Lambda[i], int(fits.K[i]), int(fits.N[i]), int(fits.Iterations[i])
			// Fits written before Train 2.8 have no gate columns: NaN, so
			// an old run directory still serves recommendations.
			s.gate = models.GateUse{Spaces: math.NaN(), Routes: math.NaN()}
			if fits.GateSpaces != nil {
				s.gate = models.GateUse{Spaces: fits.GateSpaces[i], Routes: fits.GateRoutes[i]}
			}
		}
	}
	// Params: one row per matrix row, grouped by (model, param).
	path := filepath.Join(dir, "params.parquet")
	params, err := schema.ReadAll[schema.ParamsCols](ctx, path)
	if err != nil {
		return nil, err
	}
	pm, pn, vals := params.Model, params.Param, params.Values
	for i := 0; i < len(pm); {
		j := i
		var data []float64
		for j < len(pm) && pm[j] == pm[i] && pn[j] == pn[i] {
			data = append(data, vals[j]...)
			j++
		}
		s := out[pm[i]]
		if s == nil {
			return nil, fmt.Errorf("stages: %s: parameters of %s without a fit", path, pm[i])
		}
		if pn[i] != "c" && pn[i] != "topic_words" {
			s.params = append(s.params, models.Param{Name: pn[i], Rows: j - i, Cols: len(vals[i]), Data: data})
		}
		i = j
	}
	return out, nil
}

func (Evaluate) Run(ctx context.Context, env *pipeline.Env, p evaluateParams) (*pipeline.Result, error) {
	// The items, pairs and fits are read on a goroutine of their own
	// while the features load (0.65 serial CPU-s at Electronics' size);
	// the first error in the order items, features, pairs, fits is
	// returned, as when they were read one after another.
	var (
		it              *items
		pairs           []graph.Pair
		saved           map[string]*savedFit
		errIt, errOther error
		side            = make(chan struct{})
	)
	go func() {
		defer close(side)
		if it, errIt = readItems(ctx, env.InDir); errIt != nil {
			return
		}
		if pairs, errOther = readPairs(ctx, env.InDir); errOther != nil {
			return
		}
		saved, errOther = readTrainedFits(ctx, env.InDir, p.Models)
	}()
	feat, _, closeFeat, errFeat := loadFeatures(ctx, env.InDir, p.Features, false)
	<-side
	if errFeat == nil {
		defer closeFeat()
	}
	if err := cmp.Or(errIt, errFeat, errOther); err != nil {
		return nil, err
	}
	splits := []graph.Split{graph.Train, graph.Valid, graph.Test}
	bySplitPairs := splitPairs(pairs)
	// The labels are the same for every model.
	var bySplitLabels [graph.Test + 1][]bool
	predRows := 0 // predictions of one model: the validation and test pairs
	for _, s := range splits {
		p := bySplitPairs[s]
		labels := make([]bool, len(p))
		for i, q := range p {
			labels[i] = q.Label
		}
		bySplitLabels[s] = labels
		if s != graph.Train {
			predRows += len(p)
		}
	}
	// Each model's predictions are written on a goroutine of their own
	// while the next model scores (the writer was a serial second on
	// Electronics' 2 M pairs), in model order, in the row groups
	// schema.Write cuts: the same bytes.
	w, err := schema.NewWriter[schema.PredictionsCols](filepath.Join(env.OutDir, "predictions.parquet"), schema.RowGroupRows)
	if err != nil {
		return nil, err
	}
	pw := schema.NewQueue(w, 1)
	defer pw.Close() // on an early return; the checked Close is below
	var met metricTable
	exp := env.Experiment
	ts, err := experimentSlices(pairs, bySplitPairs[graph.Test], it, feat)
	if err != nil {
		return nil, err
	}
	var sl schema.SlicesCols
	neg, err := negativesUsed(env.InDir)
	if err != nil {
		return nil, err
	}
	for _, model := range p.Models {
		pred := newPredTable(predRows)
		var score func([]graph.Pair) ([]float64, []float64, error)
		var fit *savedFit
		m := registered(model)
		if m.Counted {
			ct, err := readCT(ctx, env.InDir, it)
			if err != nil {
				return nil, err
			}
			score = func(p []graph.Pair) ([]float64, []float64, error) {
				d, pr := ct.Score(p)
				return d, pr, nil
			}
			fit = &savedFit{lambda: math.NaN()}
		} else {
			fit = saved[model]
			if fit == nil {
				return nil, fmt.Errorf("stages: evaluate: no trained %s", model)
			}
			f := feat
			if m.Topics {
				if f, err = readTopics(ctx, env.InDir, model, len(it.asin)); err != nil {
					return nil, err
				}
			}
			mf, err := models.NewFit(m.Scorer, fit.c, fit.params)
			if err != nil {
				return nil, err
			}
			score = func(p []graph.Pair) ([]float64, []float64, error) { return mf.Score(f, p) }
		}
		for _, s := range splits {
			p := bySplitPairs[s]
			dist, prob, err := score(p)
			if err != nil {
				return nil, fmt.Errorf("stages: evaluate %s: %w", model, err)
			}
			// The rows and pair products a Score laid out (up to 5 GB on
			// the train pairs at Women's size) are garbage now: collected
			// here, the next Score's reuse their memory instead of piling
			// on top (the collector's goal is twice the heap it last found
			// live): 6.1 → 5.1 GB peak RssAnon at Women's size.
			runtime.GC()
			labels := bySplitLabels[s]
			// AUC ranks by −d: for the distance models it orders pairs as
			// σ(c − d) does without the sigmoid's saturation ties, and CT's
			// distance is its rank among the linked subcategories.
			score := make([]float64, len(dist))
			for i, d := range dist {
				score[i] = -d
			}
			met.add(exp, model, s.String(), models.ErrorRate(labels, prob), models.AUC(labels, score),
				models.LogLikelihood(labels, prob), len(p), fit.lambda, fit.k, fit.n, fit.iters, true)
			if s == graph.Test {
				ts.add(&sl, exp, model, labels, prob, score)
			}
			if s == graph.Train {
				continue
			}
			for i, q := range p {
				pred.Model = append(pred.Model, model)
				pred.Split = append(pred.Split, s.String())
				pred.X = append(pred.X, it.asin[q.X])
				pred.Y = append(pred.Y, it.asin[q.Y])
				pred.Label = append(pred.Label, b2i(q.Label))
				pred.Distance = append(pred.Distance, dist[i])
				pred.Probability = append(pred.Probability, prob[i])
				pred.Predicted = append(pred.Predicted, b2i(prob[i] > 0.5))
			}
		}
		if len(pred.Model) > 0 {
			if err := pw.Append(pred); err != nil {
				return nil, err
			}
		}
		// The other grid points: their validation error only.
		for _, g := range fit.grid {
			if g.Lambda == fit.lambda {
				continue
			}
			nan := math.NaN()
			met.add(exp, model, "valid", g.ValidError, nan, nan, len(bySplitPairs[graph.Valid]), g.Lambda, fit.k, fit.n, g.Iterations, false)
		}
	}
	np, err := pw.Close()
	if err != nil {
		return nil, err
	}
	nm, err := schema.Write(filepath.Join(env.OutDir, "metrics.parquet"), schema.MetricsCols{
		Experiment: met.exp, Model: met.model, Split: met.split, Error: met.errs, AUC: met.auc,
		LogLikelihood: met.ll, Pairs: met.pairs, Lambda: met.lambda, K: met.k, N: met.n,
		Iterations: met.iters, Selected: met.selected})
	if err != nil {
		return nil, err
	}
	for range sl.Model {
		sl.Negatives = append(sl.Negatives, neg)
	}
	ns, err := schema.Write(filepath.Join(env.OutDir, "slices.parquet"), sl)
	if err != nil {
		return nil, err
	}
	test := map[string]float64{}
	for i := range met.model {
		if met.selected[i] && met.split[i] == "test" {
			test[met.model[i]] = met.errs[i]
		}
	}
	return &pipeline.Result{
		Rows:  map[string]int64{"predictions": np, "metrics": nm, "slices": ns},
		Stats: map[string]any{"test_error": test},
	}, nil
}

func b2i(b bool) int8 {
	if b {
		return 1
	}
	return 0
}

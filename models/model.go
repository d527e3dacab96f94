package models

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"monomer/graph"
)

// Errors of the trained models, wrapped with the detail of what is wrong.
var (
	// ErrInput marks features or pairs the models cannot use.
	ErrInput = errors.New("models: bad input")
	// ErrSpec marks an invalid Spec or an inconsistent parameter set.
	ErrSpec = errors.New("models: invalid spec")
)

// Names of the trained models, as in job files. WNN, LMT and Monomer are
// also the Fit families (Spec.Model) every learned model is scored as; the
// registry (Models) says what each model is.
const (
	ModelWNN     = "wnn"
	ModelLMT     = "lmt"
	ModelMonomer = "monomer"
	ModelCT      = "ct"
	ModelLDA     = "lda"
)

// The defaults of Spec, LDAOptions and FitCT that callers document (the
// job file's settings refer to them).
const (
	DefaultLMTK       = 100 // Spec.K for LMT (paper Table 2)
	DefaultMonomerK   = 20  // Spec.K for Monomer (paper Table 2)
	DefaultMonomerN   = 4   // Spec.N
	DefaultMaxIter    = 200 // Spec.MaxIter
	DefaultValidEvery = 10  // Spec.ValidEvery
	DefaultTopics     = 100 // LDAOptions.Topics
	DefaultCTTop      = 0.5 // FitCT's top: the paper's "top 50%" (§4.2)
)

// Monomer's gate defaults (Spec.GatePenalty, Spec.GateInit).
const (
	// DefaultGatePenalty weights U's L2 penalty as a multiple of λ: the
	// paper's single λ.
	DefaultGatePenalty = 1.0
	// DefaultGateInit is the standard deviation of the starting gating
	// logits Uᵀf_x: near zero, so every item starts with a near-uniform
	// P(k|x) and U costs almost nothing in λ‖U‖² until the data pull it
	// away (O(1) logits start U's penalty at ≈ F·N·λ·GatePenalty).
	// GatePenalty 0.1 with GateInit 1 lets the gate follow planted notions
	// on some image worlds, but on the planted tests' bag of words it
	// neither routes nor helps and costs test error at small sizes, so it
	// is not the default (docs/notes/2026-11-23-recommendations-report.md,
	// docs/notes/2026-11-25-gate-spaces.md).
	DefaultGateInit = 0.01
)

// DefaultLambdas is the L2 grid searched when Spec.Lambdas is empty.
func DefaultLambdas() []float64 { return []float64{0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2} }

// Spec says which model to train and how. The zero value of every field but
// Model works.
type Spec struct {
	// Model is ModelWNN, ModelLMT or ModelMonomer.
	Model string
	// K is the embedding rank (columns of each E). If 0, 100 for LMT and 20
	// for Monomer (paper Table 2); unused by WNN.
	K int
	// N is Monomer's number of non-anchor spaces E₁..E_N. If 0, 4.
	N int
	// GatePenalty is the L2 weight of Monomer's gate U as a multiple of λ:
	// Ω = λ(‖E₀‖² + … + ‖E_N‖² + GatePenalty·‖U‖²). If 0,
	// DefaultGatePenalty. Unused by WNN and LMT.
	GatePenalty float64
	// GateInit is the standard deviation of Monomer's starting gating
	// logits Uᵀf_x (features at mean ‖f‖² = 1). If 0, DefaultGateInit.
	GateInit float64
	// Lambdas is the L2 grid; the fit with the lowest validation error wins.
	// If empty, DefaultLambdas().
	Lambdas []float64
	// MaxIter caps L-BFGS iterations per grid point. If 0, 200.
	MaxIter int
	// ValidEvery is the number of iterations between validation checks; the
	// parameters with the best validation error seen are kept. If 0, 10.
	ValidEvery int
	// Store is the L-BFGS memory. If 0, 20, as the original code.
	Store int
	// Patience ends a grid point after this many consecutive validation
	// checks that do not improve on the parameters kept so far (the order of
	// Train's selection: lower error, then higher log-likelihood). If 0,
	// never: every grid point runs MaxIter iterations or to convergence.
	Patience int
	// WarmStart trains the grid from the smallest λ to the largest, each
	// point starting from the parameters kept at the one before (the first
	// from the seeded initialisation); see GridOrder. Fit.Grid stays in the
	// order of Lambdas. If false, every point starts from the initialisation.
	// A point that never beats its start keeps the previous point's
	// parameters, a tie that selection gives to the λ listed first: with
	// Lambdas in ascending order (the default), the λ they were fitted at.
	WarmStart bool
	// Start, if set, replaces the seeded initialisation by a previous fit
	// (warm_from): the grid's λ closest to Start.Lambda is fitted first from
	// it, then the others in GridOrder, each from the parameters kept at the
	// one before with WarmStart, else from Start too. The seeded draw still
	// happens, so the random streams after it are those of a cold fit.
	Start *Start
	// Float64 runs the kernels in float64. If false, float32 (production:
	// features are float32; the objective and its sums stay float64).
	Float64 bool
	// Workers bounds the goroutines of the pair loops and item groups of one
	// evaluation (the BLAS gemm schedules its own). If 0, GOMAXPROCS.
	// Results do not depend on it.
	Workers int
	// Memory, if set, is given the bytes Train estimates it will hold for
	// its data (pair sets, rows, per-pair state; not the parameters, which
	// grow with the settings alone) once it has counted them, before it
	// allocates the large part; an error from it ends Train.
	Memory func(data int64) error
}

func (s Spec) resolve() (Spec, error) {
	bad := func(format string, a ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("models: spec: "+format+": %w", append(a, ErrSpec)...)
	}
	switch s.Model {
	case ModelWNN:
		s.K, s.N = 0, 0
	case ModelLMT:
		s.N = 0
		if s.K == 0 {
			s.K = DefaultLMTK
		}
	case ModelMonomer:
		if s.K == 0 {
			s.K = DefaultMonomerK
		}
		if s.N == 0 {
			s.N = DefaultMonomerN
		}
	default:
		return bad("model %q is not one of %s, %s, %s", s.Model, ModelWNN, ModelLMT, ModelMonomer)
	}
	if s.K < 0 || s.N < 0 {
		return bad("K=%d N=%d must be positive", s.K, s.N)
	}
	if s.Model != ModelMonomer {
		s.GatePenalty, s.GateInit = 0, 0
	} else {
		for _, g := range []struct {
			name string
			v    *float64
			def  float64
		}{{"GatePenalty", &s.GatePenalty, DefaultGatePenalty}, {"GateInit", &s.GateInit, DefaultGateInit}} {
			if !(*g.v >= 0) || math.IsInf(*g.v, 0) {
				return bad("%s=%v must be finite and non-negative", g.name, *g.v)
			}
			if *g.v == 0 {
				*g.v = g.def
			}
		}
	}
	if len(s.Lambdas) == 0 {
		s.Lambdas = DefaultLambdas()
	} else {
		s.Lambdas = slices.Clone(s.Lambdas)
	}
	for _, l := range s.Lambdas {
		if !(l >= 0) || math.IsInf(l, 0) {
			return bad("lambda %v must be finite and non-negative", l)
		}
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{{"MaxIter", &s.MaxIter, DefaultMaxIter}, {"ValidEvery", &s.ValidEvery, DefaultValidEvery}, {"Store", &s.Store, 20}, {"Patience", &s.Patience, 0}} {
		if *f.v < 0 {
			return bad("%s=%d is negative", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	return s, nil
}

// Param is one learned parameter block, row-major: Data[r*Cols+c]. Rows index
// feature dimensions: "w" is F×1 (WNN), "E" F×K (LMT), "E0".."EN" F×K and
// "U" F×N (Monomer).
type Param struct {
	Name       string
	Rows, Cols int
	Data       []float64
}

// GridPoint is the outcome of training at one λ.
type GridPoint struct {
	Lambda float64
	// ValidError is the validation error of the parameters kept at this λ
	// (NaN without validation pairs).
	ValidError float64
	// ValidLogLik is their mean validation log-likelihood, the tie-break
	// between equal errors.
	ValidLogLik float64
	// TrainObjective is the maximised objective at the kept parameters: mean
	// training log-likelihood minus λ‖Θ‖².
	TrainObjective float64
	// FinalObjective is the maximised objective at the last iterate, which
	// training reached whether or not its parameters were kept.
	FinalObjective float64
	// Iterations is the number of L-BFGS iterations run; BestIteration the
	// one whose parameters were kept.
	Iterations, BestIteration int
	// Status is how L-BFGS stopped (gonum's optimize.Status, or a line-search
	// failure, which ends a fit normally once the objective stops improving
	// in floating point).
	Status string
	// LineSearchFailed: L-BFGS stopped because its line search could not
	// improve the objective (Status says which way), not on convergence.
	LineSearchFailed bool
	// ValidSpread is the range (max − min) of the predicted probabilities
	// σ(c − d) over the validation pairs (the train pairs without
	// validation) at the kept parameters.
	ValidSpread float64
	// Gate is how many spaces Monomer's gate uses at the kept parameters,
	// over the train pairs' queries (see GateUse); NaN for WNN and LMT.
	Gate GateUse
	// Start is how the fit was started: StartRandom, StartPath or
	// StartWarm.
	Start string
	// Evaluations counts the objective evaluations of the fit (each one
	// forward pass over the train pairs); GradEvaluations those of them that
	// also computed the gradient (a backward pass).
	Evaluations, GradEvaluations int
}

// Degenerate fits. A fit can finish "successfully" and still be useless; these
// thresholds name the two ways seen in practice.
const (
	// ConstantSpread: a fit whose validation probabilities all lie within
	// this range predicts (nearly) the same for every pair, e.g. a huge λ
	// that shrank Θ to zero, or LDA topics that do not separate the items.
	// Its error is the class balance whatever the features say. 0.001 is
	// far below the spread of any fit that ranks pairs (the demo's working
	// fits span more than 0.5).
	ConstantSpread = 1e-3
	// EarlyStopIters: a line-search failure before this many iterations
	// means L-BFGS could make no progress from the start (a badly scaled or
	// flat objective), not that it converged.
	EarlyStopIters = 5
)

// The flags GridPoint.Flags returns.
const (
	FlagConstant           = "constant"
	FlagEarlyLineSearchEnd = "early_linesearch_failure"
	FlagKeptStart          = "kept_start"
)

// Flags names what is degenerate about the fit at this point (nil when
// nothing is): FlagConstant when ValidSpread < ConstantSpread,
// FlagEarlyLineSearchEnd when the line search failed before EarlyStopIters
// iterations, FlagKeptStart when iterations ran but none did better on
// validation than the random start, whose parameters were kept (e.g. a λ
// so large that training only shrinks Θ towards a constant predictor). A
// fit started from another fit (Start not StartRandom) that keeps its start
// has found nothing better than a good model, which is no failure to
// learn: it is not flagged.
func (g GridPoint) Flags() []string {
	var f []string
	if g.ValidSpread < ConstantSpread {
		f = append(f, FlagConstant)
	}
	if g.LineSearchFailed && g.Iterations < EarlyStopIters {
		f = append(f, FlagEarlyLineSearchEnd)
	}
	if g.BestIteration == 0 && g.Iterations > 0 && g.Start == StartRandom {
		f = append(f, FlagKeptStart)
	}
	return f
}

// Progress is reported after every L-BFGS iteration.
type Progress struct {
	GridIndex int     // index of Lambda in the grid
	Lambda    float64 // λ being fitted
	Iter      int     // iterations done at this λ
	Objective float64 // maximised objective (mean log-likelihood − λ‖Θ‖²)
	// ValidError is the validation error when it was checked at this
	// iteration, NaN otherwise.
	ValidError float64
}

// Fit is a trained WNN, LMT or Monomer model. A Fit rebuilt with NewFit from
// saved parameters scores exactly as the one Train returned.
type Fit struct {
	Model string
	Dim   int // F, the feature dimension
	K, N  int // rank and number of non-anchor spaces (0 where unused)
	// C is the offset of the shifted sigmoid P(related) = σ(c − d).
	C      float64
	Params []Param
	// Float64 makes Score use the float64 kernels (as the training did).
	Float64 bool
	// FeatureScale is the factor s the features were multiplied by during
	// training (1/sqrt(mean ‖f‖²) over the train items, see featureScale);
	// Params are already multiplied back, so Score uses the raw features.
	// 0 in a Fit made by NewFit.
	FeatureScale float64
	// SparseDensity is the share of non-zero values in the train items'
	// rows where training multiplied them as sparse rows (bag of words, or
	// dense features at most 25 % non-zero such as ReLU image features),
	// and 0 where it multiplied dense rows.
	SparseDensity float64

	// Training record, zero in a Fit made by NewFit.
	Lambda        float64     // the chosen λ
	ValidError    float64     // its validation error
	Iterations    int         // L-BFGS iterations run at the chosen λ
	BestIteration int         // iteration whose parameters were kept
	Grid          []GridPoint // every λ tried, in grid order
	// Trace has one point per L-BFGS iteration of every grid point, in the
	// order they were trained (GridOrder).
	Trace []TracePoint
}

// TracePoint is the state after one L-BFGS iteration (0 = the start).
type TracePoint struct {
	GridIndex int // index of Lambda in Spec.Lambdas
	Lambda    float64
	Iteration int
	Objective float64 // maximised objective at the iterate
	// ValidError is the validation error where it was checked, NaN elsewhere.
	ValidError float64
	// Evaluations and GradEvaluations are those of the grid point so far.
	Evaluations, GradEvaluations int
}

// GridOrder returns the indices of lambdas in the order Train fits them: as
// given, or with warm starts from the smallest λ to the largest (stable for
// equal values), a regularisation path whose every step shrinks the
// parameters the step before found. The path runs upwards because the
// large-λ fits are the ones that can end degenerate (on bags of words a fit
// at λ = 1e-2 collapsed to one prediction, and a downward path carried the
// collapse into every smaller λ); from a small-λ optimum a larger λ only
// shrinks, and the validation checks keep its best point on the way
// (docs/notes/2026-11-27-warm-lambda-path.md).
func GridOrder(lambdas []float64, warmStart bool) []int {
	order := make([]int, len(lambdas))
	for i := range order {
		order[i] = i
	}
	if warmStart {
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case lambdas[a] < lambdas[b]:
				return -1
			case lambdas[a] > lambdas[b]:
				return 1
			}
			return 0
		})
	}
	return order
}

// NumParams is the number of learned values including c: F·(NK+K+N)+1 for
// Monomer (paper §III-C).
func (f *Fit) NumParams() int {
	n := 1
	for _, p := range f.Params {
		n += len(p.Data)
	}
	return n
}

// NewFit rebuilds a model from its offset c and parameter blocks, as saved
// from a Fit; shapes must agree (K, N and F are read from them).
func NewFit(modelName string, c float64, params []Param) (*Fit, error) {
	find := func(name string) (Param, error) {
		for _, p := range params {
			if p.Name == name {
				if p.Rows <= 0 || p.Cols <= 0 || len(p.Data) != p.Rows*p.Cols {
					return p, fmt.Errorf("models: %s parameter %s: %d values for %d×%d: %w", modelName, name, len(p.Data), p.Rows, p.Cols, ErrSpec)
				}
				return p, nil
			}
		}
		return Param{}, fmt.Errorf("models: %s: parameter %s missing: %w", modelName, name, ErrSpec)
	}
	f := &Fit{Model: modelName, C: c}
	var want []string
	switch modelName {
	case ModelWNN:
		want = []string{"w"}
	case ModelLMT:
		want = []string{"E"}
	case ModelMonomer:
		for _, p := range params {
			if p.Name != "U" {
				want = append(want, fmt.Sprintf("E%d", len(want)))
			}
		}
		want = append(want, "U")
	default:
		return nil, fmt.Errorf("models: model %q is not one of %s, %s, %s: %w", modelName, ModelWNN, ModelLMT, ModelMonomer, ErrSpec)
	}
	if len(params) != len(want) {
		return nil, fmt.Errorf("models: %s: %d parameter blocks, want %v: %w", modelName, len(params), want, ErrSpec)
	}
	for _, name := range want {
		p, err := find(name)
		if err != nil {
			return nil, err
		}
		f.Params = append(f.Params, Param{Name: p.Name, Rows: p.Rows, Cols: p.Cols, Data: slices.Clone(p.Data)})
	}
	f.Dim = f.Params[0].Rows
	switch modelName {
	case ModelWNN:
		if f.Params[0].Cols != 1 {
			return nil, fmt.Errorf("models: wnn: w is %d×%d, want F×1: %w", f.Dim, f.Params[0].Cols, ErrSpec)
		}
	case ModelLMT:
		f.K = f.Params[0].Cols
	case ModelMonomer:
		f.K, f.N = f.Params[0].Cols, len(f.Params)-2
		if f.N < 1 {
			return nil, fmt.Errorf("models: monomer: needs E0, E1 and U: %w", ErrSpec)
		}
	}
	for i, p := range f.Params {
		wantCols := f.K
		if modelName == ModelWNN {
			wantCols = 1
		} else if i == len(f.Params)-1 && modelName == ModelMonomer {
			wantCols = f.N
		}
		if p.Rows != f.Dim || p.Cols != wantCols {
			return nil, fmt.Errorf("models: %s: %s is %d×%d, want %d×%d: %w", modelName, p.Name, p.Rows, p.Cols, f.Dim, wantCols, ErrSpec)
		}
	}
	return f, nil
}

// Score returns the distance d(x, y) and P(related) = σ(c − d) of every pair,
// in pair order (labels and splits are ignored). Each distinct item is
// projected once however many pairs it is in. A pair is predicted related iff
// prob > 0.5.
func (f *Fit) Score(feat Features, pairs []graph.Pair) (dist, prob []float64, err error) {
	m, err := newModel(f.Model, f.Dim, f.K, f.N)
	if err != nil {
		return nil, nil, err
	}
	theta, err := m.pack(f.Params)
	if err != nil {
		return nil, nil, err
	}
	src, ps, err := prepare(feat, f.Dim, pairs, "scored")
	if err != nil {
		return nil, nil, err
	}
	dist = make([]float64, len(pairs))
	ev := m.evaluator(src, ps, f.Float64, 0)
	order := ev.order()
	ev.eval(theta, func(k int, d float64) float64 {
		dist[order[k]] = d
		return 0
	}, nil)
	prob = make([]float64, len(pairs))
	forRuns(len(pairs), 0, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			prob[i] = sigmoidStable(f.C - dist[i])
		}
	})
	return dist, prob, nil
}

// prepare checks the features against the model dimension and indexes pairs.
func prepare(feat Features, dim int, pairs []graph.Pair, what string) (rowSource, *pairSet, error) {
	src, err := newRowSource(feat)
	if err != nil {
		return src, nil, err
	}
	if src.dim != dim {
		return src, nil, fmt.Errorf("models: features have dimension %d, model %d: %w", src.dim, dim, ErrInput)
	}
	ps, err := newPairSet(pairs, src.rows, what)
	if err != nil {
		return src, nil, err
	}
	if err := src.check(ps.items); err != nil {
		return src, nil, err
	}
	if src.dense != nil {
		// Packed by the evaluators that read them row by row (see
		// rowSource.lean); the dense rows stay at hand for WNN (see
		// wnnEval.eval).
		src.nnz, src.lean = nonZeros(src.dense, ps.items, src.dim)
	}
	return src, ps, nil
}

// model is one family's parameter layout and kernels. Its parameter vector θ
// excludes the offset c, which the trainer keeps in front of it.
type model interface {
	// size is len(θ).
	size() int
	// draw fills θ with a seeded random start; meanSq is the mean ‖f‖² over
	// the training items, for scales that keep softmax logits O(1).
	draw(theta []float64, rng *rand.Rand, meanSq float64)
	// scale multiplies the parameters the distance is quadratic in by s, so
	// every distance is multiplied by s².
	scale(theta []float64, s float64)
	// params unpacks θ into named blocks; pack is its inverse.
	params(theta []float64) []Param
	pack(params []Param) ([]float64, error)
	// evaluator returns the kernels for the pair set.
	evaluator(src rowSource, ps *pairSet, f64 bool, workers int) evaluator
}

// evaluator computes distances and gradients over one pair set.
type evaluator interface {
	// eval computes every pair's distance at θ and passes it to loss, which
	// returns g = ∂f/∂d for that pair (loss is called concurrently for
	// different pairs). The pair is named by its position k in the pair
	// set's x order (pair order()[k]): the evaluators go through the pairs
	// in that order, and the objective's per-pair arrays are kept in it so
	// that their reads and writes are sequential. If grad is not nil it
	// receives Σ_p g_p ∂d_p/∂θ.
	eval(theta []float64, loss func(k int, d float64) float64, grad []float64)
	// order is the pair set's x order: order()[k] is the pair at position k.
	order() []int32
}

// splitEvaluator is an evaluator that keeps its forward state, so the
// gradient at the point last evaluated without one costs only the backward
// pass (gonum asks for the value alone in about one evaluation in four,
// then for the gradient at the same point when it accepts it).
type splitEvaluator interface {
	evaluator
	// gradient stores in grad Σ_p g_p ∂d_p/∂θ at the θ and g of the last
	// eval, exactly as eval with a gradient would have.
	gradient(grad []float64)
}

func newModel(name string, dim, k, n int) (model, error) {
	switch name {
	case ModelWNN:
		return wnn{f: dim}, nil
	case ModelLMT:
		return lmt{f: dim, k: k}, nil
	case ModelMonomer:
		return monomer{f: dim, k: k, n: n}, nil
	}
	return nil, fmt.Errorf("models: model %q is not one of %s, %s, %s: %w", name, ModelWNN, ModelLMT, ModelMonomer, ErrSpec)
}

// packBlocks copies named blocks into θ at the given offsets after checking
// their shapes; it serves every model's pack.
func packBlocks(params []Param, theta []float64, blocks []blockLayout) error {
	for _, b := range blocks {
		var p *Param
		for i := range params {
			if params[i].Name == b.name {
				p = &params[i]
			}
		}
		if p == nil || p.Rows != b.rows || p.Cols != b.cols || len(p.Data) != b.rows*b.cols {
			return fmt.Errorf("models: parameter %s missing or not %d×%d: %w", b.name, b.rows, b.cols, ErrSpec)
		}
		for r := range b.rows {
			copy(theta[r*b.stride+b.col:r*b.stride+b.col+b.cols], p.Data[r*b.cols:(r+1)*b.cols])
		}
	}
	return nil
}

// unpackBlocks is packBlocks' inverse.
func unpackBlocks(theta []float64, blocks []blockLayout) []Param {
	out := make([]Param, len(blocks))
	for i, b := range blocks {
		d := make([]float64, b.rows*b.cols)
		for r := range b.rows {
			copy(d[r*b.cols:(r+1)*b.cols], theta[r*b.stride+b.col:r*b.stride+b.col+b.cols])
		}
		out[i] = Param{Name: b.name, Rows: b.rows, Cols: b.cols, Data: d}
	}
	return out
}

// blockLayout places a rows×cols block in θ seen as a row-major matrix of
// stride columns, starting at column col.
type blockLayout struct {
	name            string
	rows, cols, col int
	stride          int
}

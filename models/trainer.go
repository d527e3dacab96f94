package models

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"monomer/graph"
	"monomer/internal/hugemem"
	"monomer/internal/par"

	"gonum.org/v1/gonum/optimize"
)

// Train fits spec.Model to the train pairs by L-BFGS, once per λ of
// spec.Lambdas, and returns the fit with the lowest validation error (ties:
// higher validation log-likelihood, then the smaller λ), with every grid
// point's outcome in Fit.Grid.
//
// The maximised objective (paper §III-C), scaled by the number of pairs n so
// λ means the same at every data size, is
//
//	L(Θ) = (1/n) [Σ_R log σ(c − d(x,y)) + Σ_R̄ log(1 − σ(c − d(x,y)))] − λ‖Θ‖²
//
// where Θ excludes the offset c, and Monomer's gate U is weighted
// spec.GatePenalty in ‖Θ‖² (the paper's Ω is "an L2-regularizer" whose
// hyperparameters validation tunes). Every grid point starts from the same seeded
// initialisation (parameters drawn from rng and scaled so the median distance
// over the train pairs is 1, and c at that median), or with spec.WarmStart
// from the parameters kept at the grid point trained before it (GridOrder);
// spec.Start replaces the initialisation by a previous fit, whose λ is then
// trained first (warm.go).
// During a fit the validation error is checked every spec.ValidEvery
// iterations and at the end, and the best parameters seen are kept (as the
// original code does); with spec.Patience the fit stops after that many
// checks in a row that kept nothing.
//
// valid may be empty only with a single λ (the last parameters are kept).
// progress, if not nil, is called after every iteration. The result depends
// only on the inputs and rng's state, not on GOMAXPROCS or spec.Workers.
// Cancelling ctx stops training with ctx's error.
func Train(ctx context.Context, feat Features, train, valid []graph.Pair, spec Spec, rng *rand.Rand, progress func(Progress)) (*Fit, error) {
	spec, err := spec.resolve()
	if err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, fmt.Errorf("models: %s: nil rng: %w", spec.Model, ErrSpec)
	}
	if len(train) == 0 {
		return nil, fmt.Errorf("models: %s: no train pairs: %w", spec.Model, ErrInput)
	}
	if len(valid) == 0 && len(spec.Lambdas) > 1 {
		return nil, fmt.Errorf("models: %s: no validation pairs to choose among %d lambdas: %w", spec.Model, len(spec.Lambdas), ErrInput)
	}
	if feat == nil {
		return nil, fmt.Errorf("models: nil features: %w", ErrInput)
	}
	src, trainSet, err := prepare(feat, feat.Dim(), train, "train")
	if err != nil {
		return nil, err
	}
	m, err := newModel(spec.Model, src.dim, spec.K, spec.N)
	if err != nil {
		return nil, err
	}
	var penalty []float64 // per-element weights of λ‖Θ‖²; nil: all 1
	if mm, ok := m.(monomer); ok {
		mm.gateInit = spec.GateInit
		m = mm
		if spec.GatePenalty != 1 {
			penalty = mm.penalty(spec.GatePenalty)
		}
	}
	t := &trainer{spec: spec, model: m, progress: progress, src: src, trainSet: trainSet}
	scale := featureScale(src, trainSet.items)
	t.featScale = scale // init's: the same items' rows, packed or not
	var vsrc rowSource
	var validSet *pairSet
	var shared *sharedRows
	if len(valid) > 0 {
		vsrc, validSet, err = prepare(feat, src.dim, valid, "valid")
		if err != nil {
			return nil, err
		}
		if rowByRow(m, spec) {
			// Packed once for both pair sets, whose items are mostly the
			// same.
			shared = shareRows(src, trainSet.items, vsrc, validSet.items)
		}
	}
	if spec.Memory != nil {
		if err := spec.Memory(dataMemory(m, spec, src, trainSet, vsrc, validSet, shared)); err != nil {
			return nil, err
		}
	}
	if shared != nil {
		src, vsrc = shared.pack(src, vsrc)
	}
	t.train = newObjective(m.evaluator(src, trainSet, spec.Float64, spec.Workers), trainSet.labels)
	t.train.scale, t.train.penalty = scale, penalty
	if len(valid) > 0 {
		t.valid = newObjective(m.evaluator(vsrc, validSet, spec.Float64, spec.Workers), validSet.labels)
		t.valid.scale = scale
	}
	theta0 := t.init(src, trainSet, rng)

	fit := &Fit{Model: spec.Model, Dim: src.dim, K: spec.K, N: spec.N, Float64: spec.Float64, FeatureScale: scale,
		SparseDensity: src.density(trainSet.items)}
	results := make([]*fitResult, len(spec.Lambdas))
	order, how := GridOrder(spec.Lambdas, spec.WarmStart), StartRandom
	if spec.Start != nil {
		if theta0, err = t.startTheta(spec.Start); err != nil {
			return nil, err
		}
		order, how = warmOrder(spec.Lambdas, spec.WarmStart, StartIndex(spec.Lambdas, spec.Start.Lambda)), StartWarm
	}
	start := theta0
	for _, gi := range order {
		r, err := t.fit(ctx, gi, spec.Lambdas[gi], start)
		if err != nil {
			return nil, err
		}
		r.point.Gate = t.gateUse(r.theta)
		r.point.Start = how
		results[gi] = r
		fit.Trace = append(fit.Trace, r.trace...)
		if spec.WarmStart {
			start, how = r.theta, StartPath
		}
	}
	for _, r := range results {
		fit.Grid = append(fit.Grid, r.point)
	}
	best := choose(results)
	fit.C = best.theta[0]
	fit.Params = m.params(t.train.toRaw(best.theta[1:]))
	fit.Lambda = best.point.Lambda
	fit.ValidError = best.point.ValidError
	fit.Iterations = best.point.Iterations
	fit.BestIteration = best.point.BestIteration
	return fit, nil
}

// choose is the best of results (better), whatever their order.
func choose(results []*fitResult) *fitResult {
	var best *fitResult
	for _, r := range results {
		if best == nil || r.better(best) {
			best = r
		}
	}
	return best
}

type trainer struct {
	spec         Spec
	model        model
	train, valid *objective
	progress     func(Progress)
	src          rowSource // the train pairs' rows
	trainSet     *pairSet
	// featScale is featureScale over trainSet's items if known, else 0.
	featScale float64
}

// gateUse is GridPoint.Gate at θ = [c, Θ]: Monomer's over the train pairs'
// queries, NaN for the other models.
func (t *trainer) gateUse(theta []float64) GateUse {
	mm, ok := t.model.(monomer)
	if !ok {
		return GateUse{Spaces: math.NaN(), Routes: math.NaN()}
	}
	return mm.gateUse(t.src, t.trainSet, t.train.toRaw(theta[1:]))
}

// init draws the shared starting point θ₀ = [c, Θ]. Θ acts on the features
// scaled by t.train.scale, whose mean ‖f‖² over ps is r² below (1 in Train).
func (t *trainer) init(src rowSource, ps *pairSet, rng *rand.Rand) []float64 {
	theta := make([]float64, 1+t.model.size())
	fs := t.featScale
	if fs == 0 || ps != t.trainSet {
		fs = featureScale(src, ps.items)
	}
	r := t.train.scale / fs
	t.model.draw(theta[1:], rng, r*r)
	med := median(t.train.distances(theta[1:]))
	if med > 0 && !math.IsInf(med, 0) {
		// Every model's distance is quadratic in its scaled parameters.
		t.model.scale(theta[1:], 1/math.Sqrt(med))
		med = median(t.train.distances(theta[1:]))
	}
	theta[0] = med
	return theta
}

// rowByRow reports whether m's evaluators under spec read lean rows one by
// one, packed (WNN, float64 kernels), not by columns.
func rowByRow(m model, spec Spec) bool {
	_, ok := m.(wnn)
	return ok || spec.Float64
}

// median is the sorted middle of v (the mean of the two middle values for
// an even count), found by selection rather than a sort: the same value,
// in a tenth of the time on the millions of training distances it is
// taken over before the first iteration.
func median(v []float64) float64 {
	n := len(v)
	if n == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	hi := nth(s, n/2)
	if n%2 == 1 {
		return hi
	}
	lo := s[0] // s[:n/2] holds the n/2 smallest: their largest is the other middle
	for _, x := range s[1 : n/2] {
		if cmp.Less(lo, x) {
			lo = x
		}
	}
	return (lo + hi) / 2
}

// nth reorders s so that s[k] is the value a sort (cmp.Compare's order,
// NaNs first) puts there, with no larger value before it and no smaller
// one after, and returns it: quickselect with three-way partitions (runs
// of equal distances cost one pass), a sort past a depth bound so that no
// input makes it quadratic.
func nth(s []float64, k int) float64 {
	lo, hi := 0, len(s)
	for depth := 2 * bits.Len(uint(len(s))); hi-lo > 16 && depth > 0; depth-- {
		a, b, c := s[lo], s[lo+(hi-lo)/2], s[hi-1]
		if cmp.Less(b, a) {
			a, b = b, a
		}
		if cmp.Less(c, b) {
			b = c
			if cmp.Less(b, a) {
				b = a
			}
		}
		lt, i, gt := lo, lo, hi // s[lo:lt] < b, s[lt:i] == b, s[gt:hi] > b
		for i < gt {
			switch cmp.Compare(s[i], b) {
			case -1:
				s[lt], s[i] = s[i], s[lt]
				lt++
				i++
			case 1:
				gt--
				s[i], s[gt] = s[gt], s[i]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return s[k]
		}
	}
	slices.SortFunc(s[lo:hi], cmp.Compare[float64])
	return s[k]
}

// fitResult is one grid point's outcome, its kept parameters and trace.
type fitResult struct {
	point GridPoint
	theta []float64
	trace []TracePoint
}

// better orders fits by validation error, then validation log-likelihood,
// then the smaller λ: an exact tie goes by the λ's value, never by its place
// in the grid, so listing the grid in another order chooses the same fit
// (with warm_start the fits themselves do not depend on the order either,
// GridOrder). The smaller λ keeps what an ascending grid (the default)
// chose when ties went to the earlier λ.
func (r *fitResult) better(o *fitResult) bool {
	a, b := r.point, o.point
	if a.ValidError != b.ValidError {
		return a.ValidError < b.ValidError
	}
	if a.ValidLogLik != b.ValidLogLik {
		return a.ValidLogLik > b.ValidLogLik
	}
	return a.Lambda < b.Lambda
}

// validStatus are the optimize errors that end a fit normally: the line
// search cannot improve the objective any more in floating point.
var validStatus = []error{optimize.ErrLinesearcherFailure, optimize.ErrNoProgress, optimize.ErrNonDescentDirection, optimize.ErrLinesearcherBound}

// fit runs L-BFGS at one λ from theta0.
func (t *trainer) fit(ctx context.Context, gi int, lambda float64, theta0 []float64) (*fitResult, error) {
	spec := t.spec
	obj := t.train
	obj.lambda = lambda
	obj.fwd = false // the state is at another λ's objective
	evals0, grads0 := obj.evals, obj.grads
	kept := &fitResult{
		point: GridPoint{Lambda: lambda, ValidError: math.Inf(1), ValidLogLik: math.Inf(-1), BestIteration: -1},
		theta: make([]float64, len(theta0)),
	}
	// consider validates x (iteration iter, minimised objective f) and keeps
	// it when better; it returns the validation error and whether x was kept.
	consider := func(x []float64, f float64, iter int) (float64, bool) {
		cand := &fitResult{point: GridPoint{ValidError: math.NaN(), ValidLogLik: math.NaN()}}
		if t.valid != nil {
			cand.point.ValidError, cand.point.ValidLogLik, cand.point.ValidSpread = t.valid.score(x)
		}
		if t.valid == nil || kept.point.BestIteration < 0 || cand.better(kept) {
			copy(kept.theta, x)
			kept.point.ValidError, kept.point.ValidLogLik = cand.point.ValidError, cand.point.ValidLogLik
			kept.point.ValidSpread = cand.point.ValidSpread
			kept.point.TrainObjective = -f
			kept.point.BestIteration = iter
			return cand.point.ValidError, true
		}
		return cand.point.ValidError, false
	}
	lastChecked, lastReported := -1, -1
	report := func(iter int, f, ve float64) {
		lastReported = iter
		kept.trace = append(kept.trace, TracePoint{GridIndex: gi, Lambda: lambda, Iteration: iter, Objective: -f,
			ValidError: ve, Evaluations: obj.evals - evals0, GradEvaluations: obj.grads - grads0})
		if t.progress != nil {
			t.progress(Progress{GridIndex: gi, Lambda: lambda, Iter: iter, Objective: -f, ValidError: ve})
		}
	}
	stop := &patience{limit: spec.Patience}
	stopped := false
	rec := &iterRecorder{fn: func(loc *optimize.Location, iter int) {
		ve := math.NaN()
		// Without validation only the last iterate matters.
		if t.valid != nil && iter%spec.ValidEvery == 0 {
			var improved bool
			ve, improved = consider(loc.X, loc.F, iter)
			lastChecked = iter
			stopped = stop.check(improved)
		}
		report(iter, loc.F, ve)
	}}
	problem := optimize.Problem{
		Func: obj.value,
		Grad: obj.gradient,
		Status: func() (optimize.Status, error) {
			if err := ctx.Err(); err != nil {
				return optimize.Failure, err
			}
			if stopped {
				return optimize.Success, nil
			}
			return optimize.NotTerminated, nil
		},
	}
	settings := &optimize.Settings{
		// The starting point counts as a major iteration in gonum.
		MajorIterations: spec.MaxIter + 1,
		// Stop early only after 20 iterations without a relative gain of
		// 1e-9: far below what moves the validation error.
		Converger: &optimize.FunctionConverge{Absolute: 1e-12, Relative: 1e-9, Iterations: 20},
		Recorder:  rec,
	}
	res, err := optimize.Minimize(problem, slices.Clone(theta0), settings, &lbfgs{store: spec.Store, workers: spec.Workers})
	if cerr := ctx.Err(); cerr != nil {
		return nil, fmt.Errorf("models: %s: training at lambda %g: %w", spec.Model, lambda, cerr)
	}
	status, lineSearch := "", false
	switch {
	case err == nil && res != nil:
		status = res.Status.String()
	case res != nil && slices.ContainsFunc(validStatus, func(e error) bool { return errors.Is(err, e) }):
		status, lineSearch = err.Error(), true
	default:
		return nil, fmt.Errorf("models: %s: training at lambda %g: %w", spec.Model, lambda, err)
	}
	iters := max(res.Stats.MajorIterations-1, 0)
	ve := math.NaN()
	if iters != lastChecked {
		ve, _ = consider(res.Location.X, res.Location.F, iters)
	}
	if iters != lastReported {
		report(iters, res.Location.F, ve)
	}
	kept.point.Iterations = iters
	kept.point.FinalObjective = -res.Location.F
	kept.point.Status = status
	if stopped {
		kept.point.Status = "Patience"
	}
	kept.point.Evaluations, kept.point.GradEvaluations = obj.evals-evals0, obj.grads-grads0
	kept.point.LineSearchFailed = lineSearch
	if t.valid == nil { // without validation pairs, the spread is the train pairs'
		_, _, kept.point.ValidSpread = t.train.score(kept.theta)
	}
	return kept, nil
}

// patience is the early-stopping rule: stop after limit consecutive
// validation checks that kept nothing (limit 0: never).
type patience struct{ limit, stale int }

// check records one validation check and reports whether to stop.
func (p *patience) check(improved bool) bool {
	if improved {
		p.stale = 0
	} else {
		p.stale++
	}
	return p.limit > 0 && p.stale >= p.limit
}

// iterRecorder passes each major iteration to fn with its index (0 = start).
type iterRecorder struct {
	fn func(loc *optimize.Location, iter int)
}

func (r *iterRecorder) Init() error { return nil }

func (r *iterRecorder) Record(loc *optimize.Location, op optimize.Operation, stats *optimize.Stats) error {
	if op == optimize.MajorIteration {
		r.fn(loc, stats.MajorIterations-1)
	}
	return nil
}

// objective is the minimised f = −L over one pair set (see Train). gonum
// asks for the value alone (line-search trials) or for value and gradient at
// the same point (Func, then Grad): value runs the forward pass only, and
// gradient adds the backward pass to the forward state kept from it.
type objective struct {
	ev     evaluator
	labels []bool
	lambda float64
	// penalty weights each element of Θ in λ‖Θ‖² (nil: all 1): Monomer's
	// U at Spec.GatePenalty.
	penalty []float64
	// Per pair, in the evaluator's x order (ev.order()): the label, the
	// log-likelihood and ∂f/∂d, written by the pair loop in sequence (in
	// pair order they were scattered writes, 0.3 CPU-s of a 1.8 CPU-s LMT
	// evaluation at Electronics' size). pos[p] is pair p's position: the
	// sums run in pair order, so their bits do not depend on the order.
	labelsX []bool
	pos     []int32
	ll, g   []float64
	// scale is the feature scale s (see featureScale): the kernels get s·Θ.
	scale float64
	raw   []float64

	x   []float64 // the last point evaluated; ev holds its forward state
	f   float64
	fwd bool // x, f and ev's state are current
	// xgrad is ∇f at x, computed with the value by evaluators that cannot
	// split (WNN: its gradient is formed in the same pair loop).
	xgrad []float64

	evals, grads int // forward and backward passes run
}

func newObjective(ev evaluator, labels []bool) *objective {
	n := len(labels)
	o := &objective{ev: ev, labels: labels, labelsX: make([]bool, n), pos: make([]int32, n),
		ll: hugemem.Slice[float64](n), g: hugemem.Slice[float64](n), scale: 1}
	for k, p := range ev.order() {
		o.labelsX[k], o.pos[p] = labels[p], int32(k)
	}
	return o
}

// eval returns f(θ) and, if grad is not nil, stores ∇f in it; θ[0] is c.
func (o *objective) eval(theta, grad []float64) float64 {
	f := o.forward(theta, grad)
	if grad != nil {
		o.finishGrad(theta, grad)
	}
	return f
}

// forward computes every pair's loss at θ and returns f; with grad not nil
// the evaluator also fills grad[1:] with the distances' part of ∇f.
func (o *objective) forward(theta, grad []float64) float64 {
	o.fwd = false
	c, n := theta[0], float64(len(o.labels))
	loss := func(k int, d float64) float64 {
		ll, dz := pairLogLik(c-d, o.labelsX[k])
		// f = −(1/n) Σ ll(c − d): ∂f/∂d_p = ll'(z_p)/n, ∂f/∂c = −Σ_p ∂f/∂d_p.
		o.ll[k], o.g[k] = ll, dz/n
		return o.g[k]
	}
	var gw []float64
	if grad != nil {
		gw = grad[1:]
	}
	o.ev.eval(o.toRaw(theta[1:]), loss, gw)
	o.gradFromRaw(gw)
	o.evals++
	if grad != nil {
		o.grads++
	}
	sum := spanSum(len(o.pos), func(lo, hi int) (s float64) {
		for _, k := range o.pos[lo:hi] { // pair order: the sum is reproducible
			s += o.ll[k]
		}
		return s
	})
	w := theta[1:]
	reg := spanSum(len(w), func(lo, hi int) (s float64) {
		if o.penalty == nil {
			for _, v := range w[lo:hi] {
				s += v * v
			}
			return s
		}
		for i, v := range w[lo:hi] {
			s += o.penalty[lo+i] * v * v
		}
		return s
	})
	return -sum/n + o.lambda*reg
}

// sumSpan is the terms of one partial sum of spanSum.
const sumSpan = 1 << 16

// spanSum returns the sum of the terms 0..n-1 taken as spans of sumSpan,
// each summed in order by span(lo, hi) on some core, the spans' sums then
// added in span order: its bits depend on n and the terms, never on
// GOMAXPROCS. Serial, the pairs' sums were 0.8 of WNN's 1.9 serial CPU-s
// in a 20-iteration fit at Electronics' size.
func spanSum(n int, span func(lo, hi int) float64) float64 {
	parts := make([]float64, (n+sumSpan-1)/sumSpan)
	par.Spans(n, sumSpan, 0, func(lo, hi int) { parts[lo/sumSpan] = span(lo, hi) })
	var s float64
	for _, v := range parts {
		s += v
	}
	return s
}

// finishGrad adds ∂f/∂c and the regulariser to the distances' part in grad.
func (o *objective) finishGrad(theta, grad []float64) {
	grad[0] = -spanSum(len(o.pos), func(lo, hi int) (s float64) {
		for _, k := range o.pos[lo:hi] { // pair order, as the log-likelihoods
			s += o.g[k]
		}
		return s
	})
	// Element by element, so the split cannot change a bit: LMT's 500,000
	// parameters on all cores.
	par.Spans(len(theta)-1, sumSpan, 0, func(lo, hi int) {
		for i, v := range theta[1+lo : 1+hi] {
			w := 1.0
			if o.penalty != nil {
				w = o.penalty[lo+i]
			}
			grad[1+lo+i] += 2 * o.lambda * w * v
		}
	})
}

// value is gonum's Func: the forward pass only.
func (o *objective) value(x []float64) float64 {
	if _, ok := o.ev.(splitEvaluator); ok {
		o.f = o.forward(x, nil)
	} else {
		if o.xgrad == nil {
			o.xgrad = make([]float64, len(x))
		}
		o.f = o.eval(x, o.xgrad)
	}
	o.x = append(o.x[:0], x...)
	o.fwd = true
	return o.f
}

// gradient is gonum's Grad: the backward pass on value's state when x is
// the point it evaluated last, else a whole evaluation.
func (o *objective) gradient(grad, x []float64) {
	se, split := o.ev.(splitEvaluator)
	switch {
	case o.fwd && slices.Equal(o.x, x) && !split:
		copy(grad, o.xgrad)
		return
	case o.fwd && slices.Equal(o.x, x):
		se.gradient(grad[1:])
		o.gradFromRaw(grad[1:])
		o.grads++
	default:
		o.f = o.forward(x, grad)
		o.x = append(o.x[:0], x...)
	}
	o.fwd = true
	o.finishGrad(x, grad)
	if !split {
		o.xgrad = append(o.xgrad[:0], grad...)
	}
}

// distances returns every pair's distance at Θ (without c).
func (o *objective) distances(theta []float64) []float64 {
	d := make([]float64, len(o.labels))
	o.fwd = false // the evaluator's state is no longer value's
	order := o.ev.order()
	o.ev.eval(o.toRaw(theta), func(k int, v float64) float64 { d[order[k]] = v; return 0 }, nil)
	return d
}

// score returns the error rate (prediction: σ(c − d) > 0.5), the mean
// log-likelihood and the spread (max − min) of the probabilities σ(c − d)
// at θ = [c, Θ], from one pass over the pairs' distances.
func (o *objective) score(theta []float64) (errRate, meanLL, spread float64) {
	c := theta[0]
	wrong := 0
	var sum float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for p, d := range o.distances(theta[1:]) {
		prob := sigmoidStable(c - d)
		if (prob > 0.5) != o.labels[p] {
			wrong++
		}
		lo, hi = min(lo, prob), max(hi, prob)
		ll, _ := pairLogLik(c-d, o.labels[p])
		sum += ll
	}
	n := float64(len(o.labels))
	return float64(wrong) / n, sum / n, hi - lo
}

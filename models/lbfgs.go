package models

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/optimize"
)

// lbfgs is gonum's optimize.LBFGS (the two-loop recursion, Nocedal & Wright
// Algorithm 7.4, under gonum's LinesearchMethod and Bisection line search)
// with its vector work on all cores. At 400,000+ parameters gonum's serial
// two-loop was 4-5 % of an LMT fit at the medium world's Women's size on
// one core, and the main share of the time a second core left idle
// (docs/notes/2026-11-28-cores.md). Every vector is cut into fixed chunks of
// vecChunk elements: element-wise operations give gonum's bits, and a dot
// product is the sum, in chunk order, of each chunk's gonum floats.Dot, so
// the result depends on the dimension only, never on GOMAXPROCS. The
// recursion's passes are fused: the axpy of one step and the dot of the
// next go over dir once.
type lbfgs struct {
	store   int // history length (gonum's default 15)
	workers int // 0: GOMAXPROCS

	ls       *optimize.LinesearchMethod
	status   optimize.Status
	err      error
	dim      int
	oldest   int
	x, grad  []float64
	y, s     [][]float64
	rho, a   []float64
	partials []float64 // per chunk of the current dot product
}

var (
	_ optimize.Method          = (*lbfgs)(nil)
	_ optimize.NextDirectioner = (*lbfgs)(nil)
	_ optimize.Statuser        = (*lbfgs)(nil)
)

// vecChunk is the elements per partial sum of a dot product (32 KB), and
// vecTask the chunks per parallel task: a task is a few tens of
// microseconds, long enough to pay for its scheduling.
const vecChunk, vecTask = 4096, 8

func (l *lbfgs) Init(dim, tasks int) int {
	l.status, l.err = optimize.NotTerminated, nil
	return 1
}

func (l *lbfgs) Status() (optimize.Status, error) { return l.status, l.err }

func (*lbfgs) Uses(has optimize.Available) (optimize.Available, error) {
	if !has.Grad {
		return optimize.Available{}, optimize.ErrMissingGrad
	}
	return optimize.Available{Grad: true}, nil
}

// Run is gonum's local optimiser loop (optimize/local.go) around the line
// search method, with the gradient norm check on all cores.
func (l *lbfgs) Run(operation chan<- optimize.Task, result <-chan optimize.Task, tasks []optimize.Task) {
	l.status, l.err = l.run(operation, result, tasks[0])
	close(operation)
}

func (l *lbfgs) run(operation chan<- optimize.Task, result <-chan optimize.Task, task optimize.Task) (optimize.Status, error) {
	finish := func() {
		for range result {
		}
	}
	methodDone := func(task optimize.Task) {
		task.Op = optimize.MethodDone
		operation <- task
		<-result // PostIteration
		finish()
	}
	var op optimize.Operation
	if task.Op&optimize.FuncEvaluation == 0 {
		op |= optimize.FuncEvaluation
	}
	if task.Op&optimize.GradEvaluation == 0 {
		op |= optimize.GradEvaluation
	}
	task.Op = op
	operation <- task
	task = <-result
	if task.Op == optimize.PostIteration {
		finish()
		return optimize.NotTerminated, nil
	}
	if math.IsInf(task.F, 1) || math.IsNaN(task.F) {
		methodDone(task)
		return optimize.Failure, optimize.ErrFunc(task.F)
	}
	for i, v := range task.Gradient {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			methodDone(task)
			return optimize.Failure, optimize.ErrGrad{Grad: v, Index: i}
		}
	}
	if l.gradConverged(task.Gradient) {
		methodDone(task)
		return optimize.GradientThreshold, nil
	}
	task.Op = optimize.MajorIteration
	operation <- task
	task = <-result
	if task.Op == optimize.PostIteration {
		finish()
		return optimize.NotTerminated, nil
	}
	l.ls = &optimize.LinesearchMethod{NextDirectioner: l, Linesearcher: &optimize.Bisection{}}
	op, err := l.ls.Init(task.Location)
	if err != nil {
		methodDone(task)
		return optimize.Failure, err
	}
	task.Op = op
	operation <- task
	for {
		r := <-result
		switch r.Op {
		case optimize.PostIteration:
			finish()
			return optimize.NotTerminated, nil
		case optimize.MajorIteration:
			if l.gradConverged(r.Gradient) {
				methodDone(task)
				return optimize.GradientThreshold, nil
			}
		}
		op, err := l.ls.Iterate(r.Location)
		if err != nil {
			methodDone(r)
			return optimize.Failure, err
		}
		r.Op = op
		operation <- r
	}
}

// gradConverged is gonum's gradient threshold (1e-12 on the max norm),
// the max over chunks taken on all cores (a max has no order to keep).
func (l *lbfgs) gradConverged(g []float64) bool {
	if g == nil {
		return false
	}
	l.chunks(len(g), func(c, lo, hi int) {
		m := 0.0
		for _, v := range g[lo:hi] {
			m = math.Max(m, math.Abs(v))
		}
		l.partials[c] = m
	})
	norm := 0.0
	for _, m := range l.partials[:numChunks(len(g))] {
		norm = math.Max(norm, m)
	}
	return norm < 1e-12
}

func numChunks(n int) int { return (n + vecChunk - 1) / vecChunk }

// chunks runs fn over the vecChunk chunks of [0, n), chunk c being
// [lo, hi), vecTask chunks per task on all cores.
func (l *lbfgs) chunks(n int, fn func(c, lo, hi int)) {
	nc := numChunks(n)
	if cap(l.partials) < nc {
		l.partials = make([]float64, nc)
	}
	l.partials = l.partials[:nc]
	runChunks((nc+vecTask-1)/vecTask, l.workers, func(_, t int) {
		for c := t * vecTask; c < min((t+1)*vecTask, nc); c++ {
			fn(c, c*vecChunk, min((c+1)*vecChunk, n))
		}
	})
}

// sum adds the partials in chunk order.
func (l *lbfgs) sum() float64 {
	s := 0.0
	for _, v := range l.partials {
		s += v
	}
	return s
}

// dot is x·y as the chunked sum.
func (l *lbfgs) dot(x, y []float64) float64 {
	l.chunks(len(x), func(c, lo, hi int) { l.partials[c] = floats.Dot(x[lo:hi], y[lo:hi]) })
	return l.sum()
}

func (l *lbfgs) InitDirection(loc *optimize.Location, dir []float64) float64 {
	dim := len(loc.X)
	l.dim, l.oldest = dim, 0
	if l.store == 0 {
		l.store = 15
	}
	l.a, l.rho = make([]float64, l.store), make([]float64, l.store)
	l.y, l.s = make([][]float64, l.store), make([][]float64, l.store)
	for i := range l.store {
		l.y[i], l.s[i] = make([]float64, dim), make([]float64, dim)
	}
	l.x, l.grad = make([]float64, dim), make([]float64, dim)
	l.chunks(dim, func(c, lo, hi int) {
		copy(l.x[lo:hi], loc.X[lo:hi])
		copy(l.grad[lo:hi], loc.Gradient[lo:hi])
		d := dir[lo:hi]
		for i, v := range loc.Gradient[lo:hi] {
			d[i] = -v
		}
		l.partials[c] = floats.Dot(d, d)
	})
	return 1 / math.Sqrt(l.sum())
}

func (l *lbfgs) NextDirection(loc *optimize.Location, dir []float64) float64 {
	if len(loc.X) != l.dim || len(loc.Gradient) != l.dim || len(dir) != l.dim {
		panic("models: lbfgs: unexpected size mismatch")
	}
	y, s := l.y[l.oldest], l.s[l.oldest]
	// y = ∇f − ∇f_old, s = x − x_old, then x_old, ∇f_old, dir = x, ∇f, ∇f,
	// and the partials of s·y.
	l.chunks(l.dim, func(c, lo, hi int) {
		floats.SubTo(y[lo:hi], loc.Gradient[lo:hi], l.grad[lo:hi])
		floats.SubTo(s[lo:hi], loc.X[lo:hi], l.x[lo:hi])
		copy(l.x[lo:hi], loc.X[lo:hi])
		copy(l.grad[lo:hi], loc.Gradient[lo:hi])
		copy(dir[lo:hi], loc.Gradient[lo:hi])
		l.partials[c] = floats.Dot(s[lo:hi], y[lo:hi])
	})
	sDotY := l.sum()
	l.rho[l.oldest] = 1 / sDotY
	l.oldest = (l.oldest + 1) % l.store

	// First loop, newest to oldest: a_i = ρ_i s_i·dir, dir −= a_i y_i. The
	// dot of step i+1 rides on the pass of step i's axpy.
	idx := func(i int) int { return (l.oldest - i - 1 + 2*l.store) % l.store }
	l.a[idx(0)] = l.rho[idx(0)] * l.dot(l.s[idx(0)], dir)
	for i := range l.store {
		k := idx(i)
		ak, yk := l.a[k], l.y[k]
		if i+1 < l.store {
			sn := l.s[idx(i+1)]
			l.chunks(l.dim, func(c, lo, hi int) {
				floats.AddScaled(dir[lo:hi], -ak, yk[lo:hi])
				l.partials[c] = floats.Dot(sn[lo:hi], dir[lo:hi])
			})
			l.a[idx(i+1)] = l.rho[idx(i+1)] * l.sum()
			continue
		}
		// Last step: the axpy, then γ = s·y / y·y of the newest pair.
		l.chunks(l.dim, func(c, lo, hi int) {
			floats.AddScaled(dir[lo:hi], -ak, yk[lo:hi])
			l.partials[c] = floats.Dot(y[lo:hi], y[lo:hi])
		})
	}
	gamma := sDotY / l.sum()

	// Second loop, oldest to newest: dir = γ dir, then β_i = ρ_i y_i·dir,
	// dir += (a_i − β_i) s_i; the scaling and each dot ride on the pass
	// before.
	jdx := func(i int) int { return (i + l.oldest) % l.store }
	y0 := l.y[jdx(0)]
	l.chunks(l.dim, func(c, lo, hi int) {
		floats.Scale(gamma, dir[lo:hi])
		l.partials[c] = floats.Dot(y0[lo:hi], dir[lo:hi])
	})
	for i := range l.store {
		k := jdx(i)
		coef, sk := l.a[k]-l.rho[k]*l.sum(), l.s[k]
		if i+1 < l.store {
			yn := l.y[jdx(i+1)]
			l.chunks(l.dim, func(c, lo, hi int) {
				floats.AddScaled(dir[lo:hi], coef, sk[lo:hi])
				l.partials[c] = floats.Dot(yn[lo:hi], dir[lo:hi])
			})
			continue
		}
		l.chunks(l.dim, func(c, lo, hi int) {
			d := dir[lo:hi]
			floats.AddScaled(d, coef, sk[lo:hi])
			floats.Scale(-1, d)
		})
	}
	return 1
}

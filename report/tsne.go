package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"monomer/internal/par"
)

// ErrInput marks data the report cannot draw.
var ErrInput = errors.New("report: bad input")

// TSNEOptions are the settings of TSNE. The zero value of each field is
// replaced by the default named on it.
type TSNEOptions struct {
	// Perplexity is the effective number of neighbours. If 0, 30, lowered
	// to (n−1)/3 for small n.
	Perplexity float64
	// Iterations of gradient descent. If 0, 500.
	Iterations int
	// LearningRate. If 0, max(n/12, 50) (Belkina et al. 2019: the step
	// grows with n so large maps do not stall).
	LearningRate float64
	// Exaggeration multiplies P for the first ExaggerationIters
	// iterations, letting clusters form early. If 0, 12 and 100.
	Exaggeration      float64
	ExaggerationIters int
	// Workers bounds the goroutines. If 0, GOMAXPROCS. Results do not
	// depend on it.
	Workers int
	// Progress, if not nil, is called after each iteration with the number
	// done.
	Progress func(done int)
}

// TSNEResult is a 2-D map and the KL divergence KL(P‖Q) of the final
// map, recorded every 50 iterations after the exaggeration phase (KL[i]
// at iteration KLIter[i]).
type TSNEResult struct {
	Y      []float64 // n×2, row-major
	KL     []float64
	KLIter []int
}

// TSNE maps the n rows of x (n×d, row-major) to 2-D by exact t-SNE (van der
// Maaten & Hinton 2008): Gaussian affinities at a fixed perplexity, a
// Student-t kernel in the map, gradient descent with momentum and per-
// coordinate gains. O(n²) per iteration: meant for a few thousand points.
//
// The start is drawn from rng. Every sum whose order could vary is taken
// per row in index order and then over rows in index order, so the map is
// bit-identical for the same input and seed whatever GOMAXPROCS is.
//
// Once ctx is done TSNE returns ctx.Err() before its next iteration.
func TSNE(ctx context.Context, x []float64, n, d int, opt TSNEOptions, rng *rand.Rand) (*TSNEResult, error) {
	if n < 4 || d < 1 || len(x) != n*d {
		return nil, fmt.Errorf("report: t-SNE of %d values as %d×%d (needs at least 4 points): %w", len(x), n, d, ErrInput)
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("report: t-SNE input holds %v: %w", v, ErrInput)
		}
	}
	if opt.Perplexity == 0 {
		opt.Perplexity = 30
	}
	opt.Perplexity = min(opt.Perplexity, float64(n-1)/3)
	if opt.Iterations == 0 {
		opt.Iterations = 500
	}
	if opt.LearningRate == 0 {
		opt.LearningRate = max(float64(n)/12, 50)
	}
	if opt.Exaggeration == 0 {
		opt.Exaggeration, opt.ExaggerationIters = 12, 100
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	t := &tsne{n: n, opt: opt}
	t.affinities(x, d)

	y := make([]float64, 2*n)
	for i := range y {
		y[i] = 1e-4 * rng.NormFloat64()
	}
	vel, gains, grad := make([]float64, 2*n), make([]float64, 2*n), make([]float64, 2*n)
	for i := range gains {
		gains[i] = 1
	}
	res := &TSNEResult{}
	for it := range opt.Iterations {
		if it > 0 && opt.Progress != nil {
			opt.Progress(it)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		exag, mom := 1.0, 0.8
		if it < opt.ExaggerationIters {
			exag, mom = opt.Exaggeration, 0.5
		}
		after := it - opt.ExaggerationIters
		record := after >= 0 && (after%50 == 0 || it == opt.Iterations-1)
		kl := t.gradient(y, grad, exag, record)
		if record {
			res.KL, res.KLIter = append(res.KL, kl), append(res.KLIter, it)
		}
		for i, g := range grad {
			// Gains grow where the gradient keeps its direction.
			if (g > 0) != (vel[i] > 0) {
				gains[i] += 0.2
			} else {
				gains[i] = max(gains[i]*0.8, 0.01)
			}
			vel[i] = mom*vel[i] - opt.LearningRate*gains[i]*g
			y[i] += vel[i]
		}
		var mx, my float64
		for i := range n {
			mx += y[2*i]
			my += y[2*i+1]
		}
		mx, my = mx/float64(n), my/float64(n)
		for i := range n {
			y[2*i] -= mx
			y[2*i+1] -= my
		}
	}
	res.Y = y
	return res, nil
}

type tsne struct {
	n   int
	opt TSNEOptions
	p   []float64 // symmetric joint affinities, n×n, sum 1
	num []float64 // (1 + ‖y_i − y_j‖²)⁻¹ of the current map, n×n
}

// rows runs fn over fixed row ranges of 64 on the workers (the caller
// among them: BENCHMARKS.md, "Use of all cores"); each row's results
// depend on the row only.
func (t *tsne) rows(fn func(lo, hi int)) {
	const chunk = 64
	par.For((t.n+chunk-1)/chunk, t.opt.Workers, func(_, c int) {
		fn(c*chunk, min((c+1)*chunk, t.n))
	})
}

// affinities sets p_ij = (p_j|i + p_i|j) / 2n, each conditional a Gaussian
// whose precision is found by bisection so its entropy is log(perplexity).
func (t *tsne) affinities(x []float64, d int) {
	n := t.n
	dist := make([]float64, n*n)
	t.rows(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			xi := x[i*d : (i+1)*d]
			for j := range n {
				xj := x[j*d : (j+1)*d]
				var s float64
				for k, v := range xi {
					s += (v - xj[k]) * (v - xj[k])
				}
				dist[i*n+j] = s
			}
		}
	})
	cond := make([]float64, n*n)
	target := math.Log(t.opt.Perplexity)
	t.rows(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row, di := cond[i*n:(i+1)*n], dist[i*n:(i+1)*n]
			beta, bmin, bmax := 1.0, 0.0, math.Inf(1)
			// Distances are shifted by the nearest neighbour's so exp
			// cannot underflow to an all-zero row.
			dmin := math.Inf(1)
			for j, v := range di {
				if j != i {
					dmin = min(dmin, v)
				}
			}
			for range 100 {
				var sum, dsum float64
				for j, v := range di {
					if j == i {
						row[j] = 0
						continue
					}
					row[j] = math.Exp(-beta * (v - dmin))
					sum += row[j]
					dsum += row[j] * (v - dmin)
				}
				h := math.Log(sum) + beta*dsum/sum
				for j := range row {
					row[j] /= sum
				}
				if math.Abs(h-target) < 1e-5 {
					break
				}
				if h > target {
					bmin = beta
					if math.IsInf(bmax, 1) {
						beta *= 2
					} else {
						beta = (beta + bmax) / 2
					}
				} else {
					bmax = beta
					beta = (beta + bmin) / 2
				}
			}
		}
	})
	t.p = make([]float64, n*n)
	for i := range n {
		for j := range n {
			t.p[i*n+j] = max((cond[i*n+j]+cond[j*n+i])/float64(2*n), 1e-12)
		}
	}
}

// gradient writes ∂KL/∂y (with P multiplied by exag) into grad and, if kl,
// returns KL(P‖Q) of the unexaggerated P at y (else 0):
//
//	∂C/∂y_i = 4 Σ_j (p_ij − q_ij)(y_i − y_j)/(1 + ‖y_i − y_j‖²),
//	q_ij = (1 + ‖y_i − y_j‖²)⁻¹ / Z.
func (t *tsne) gradient(y, grad []float64, exag float64, kl bool) float64 {
	n := t.n
	if t.num == nil {
		t.num = make([]float64, n*n)
	}
	zRow := make([]float64, n)
	t.rows(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			var z float64
			num := t.num[i*n : (i+1)*n]
			yx, yy := y[2*i], y[2*i+1]
			for j := range n {
				dx, dy := yx-y[2*j], yy-y[2*j+1]
				num[j] = 1 / (1 + dx*dx + dy*dy)
				z += num[j]
			}
			z-- // the j = i term
			num[i] = 0
			zRow[i] = z
		}
	})
	var z float64
	for _, v := range zRow {
		z += v
	}
	klRow := make([]float64, n)
	t.rows(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			var gx, gy, s float64
			num, p := t.num[i*n:(i+1)*n], t.p[i*n:(i+1)*n]
			yx, yy := y[2*i], y[2*i+1]
			for j, nu := range num {
				// j = i adds nothing: num[i] = 0.
				c := (exag*p[j] - nu/z) * nu
				gx += c * (yx - y[2*j])
				gy += c * (yy - y[2*j+1])
			}
			grad[2*i], grad[2*i+1] = 4*gx, 4*gy
			if kl {
				for j, nu := range num {
					if j != i {
						s += p[j] * math.Log(p[j]/max(nu/z, 1e-300))
					}
				}
			}
			klRow[i] = s
		}
	})
	var total float64
	for _, v := range klRow {
		total += v
	}
	return total
}

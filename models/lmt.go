package models

import "math/rand/v2"

// lmt is the low-rank Mahalanobis transform (paper Eq. 3, McAuley et al.
// SIGIR 2015): d(x, y) = ‖Eᵀf_x − Eᵀf_y‖², E is F×K. θ is E row-major, so
// the projection matrix W of projEval is E itself.
type lmt struct{ f, k int }

func (m lmt) size() int { return m.f * m.k }

// draw fills E with N(0, 1); Train then rescales it so the median initial
// distance is 1.
func (m lmt) draw(theta []float64, rng *rand.Rand, _ float64) {
	for i := range theta {
		theta[i] = rng.NormFloat64()
	}
}

func (m lmt) scale(theta []float64, s float64) {
	for i := range theta {
		theta[i] *= s
	}
}

func (m lmt) layout() []blockLayout {
	return []blockLayout{{name: "E", rows: m.f, cols: m.k, stride: m.k}}
}

func (m lmt) params(theta []float64) []Param { return unpackBlocks(theta, m.layout()) }

func (m lmt) pack(params []Param) ([]float64, error) {
	theta := make([]float64, m.size())
	return theta, packBlocks(params, theta, m.layout())
}

func (m lmt) evaluator(src rowSource, ps *pairSet, f64 bool, workers int) evaluator {
	if f64 {
		return newProjEval[float64](lmtKernel[float64]{m.k}, src, ps, workers)
	}
	return newProjEval[float32](lmtKernel[float32]{m.k}, src, ps, workers)
}

// lmtKernel works on P = X·E: d = ‖p_x − p_y‖², ∂d/∂p_x = 2(p_x − p_y) =
// −∂d/∂p_y.
type lmtKernel[T Float] struct{ k int }

func (l lmtKernel[T]) cols() int     { return l.k }
func (l lmtKernel[T]) stateLen() int { return 0 }

func (l lmtKernel[T]) dist(px, py, _ []T) T {
	py = py[:len(px)]
	var d T
	for i, a := range px {
		t := a - py[i]
		d += t * t
	}
	return d
}

func (l lmtKernel[T]) gradX(px, py, _ []T, g T, gx []T) {
	py, gx = py[:len(px)], gx[:len(px)]
	g2 := 2 * g
	for i, a := range px {
		gx[i] += g2 * (a - py[i])
	}
}

func (l lmtKernel[T]) gradY(px, py, _ []T, g T, gy []T) {
	py, gy = py[:len(px)], gy[:len(px)]
	g2 := 2 * g
	for i, a := range px {
		gy[i] -= g2 * (a - py[i])
	}
}

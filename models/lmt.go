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
func (l lmtKernel[T]) itemLen() int  { return 0 }
func (l lmtKernel[T]) item(_, _ []T) {}

func (l lmtKernel[T]) dist(px, py, _, _ []T) T {
	py = py[:len(px)]
	var d T
	for i, a := range px {
		t := a - py[i]
		d += t * t
	}
	return d
}

// itemGrad forms LMT's row G_i = Σ_q 2g_q (p_i − p_other(q)) over the
// item's pairs as (Σ_q 2g_q)·p_i − Σ_q 2g_q·p_other(q): one SIMD axpy a pair
// instead of a scalar loop, and none for pairs whose g was flushed to zero;
// with float32 kernels the same terms in one Combine (sc not nil).
func (l lmtKernel[T]) itemGrad(e *projEval[T], i int, pr, gr []T, sc *combo) {
	c, ps := e.c, e.ps
	var s T
	if sc != nil {
		for k := ps.xOff[i]; k < ps.xOff[i+1]; k++ {
			if g := e.dg[k]; g != 0 {
				s += g
				sc.add(int(ps.yEnd[k])*c, float32(-2*g))
			}
		}
		for j := ps.yOff[i]; j < ps.yOff[i+1]; j++ {
			if g := e.dg[ps.yPos[j]]; g != 0 {
				s += g
				sc.add(int(ps.yOther[j])*c, float32(-2*g))
			}
		}
		sc.add(i*c, float32(2*s))
		sc.combine(e.g32[i*c:(i+1)*c], e.p32)
		return
	}
	for k := ps.xOff[i]; k < ps.xOff[i+1]; k++ {
		if g := e.dg[k]; g != 0 {
			y := int(ps.yEnd[k])
			s += g
			e.axpy(-2*g, e.p[y*c:(y+1)*c], gr)
		}
	}
	for j := ps.yOff[i]; j < ps.yOff[i+1]; j++ {
		if g := e.dg[ps.yPos[j]]; g != 0 {
			x := int(ps.yOther[j])
			s += g
			e.axpy(-2*g, e.p[x*c:(x+1)*c], gr)
		}
	}
	e.axpy(2*s, pr, gr)
}

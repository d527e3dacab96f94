package models

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// monomer is the paper's mixture of non-metric embeddings (Eqs. 4-6):
//
//	d(x, y) = Σ_k P(k|x) · ‖E₀ᵀf_x − E_kᵀf_y‖²,  P(k|x) = softmax(Uᵀf_x)_k,
//
// k = 1..N, with E₀..E_N F×K and U F×N. θ is the F×C matrix
// W = [E₀ | E₁ … E_N | U] row-major (C = (N+1)K + N), so one product X·W
// gives every item's anchor position, its N pseudo-space positions and its
// gating logits.
//
// gateInit is the standard deviation of the starting gating logits (0:
// DefaultGateInit); Train sets it from Spec.GateInit.
type monomer struct {
	f, k, n  int
	gateInit float64
}

func (m monomer) cols() int { return (m.n+1)*m.k + m.n }
func (m monomer) size() int { return m.f * m.cols() }

// draw fills E₀..E_N with N(0, 1) (Train rescales them so the median initial
// distance is 1) and U with N(0, gateInit²/meanSq), so the gating logits
// Uᵀf_x start with standard deviation gateInit.
func (m monomer) draw(theta []float64, rng *rand.Rand, meanSq float64) {
	c, e := m.cols(), (m.n+1)*m.k
	su := m.gateInit
	if su == 0 {
		su = DefaultGateInit
	}
	if meanSq > 0 {
		su /= math.Sqrt(meanSq)
	}
	for r := range m.f {
		row := theta[r*c : (r+1)*c]
		for j := range row {
			if j < e {
				row[j] = rng.NormFloat64()
			} else {
				row[j] = su * rng.NormFloat64()
			}
		}
	}
}

// scale scales E₀..E_N; U is left alone (the gate is scale-free in d).
func (m monomer) scale(theta []float64, s float64) {
	c, e := m.cols(), (m.n+1)*m.k
	for r := range m.f {
		row := theta[r*c : r*c+e]
		for j := range row {
			row[j] *= s
		}
	}
}

// penalty returns the weight of each θ element in the L2 penalty: 1 on
// E₀..E_N, gate on U.
func (m monomer) penalty(gate float64) []float64 {
	c, e := m.cols(), (m.n+1)*m.k
	w := make([]float64, m.size())
	for r := range m.f {
		row := w[r*c : (r+1)*c]
		for j := range row {
			row[j] = 1
			if j >= e {
				row[j] = gate
			}
		}
	}
	return w
}

func (m monomer) layout() []blockLayout {
	c := m.cols()
	out := make([]blockLayout, 0, m.n+2)
	for k := range m.n + 1 {
		out = append(out, blockLayout{name: fmt.Sprintf("E%d", k), rows: m.f, cols: m.k, col: k * m.k, stride: c})
	}
	return append(out, blockLayout{name: "U", rows: m.f, cols: m.n, col: (m.n + 1) * m.k, stride: c})
}

func (m monomer) params(theta []float64) []Param { return unpackBlocks(theta, m.layout()) }

func (m monomer) pack(params []Param) ([]float64, error) {
	theta := make([]float64, m.size())
	return theta, packBlocks(params, theta, m.layout())
}

func (m monomer) evaluator(src rowSource, ps *pairSet, f64 bool, workers int) evaluator {
	if f64 {
		return newProjEval[float64](monomerKernel[float64]{m.k, m.n, 0}, src, ps, workers)
	}
	return newProjEval[float32](monomerKernel[float32]{m.k, m.n, tinyFor[float32]()}, src, ps, workers)
}

// monomerKernel works on a row of P = X·W: a = p[0:K] = E₀ᵀf (anchor),
// b_k = p[kK:(k+1)K] = E_kᵀf (pseudo space k), z = p[(N+1)K:] = Uᵀf (gate).
// Per item: s = softmax(z) (Eq. 5). Per pair: d_k = ‖a_x − b_k,y‖² (Eq. 4),
// d = Σ s_k d_k (Eq. 6) with x's s. The pair's state keeps s, d_1..d_N and d
// for the backward pass (s copied, so the backward pass finds it beside the
// pair's other values), where
//
//	∂d/∂a_x = Σ_k 2 s_k (a_x − b_k,y),  ∂d/∂b_k,y = −2 s_k (a_x − b_k,y),
//	∂d/∂z_j = s_j (d_j − d)  (the softmax Jacobian).
type monomerKernel[T Float] struct {
	k, n int
	tiny T // gate weights below it are zero (see tinyFor)
}

func (m monomerKernel[T]) cols() int     { return (m.n+1)*m.k + m.n }
func (m monomerKernel[T]) stateLen() int { return 2*m.n + 1 }
func (m monomerKernel[T]) itemLen() int  { return m.n }

// item computes the gate s = softmax(z), weights below tiny set to zero.
func (m monomerKernel[T]) item(pr, s []T) {
	k, n := m.k, m.n
	z := pr[(n+1)*k : (n+1)*k+n]
	s = s[:n]
	// Shift by the largest logit so exp cannot overflow.
	mx := z[0]
	for _, v := range z[1:] {
		mx = max(mx, v)
	}
	var sum T
	for j, v := range z {
		s[j] = T(math.Exp(float64(v - mx)))
		sum += s[j]
	}
	for j := range s {
		s[j] /= sum
		if s[j] < m.tiny {
			s[j] = 0
		}
	}
}

// parts: dist and itemGrad read a y end's spaces E₁…E_N and an x end's
// anchor E₀ (the x end's gate comes from the item state).
func (m monomerKernel[T]) parts() (y, x [2]int) {
	return [2]int{m.k, (m.n + 1) * m.k}, [2]int{0, m.k}
}

func (m monomerKernel[T]) dist(px, py, sx, st []T) T {
	k, n := m.k, m.n
	a := px[:k]
	s, dk := st[:n], st[n:2*n]
	copy(s, sx[:n])
	var d T
	for j := range n {
		b := py[(j+1)*k : (j+2)*k]
		var dd T
		for i, v := range a {
			t := v - b[i]
			dd += t * t
		}
		dk[j] = dd
		d += s[j] * dd
	}
	st[2*n] = d
	return d
}

// itemGrad forms Monomer's row G_i with c_j = 2g·s_j of each pair:
//
//	as x: ∂/∂a_i = (Σ_q Σ_j c_j)·a_i − Σ_q Σ_j c_j·b_j,y,  ∂/∂z_i,j = Σ_q g·s_j (d_j − d);
//	as y: ∂/∂b_j,i = (Σ_q c_j)·b_j,i − Σ_q c_j·a_x,
//
// skipping the terms whose g or s_j was flushed to zero. The loops are
// plain Go on purpose: at K ≈ 20 a BLAS axpy call costs more than its work.
//
// With float32 kernels (sc not nil) each of a_i's and the b_j,i's sums is
// one Combine of the same terms in the same order.
func (m monomerKernel[T]) itemGrad(e *projEval[T], i int, pr, gr []T, sc *combo) {
	c, k, n, sl, ps := e.c, m.k, m.n, m.stateLen(), e.ps
	ga, gz := gr[:k], gr[(n+1)*k:(n+1)*k+n]
	if sc != nil {
		m.itemGrad32(e, i, gz, sc)
		return
	}
	// Space by space, each pass over all the item's pairs: the scattered
	// rows' blocks b_j,y of one pass are independent loads the CPU overlaps
	// (pair by pair, the misses of a row came one after another).
	xlo, xhi := int(ps.xOff[i]), int(ps.xOff[i+1])
	var sa T
	for j := range n {
		for kx := xlo; kx < xhi; kx++ {
			g, sj := e.dg[kx], e.st[kx*sl+j]
			if g == 0 || sj == 0 {
				continue
			}
			cj := 2 * g * sj
			sa += cj
			y := int(ps.yEnd[kx])
			axpyGo(-cj, e.p[y*c+(j+1)*k:y*c+(j+2)*k], ga)
			gz[j] += g * sj * (e.st[kx*sl+n+j] - e.st[kx*sl+2*n])
		}
	}
	axpyGo(sa, pr[:k], ga)
	// Space by space, so each b_j,i's coefficient sums in one scalar; the
	// item's pairs and their rows a_x stay in cache across the N passes.
	ylo, yhi := int(ps.yOff[i]), int(ps.yOff[i+1])
	for j := range n {
		gb := gr[(j+1)*k : (j+2)*k]
		var sb T
		for ky := ylo; ky < yhi; ky++ {
			kx := int(ps.yPos[ky])
			g, sj := e.dg[kx], e.st[kx*sl+j]
			if g == 0 || sj == 0 {
				continue
			}
			cj := 2 * g * sj
			sb += cj
			x := int(ps.yOther[ky])
			axpyGo(-cj, e.p[x*c:x*c+k], gb)
		}
		axpyGo(sb, pr[(j+1)*k:(j+2)*k], gb)
	}
}

// itemGrad32 is itemGrad's float32 path: the terms of each axpy sequence
// gathered in sc, then summed by one Combine.
func (m monomerKernel[T]) itemGrad32(e *projEval[T], i int, gz []T, sc *combo) {
	c, k, n, sl, ps := e.c, m.k, m.n, m.stateLen(), e.ps
	xlo, xhi := int(ps.xOff[i]), int(ps.xOff[i+1])
	var sa T
	for j := range n {
		for kx := xlo; kx < xhi; kx++ {
			g, sj := e.dg[kx], e.st[kx*sl+j]
			if g == 0 || sj == 0 {
				continue
			}
			cj := 2 * g * sj
			sa += cj
			sc.add(int(ps.yEnd[kx])*c+(j+1)*k, float32(-cj))
			gz[j] += g * sj * (e.st[kx*sl+n+j] - e.st[kx*sl+2*n])
		}
	}
	sc.add(i*c, float32(sa))
	sc.combine(e.g32[i*c:i*c+k], e.p32)
	ylo, yhi := int(ps.yOff[i]), int(ps.yOff[i+1])
	for j := range n {
		var sb T
		for ky := ylo; ky < yhi; ky++ {
			kx := int(ps.yPos[ky])
			g, sj := e.dg[kx], e.st[kx*sl+j]
			if g == 0 || sj == 0 {
				continue
			}
			cj := 2 * g * sj
			sb += cj
			sc.add(int(ps.yOther[ky])*c, float32(-cj))
		}
		sc.add(i*c+(j+1)*k, float32(sb))
		sc.combine(e.g32[i*c+(j+1)*k:i*c+(j+2)*k], e.p32)
	}
}

// GateUse says how many of Monomer's N spaces its gate uses over a set of
// queries x, each weighted by its number of pairs (so a space's share is
// the share of the pairs' distance weight it carries). With p̄ the weighted
// mean gate and H the entropy (natural log):
//
//	Spaces = exp H(p̄)                     in [1, N]
//	Routes = exp(H(p̄) − mean_x H(P(·|x))) in [1, Spaces]
//
// Spaces is the effective number of spaces the distances are spread over:
// 1 when every query puts its weight on the same space, N when the weight
// is even. Routes, exp of the mutual information between query and space,
// is the effective number of spaces the gate chooses among: 1 both when it
// collapses onto one space and when it spreads every query evenly (a
// uniform mixture makes no choice), N when each query uses one space and
// the N spaces serve equal shares of the queries.
type GateUse struct {
	Spaces, Routes float64
}

// gateAcc accumulates GateUse query by query.
type gateAcc struct {
	mean     []float64 // Σ w·P(·|x)
	ent, sum float64   // Σ w·H(P(·|x)), Σ w
}

func (a *gateAcc) add(p []float64, w float64) {
	if a.mean == nil {
		a.mean = make([]float64, len(p))
	}
	for k, v := range p {
		a.mean[k] += w * v
	}
	a.ent += w * entropy(p)
	a.sum += w
}

func (a *gateAcc) use() GateUse {
	if a.sum == 0 {
		return GateUse{Spaces: math.NaN(), Routes: math.NaN()}
	}
	mean := make([]float64, len(a.mean))
	for k, v := range a.mean {
		mean[k] = v / a.sum
	}
	h := entropy(mean)
	// Max: rounding must not take the mutual information below 0.
	return GateUse{Spaces: math.Exp(h), Routes: math.Exp(max(h-a.ent/a.sum, 0))}
}

// entropy is −Σ p log p in nats (0 log 0 = 0).
func entropy(p []float64) float64 {
	var h float64
	for _, v := range p {
		if v > 0 {
			h -= v * math.Log(v)
		}
	}
	return h
}

// gateUse is the GateUse of the raw parameters w (F×C, the kernels' s·Θ)
// over the queries of ps: P(·|x) = softmax(Uᵀf_x) in float64 from the
// feature rows, each x weighted by its pairs in ps. Serial, in item order,
// so the result does not depend on the workers.
func (m monomer) gateUse(src rowSource, ps *pairSet, w []float64) GateUse {
	c, e := m.cols(), (m.n+1)*m.k
	// The gates of the items in parallel (one pass over the train rows:
	// serial, 1.3 % of a Monomer fit at the medium world's Women's size),
	// their sums in item order.
	probs := make([]float64, len(ps.items)*m.n)
	forSpans(len(ps.items), 0, func(lo, hi int) {
		z := make([]float64, m.n)
		for i := lo; i < hi; i++ {
			if ps.xOff[i+1] == ps.xOff[i] {
				continue
			}
			clear(z)
			if src.sparse != nil {
				idx, val := src.sparse.SparseRow(int(ps.items[i]))
				for j, col := range idx {
					u := w[int(col)*c+e : int(col)*c+e+m.n]
					for k := range z {
						z[k] += float64(val[j]) * u[k]
					}
				}
			} else {
				for col, v := range src.dense.Row(int(ps.items[i]))[:m.f] {
					if v == 0 {
						continue
					}
					u := w[col*c+e : col*c+e+m.n]
					for k := range z {
						z[k] += float64(v) * u[k]
					}
				}
			}
			softmax(z, probs[i*m.n:(i+1)*m.n])
		}
	})
	var acc gateAcc
	for i := range ps.items {
		if q := ps.xOff[i+1] - ps.xOff[i]; q > 0 {
			acc.add(probs[i*m.n:(i+1)*m.n], float64(q))
		}
	}
	return acc.use()
}

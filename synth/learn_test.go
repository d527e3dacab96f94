package synth

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/optimize"
)

// A small stand-in for the models package: LMT and Monomer trained with
// L-BFGS on one top's image items, to check that the planted relations are
// learnable and that also_bought needs Monomer's mixture.

type pair struct {
	x, y  int32
	label float64
}

type learnData struct {
	feat  [][]float64 // per item, scaled to [0, 1]
	train []pair
	test  []pair
}

// learnSet builds positives from the planted edges between image items of
// top, negatives by degree-preserving rewiring, and an 80/20 split.
func learnSet(t testing.TB, w *World, graph string, top int, f int) *learnData {
	t.Helper()
	ok := func(i int32) bool {
		it := &w.Items[i]
		return it.Kind == Regular && it.Top == top && it.HasImage
	}
	var pos []Edge
	seen := map[Edge]bool{}
	for _, e := range w.Edges(graph) {
		if ok(e.Src) && ok(e.Dst) {
			pos = append(pos, e)
			seen[e] = true
		}
	}
	r := rand.New(rand.NewPCG(1, 1))
	neg := append([]Edge(nil), pos...)
	for range 20 * len(neg) {
		a, b := r.IntN(len(neg)), r.IntN(len(neg))
		e1 := Edge{neg[a].Src, neg[b].Dst}
		e2 := Edge{neg[b].Src, neg[a].Dst}
		if e1.Src == e1.Dst || e2.Src == e2.Dst || seen[e1] || seen[e2] ||
			w.Items[e1.Src].Subcat == w.Items[e1.Dst].Subcat || w.Items[e2.Src].Subcat == w.Items[e2.Dst].Subcat {
			continue
		}
		delete(seen, neg[a])
		delete(seen, neg[b])
		neg[a], neg[b] = e1, e2
		seen[e1], seen[e2] = true, true
	}
	var pairs []pair
	for _, e := range pos {
		pairs = append(pairs, pair{e.Src, e.Dst, 1})
	}
	for _, e := range neg {
		pairs = append(pairs, pair{e.Src, e.Dst, 0})
	}
	r.Shuffle(len(pairs), func(a, b int) { pairs[a], pairs[b] = pairs[b], pairs[a] })
	d := &learnData{feat: make([][]float64, len(w.Items))}
	vec := make([]float32, f)
	for i := range w.Items {
		if !ok(int32(i)) {
			continue
		}
		row := make([]float64, f)
		w.Feature(i, vec)
		for j, v := range vec {
			row[j] = float64(v) / 58.388599
		}
		d.feat[i] = row
	}
	cut := len(pairs) * 8 / 10
	d.train, d.test = pairs[:cut], pairs[cut:]
	return d
}

// mixModel is Monomer with N spaces of rank K; LMT is N = 1 with E_1 = E_0
// (tied), no gate.
type mixModel struct {
	f, k, n int
	tied    bool
}

func (m mixModel) size() int {
	if m.tied {
		return m.f*m.k + 1
	}
	return m.f*m.k*(m.n+1) + m.f*m.n + 1
}

// eval returns the negative log-likelihood plus lambda*||theta||^2 (and its
// gradient into grad, if not nil) and the error rate on pairs. Projections
// are computed once per item: P_s = X E_s, Q = X U.
func (m mixModel) eval(theta []float64, d *learnData, pairs []pair, lambda float64, grad []float64) (loss, errRate float64) {
	f, k, n := m.f, m.k, m.n
	spaces := n + 1
	if m.tied {
		n, spaces = 1, 1
	}
	items := len(d.feat)
	proj := make([][]float64, spaces) // per space: items x k
	gproj := make([][]float64, spaces)
	for s := range spaces {
		proj[s] = make([]float64, items*k)
		gproj[s] = make([]float64, items*k)
	}
	var gate, ggate []float64
	if !m.tied {
		gate = make([]float64, items*n)
		ggate = make([]float64, items*n)
	}
	u := theta[spaces*f*k:]
	for i, x := range d.feat {
		if x == nil {
			continue
		}
		for s := range spaces {
			e := theta[s*f*k : (s+1)*f*k]
			p := proj[s][i*k : (i+1)*k]
			for j, v := range x {
				if v != 0 {
					for a := range k {
						p[a] += v * e[j*k+a]
					}
				}
			}
		}
		if !m.tied {
			g := gate[i*n : (i+1)*n]
			for j, v := range x {
				if v != 0 {
					for s := range n {
						g[s] += v * u[j*n+s]
					}
				}
			}
			hi := math.Inf(-1)
			for s := range n {
				hi = max(hi, g[s])
			}
			sum := 0.0
			for s := range n {
				g[s] = math.Exp(g[s] - hi)
				sum += g[s]
			}
			for s := range n {
				g[s] /= sum
			}
		}
	}
	c := theta[len(theta)-1]
	dk := make([]float64, n)
	gc := 0.0
	wrong := 0
	for _, p := range pairs {
		x, y := int(p.x), int(p.y)
		a0 := proj[0][x*k : (x+1)*k]
		dist := 0.0
		for s := range n {
			b := proj[min(s+1, spaces-1)][y*k : (y+1)*k]
			dk[s] = 0
			for a := range k {
				dd := a0[a] - b[a]
				dk[s] += dd * dd
			}
			if m.tied {
				dist = dk[0]
			} else {
				dist += gate[x*n+s] * dk[s]
			}
		}
		z := c - dist
		prob := 1 / (1 + math.Exp(-z))
		if (prob > 0.5) != (p.label == 1) {
			wrong++
		}
		sign := 1.0
		if p.label == 1 {
			sign = -1
		}
		loss += math.Log1p(math.Exp(-math.Abs(z))) + max(sign*z, 0)
		if grad == nil {
			continue
		}
		rr := prob - p.label // dL/dz; dL/d dist = -rr
		gc += rr
		for s := range n {
			sb := min(s+1, spaces-1)
			g := 1.0
			if !m.tied {
				g = gate[x*n+s]
				ggate[x*n+s] += -rr * g * (dk[s] - dist)
			}
			b := proj[sb][y*k : (y+1)*k]
			for a := range k {
				dd := -rr * g * 2 * (a0[a] - b[a])
				gproj[0][x*k+a] += dd
				gproj[sb][y*k+a] -= dd
			}
		}
	}
	if grad != nil {
		for i := range grad {
			grad[i] = 0
		}
		for i, x := range d.feat {
			if x == nil {
				continue
			}
			for j, v := range x {
				if v == 0 {
					continue
				}
				for s := range spaces {
					gp := gproj[s][i*k : (i+1)*k]
					ge := grad[s*f*k+j*k : s*f*k+(j+1)*k]
					for a := range k {
						ge[a] += v * gp[a]
					}
				}
				if !m.tied {
					gu := grad[spaces*f*k+j*n : spaces*f*k+(j+1)*n]
					for s := range n {
						gu[s] += v * ggate[i*n+s]
					}
				}
			}
		}
		grad[len(grad)-1] = gc
	}
	for i, v := range theta[:len(theta)-1] {
		loss += lambda * v * v
		if grad != nil {
			grad[i] += 2 * lambda * v
		}
	}
	return loss, float64(wrong) / float64(len(pairs))
}

// fit trains m and returns the test error rate.
func (m mixModel) fit(t testing.TB, d *learnData, lambda float64, iters int) float64 {
	r := rand.New(rand.NewPCG(2, 2))
	theta := make([]float64, m.size())
	for i := range theta {
		theta[i] = 0.1 * r.NormFloat64()
	}
	theta[len(theta)-1] = 1
	p := optimize.Problem{
		Func: func(x []float64) float64 { l, _ := m.eval(x, d, d.train, lambda, nil); return l },
		Grad: func(grad, x []float64) { m.eval(x, d, d.train, lambda, grad) },
	}
	res, err := optimize.Minimize(p, theta, &optimize.Settings{MajorIterations: iters}, &optimize.LBFGS{})
	if err != nil && res == nil {
		t.Fatal(err)
	}
	_, e := m.eval(res.X, d, d.test, 0, nil)
	_, etr := m.eval(res.X, d, d.train, 0, nil)
	t.Logf("%+v lambda %g: train error %.3f, test %.3f, %d iterations, %v", m, lambda, etr, e, res.Stats.MajorIterations, res.Status)
	return e
}

// TestPlantedLearnable trains LMT and Monomer on the Women items of the small
// scale at F = 128: on also_bought LMT must beat chance clearly and Monomer
// must beat LMT. (On also_viewed the two are close: 0.225 and 0.209 after
// 150 iterations.)
func TestPlantedLearnable(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two small models for about 10 s")
	}
	cfg, _ := Scale("small")
	cfg.FeatureDim = 128
	w, err := NewWorld(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		graph           string
		maxLMT, minGain float64
	}{
		{AlsoBought, 0.40, 0.03},
	} {
		d := learnSet(t, w, c.graph, 1, cfg.FeatureDim)
		start := time.Now()
		lmt := mixModel{f: cfg.FeatureDim, k: 8, tied: true}.fit(t, d, 1, 100)
		mono := mixModel{f: cfg.FeatureDim, k: 8, n: 4}.fit(t, d, 1, 100)
		t.Logf("%s: %d train, %d test pairs: LMT error %.3f, Monomer error %.3f (%v)", c.graph, len(d.train), len(d.test), lmt, mono, time.Since(start))
		if lmt > c.maxLMT {
			t.Errorf("%s: LMT error %.3f above %.2f", c.graph, lmt, c.maxLMT)
		}
		if c.minGain > 0 && mono > lmt-c.minGain {
			t.Errorf("%s: Monomer error %.3f not %.2f below LMT's %.3f", c.graph, mono, c.minGain, lmt)
		}
	}
}

func TestLearnGrad(t *testing.T) {
	cfg, _ := Scale("tiny")
	cfg.FeatureDim = 16
	w, _ := NewWorld(cfg, 1)
	d := learnSet(t, w, AlsoBought, 1, 16)
	d.train = d.train[:200]
	for _, m := range []mixModel{{f: 16, k: 3, tied: true}, {f: 16, k: 3, n: 3}} {
		r := rand.New(rand.NewPCG(3, 3))
		theta := make([]float64, m.size())
		for i := range theta {
			theta[i] = r.NormFloat64()
		}
		grad := make([]float64, len(theta))
		m.eval(theta, d, d.train, 0.1, grad)
		for i := range theta {
			h := 1e-6
			old := theta[i]
			theta[i] = old + h
			lp, _ := m.eval(theta, d, d.train, 0.1, nil)
			theta[i] = old - h
			lm, _ := m.eval(theta, d, d.train, 0.1, nil)
			theta[i] = old
			num := (lp - lm) / (2 * h)
			if math.Abs(num-grad[i]) > 1e-4*max(1, math.Abs(num)) {
				t.Fatalf("%+v: grad[%d] = %g, numeric %g", m, i, grad[i], num)
			}
		}
	}
}

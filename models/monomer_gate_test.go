package models

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGateUse checks GateUse's two numbers on gates whose answer is known.
func TestGateUse(t *testing.T) {
	third := 1.0 / 3
	tests := []struct {
		name           string
		gates          [][]float64
		weights        []float64
		spaces, routes float64
	}{
		{"collapsed", [][]float64{{1, 0, 0}, {1, 0, 0}}, []float64{1, 5}, 1, 1},
		{"uniform: spread, no choice", [][]float64{{third, third, third}, {third, third, third}}, []float64{2, 1}, 3, 1},
		{"one space a query, equal shares", [][]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, []float64{1, 1, 1}, 3, 3},
		// Weights are pair counts: 3 pairs on space 1, 1 on space 2.
		{"weighted", [][]float64{{1, 0}, {0, 1}}, []float64{3, 1}, math.Exp(-0.75*math.Log(0.75) - 0.25*math.Log(0.25)),
			math.Exp(-0.75*math.Log(0.75) - 0.25*math.Log(0.25))},
		// Each query half on a space of its own pair of spaces: two spaces
		// chosen among, each query spreading over two.
		{"pairs of spaces", [][]float64{{0.5, 0.5, 0, 0}, {0, 0, 0.5, 0.5}}, []float64{1, 1}, 4, 2},
	}
	for _, tc := range tests {
		var a gateAcc
		for i, g := range tc.gates {
			a.add(g, tc.weights[i])
		}
		u := a.use()
		if math.Abs(u.Spaces-tc.spaces) > 1e-12 || math.Abs(u.Routes-tc.routes) > 1e-12 {
			t.Errorf("%s: spaces %v routes %v, want %v %v", tc.name, u.Spaces, u.Routes, tc.spaces, tc.routes)
		}
	}
	var empty gateAcc
	if u := empty.use(); !math.IsNaN(u.Spaces) || !math.IsNaN(u.Routes) {
		t.Errorf("no queries: %+v, want NaN", u)
	}
}

// TestGateUsePlanted: on newPlanted's world with one transform the trained
// gate (default settings) spreads the distances over about one space; with
// four transforms, chosen by a linear function of the latents, over clearly
// more. GridPoint.Gate is NaN for LMT. Measured (gate spaces, routes; K 4,
// N 4, λ 1e-4, 200 iterations, patience 6):
//
//	seed         1          2          3
//	1 notion     1.44 1.03  1.37 1.03  1.19 1.01
//	4 notions    2.03 1.05  1.90 1.04  2.37 1.28
//
// Routes stay near 1: the default gate spreads each query over the same
// spaces instead of choosing one per notion
// (docs/notes/2026-11-25-gate-spaces.md).
func TestGateUsePlanted(t *testing.T) {
	spaces := map[int][]float64{}
	for _, notions := range []int{1, 4} {
		for seed := uint64(1); seed <= 3; seed++ {
			w := newPlanted(plantedConfig{items: 2500, shared: 1, styled: 4, dim: 64, outDegree: 2, noise: 0.05, notions: notions}, rand.New(rand.NewPCG(seed, 1)))
			spec := Spec{Model: ModelMonomer, K: 4, N: 4, Lambdas: []float64{1e-4}, MaxIter: 200, Patience: 6}
			f, err := Train(t.Context(), w.feat, w.train, w.valid, spec, rand.New(rand.NewPCG(seed, 1)), nil)
			if err != nil {
				t.Fatal(err)
			}
			g := f.Grid[0].Gate
			t.Logf("%d notions, seed %d: test error %.3f, gate spaces %.2f, routes %.2f", notions, seed, testError(t, f, w.feat, w.test), g.Spaces, g.Routes)
			if !(g.Routes >= 1 && g.Routes <= g.Spaces && g.Spaces <= float64(spec.N)) {
				t.Errorf("%d notions, seed %d: spaces %v routes %v, want 1 <= routes <= spaces <= %d", notions, seed, g.Spaces, g.Routes, spec.N)
			}
			spaces[notions] = append(spaces[notions], g.Spaces)
		}
	}
	one, four := spaces[1], spaces[4]
	for i := range one {
		if one[i] > 1.5 {
			t.Errorf("one notion, seed %d: the gate uses %.2f spaces, want about 1 (<= 1.5)", i+1, one[i])
		}
		if four[i] < one[i]+0.4 {
			t.Errorf("seed %d: the gate uses %.2f spaces with four notions, %.2f with one: want 0.4 more", i+1, four[i], one[i])
		}
	}
	w := newPlanted(plantedConfig{items: 300, shared: 1, styled: 2, dim: 16, outDegree: 2, noise: 0.05}, rand.New(rand.NewPCG(1, 1)))
	f, err := Train(t.Context(), w.feat, w.train, w.valid, Spec{Model: ModelLMT, K: 4, Lambdas: []float64{1e-4}, MaxIter: 5}, rand.New(rand.NewPCG(1, 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if g := f.Grid[0].Gate; !math.IsNaN(g.Spaces) || !math.IsNaN(g.Routes) {
		t.Errorf("LMT: gate %+v, want NaN", g)
	}
}

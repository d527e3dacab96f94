package models

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"monomer/graph"
)

// The inner-product form is the distance: c_x − q_x·v_y = d(x, y) straight
// from Eqs. 3-6 for every pair of random items (Monomer's gate included),
// so ranking a query's items by q_x·v_y descending is ranking them by d
// ascending, and σ(c − c_x + q_x·v_y) is Score's P(related).
func TestInnerProductIsDistance(t *testing.T) {
	const items, dim = 120, 16
	for _, tc := range []struct {
		model, kind string
		k, n        int
	}{
		{ModelLMT, "dense", 6, 0},
		{ModelLMT, "sparse", 6, 0},
		{ModelMonomer, "dense", 4, 3},
		{ModelMonomer, "sparse", 4, 3},
		{ModelMonomer, "dense", 5, 1},
	} {
		t.Run(tc.model+"/"+tc.kind, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(tc.k*10+tc.n)))
			var feat Features = randDense(rng, items, dim)
			if tc.kind == "sparse" {
				feat = randSparse(rng, items, dim, 5)
			}
			f := randFit(t, rng, tc.model, dim, tc.k, tc.n)
			all := make([]int32, items)
			for i := range all {
				all[i] = int32(i)
			}
			p, err := f.Project(feat, all)
			if err != nil {
				t.Fatal(err)
			}
			v, err := f.ItemVectors(p)
			if err != nil {
				t.Fatal(err)
			}
			q, off, err := f.QueryVectors(p)
			if err != nil {
				t.Fatal(err)
			}
			d := f.InnerDim()
			if want := max(tc.n, 1) * (tc.k + 1); d != want || len(v) != items*d || len(q) != items*d || len(off) != items {
				t.Fatalf("dim %d (want %d), %d item values, %d query values, %d offsets", d, want, len(v), len(q), len(off))
			}
			dot := func(x, y int) float64 {
				var s float64
				for j := range d {
					s += q[x*d+j] * v[y*d+j]
				}
				return s
			}
			var pairs []graph.Pair
			for x := range items {
				type cd struct {
					y         int
					dist, ipv float64
				}
				var row []cd
				for y := range items {
					dist := bruteDist(f, feat, x, y)
					ip := dot(x, y)
					if got := off[x] - ip; math.Abs(got-dist) > 1e-9*(1+math.Abs(dist)) {
						t.Fatalf("pair (%d, %d): c_x − q·v = %.15g, distance %.15g", x, y, got, dist)
					}
					row = append(row, cd{y, dist, ip})
				}
				byDist, byIP := slices.Clone(row), slices.Clone(row)
				slices.SortStableFunc(byDist, func(a, b cd) int { return cmpF(a.dist, b.dist) })
				slices.SortStableFunc(byIP, func(a, b cd) int { return cmpF(b.ipv, a.ipv) })
				for r := range byDist {
					if byDist[r].y != byIP[r].y && math.Abs(byDist[r].dist-byIP[r].dist) > 1e-9*(1+math.Abs(byDist[r].dist)) {
						t.Fatalf("query %d rank %d: %d by distance, %d by inner product", x, r, byDist[r].y, byIP[r].y)
					}
				}
				pairs = append(pairs, graph.Pair{X: int32(x), Y: int32(rng.IntN(items))})
			}
			_, prob, err := f.Score(feat, pairs)
			if err != nil {
				t.Fatal(err)
			}
			for i, pr := range pairs {
				if got := sigmoidStable(f.C - off[pr.X] + dot(int(pr.X), int(pr.Y))); math.Abs(got-prob[i]) > 1e-9 {
					t.Errorf("pair (%d, %d): σ(c − c_x + q·v) = %.12g, Score %.12g", pr.X, pr.Y, got, prob[i])
				}
			}
		})
	}
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// A model without an embedding has no inner-product form.
func TestInnerProductRefusesWNN(t *testing.T) {
	f := randFit(t, rand.New(rand.NewPCG(1, 1)), ModelWNN, 4, 0, 0)
	if f.InnerDim() != 0 {
		t.Errorf("WNN InnerDim %d", f.InnerDim())
	}
	if _, err := f.ItemVectors(&Projection{}); err == nil {
		t.Error("ItemVectors of WNN: no error")
	}
	if _, _, err := f.QueryVectors(&Projection{}); err == nil {
		t.Error("QueryVectors of WNN: no error")
	}
}

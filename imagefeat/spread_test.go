package imagefeat

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// TestVariesAsSpreadOf: Varies gives SpreadOf's zero-variance verdict on
// varied rows, constant rows, constant rows mixing -0 and +0, rows that
// differ only in the last value of the last row listed, and one row.
func TestVariesAsSpreadOf(t *testing.T) {
	const dim = 301
	rng := rand.New(rand.NewPCG(3, 3))
	recs := randomRecords(rng, 40, dim)
	constant := func(n int, vec func(i int) []float32) []record {
		rs := make([]record, n)
		for i := range rs {
			rs[i] = record{asinOf(i), vec(i)}
		}
		return rs
	}
	signed := func(i int) []float32 {
		v := make([]float32, dim)
		copy(v, recs[0].vec)
		v[7] = 0
		if i%2 == 1 {
			v[7] = float32(math.Copysign(0, -1))
		}
		return v
	}
	last := constant(9, func(i int) []float32 {
		v := append([]float32(nil), recs[1].vec...)
		if i == 8 {
			v[dim-1]++
		}
		return v
	})
	cases := map[string]struct {
		rs   []record
		want bool
	}{
		"varied":            {recs, true},
		"constant":          {constant(5, func(int) []float32 { return recs[0].vec }), false},
		"constant, -0 = +0": {constant(6, signed), false},
		"last value":        {last, true},
		"one row":           {recs[:1], false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			in := writeFile(t, dir, "x.b", encode(t, c.rs, dim, false))
			rows := map[string]int32{}
			for i, r := range c.rs {
				rows[r.asin] = int32(i)
			}
			out := filepath.Join(dir, "m.arrow")
			if _, err := Extract(context.Background(), in, rows, len(rows), 7, out, WithDim(dim)); err != nil {
				t.Fatal(err)
			}
			m, err := OpenMatrix(out)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			list := make([]int32, len(c.rs))
			for i := range list {
				list[i] = int32(i)
			}
			sp, err := SpreadOf(context.Background(), m, list)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Varies(context.Background(), m, list)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want || got != (sp.Variance != 0) {
				t.Fatalf("Varies %v, want %v; SpreadOf's variance %v", got, c.want, sp.Variance)
			}
		})
	}
}

package imagefeat

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
)

// TestVarianceOfAsSpreadOf: VarianceOf's Variance and MaxAbs are
// SpreadOf's bits at any GOMAXPROCS, over dimensions that are not a
// multiple of its task span, for varied and for constant rows.
func TestVarianceOfAsSpreadOf(t *testing.T) {
	const dim = 2*spreadDims + 45
	rng := rand.New(rand.NewPCG(3, 3))
	recs := randomRecords(rng, 40, dim)
	same := make([]record, 5)
	for i := range same {
		same[i] = record{asinOf(i), recs[0].vec}
	}
	for name, rs := range map[string][]record{"varied": recs, "constant": same} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			in := writeFile(t, dir, "x.b", encode(t, rs, dim, false))
			rows := map[string]int32{}
			for i, r := range rs {
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
			var list []int32
			for i := range len(rs) {
				if i%4 != 1 {
					list = append(list, int32(len(rs)-1-i))
				}
			}
			want, err := SpreadOf(context.Background(), m, list)
			if err != nil {
				t.Fatal(err)
			}
			if name == "constant" && want.Variance != 0 {
				t.Fatalf("constant rows: variance %v", want.Variance)
			}
			for _, procs := range []int{1, 2, 3, 7, 16} {
				prev := runtime.GOMAXPROCS(procs)
				got, err := VarianceOf(context.Background(), m, list)
				runtime.GOMAXPROCS(prev)
				if err != nil {
					t.Fatal(err)
				}
				if math.Float64bits(got.Variance) != math.Float64bits(want.Variance) || got.MaxAbs != want.MaxAbs || got.Rows != want.Rows {
					t.Fatalf("GOMAXPROCS %d: %s, want %s", procs, fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want))
				}
			}
		})
	}
}

package csrkern

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// draw fills v with zeros, subnormals, values whose products overflow, and
// ordinary values of varied magnitude.
func draw(rng *rand.Rand, v []float32) {
	for i := range v {
		switch rng.IntN(20) {
		case 0:
			v[i] = 0
		case 1:
			v[i] = float32(rng.NormFloat64() * 1e-39)
		case 2:
			v[i] = float32(rng.NormFloat64() * 1e25)
		default:
			v[i] = float32(rng.NormFloat64() * math.Exp(rng.NormFloat64()))
		}
	}
}

// sparseRow draws ascending column indices in [0, rows) with values.
func sparseRow(rng *rand.Rand, rows, nnz int) ([]int32, []float32) {
	var idx []int32
	for c := range rows {
		if rng.IntN(rows) < nnz {
			idx = append(idx, int32(c))
		}
	}
	val := make([]float32, len(idx))
	draw(rng, val)
	return idx, val
}

// paths runs fn once for each kernel path this machine has (Go, AVX2,
// AVX-512), with the kernels set to take it.
func paths(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	defer func() { use = best }()
	for p := pathGo; p <= pathAVX512; p++ {
		if p > best {
			t.Run(pathNames[p], func(t *testing.T) {
				t.Skipf("SKIPPING the %s kernels: this CPU lacks them (or GODEBUG turned them off)", pathNames[p])
			})
			continue
		}
		use = p
		t.Run(pathNames[p], fn)
	}
}

// widths are tile boundaries of every path (AVX2 vectors of 8, tails of
// 4, 2 and 1, passes of 104 and 111; AVX-512 vectors of 16 and tiles of
// 128) and the models' C: LMT's 100 and 50, Monomer's 104 and 54.
var widths = []int{1, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 32, 33, 36, 40, 47, 48, 49, 50, 54, 63, 64, 65,
	95, 96, 97, 100, 104, 111, 112, 113, 127, 128, 129, 144, 200, 257}

// nnzs are the non-zero counts a row takes: empty, around the AVX-512
// kernels' prefetch distance (8 ahead), a third, all.
func nnzs(rows int) []int { return []int{0, 1, 7, 8, 9, 17, rows / 3, rows} }

// TestKernelsMatchGo: on every path the CPU has, RowMul and RowAcc give
// the bits of the plain loops, at widths around every tile boundary,
// strides wider than the row, empty rows and full ones.
func TestKernelsMatchGo(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 5))
		for _, cols := range widths {
			for _, pad := range []int{0, 1, 5} {
				stride, rows := cols+pad, 1+rng.IntN(60)
				for _, nnz := range nnzs(rows) {
					idx, val := sparseRow(rng, rows, nnz)
					w := make([]float32, rows*stride)
					draw(rng, w)
					got, want := make([]float32, cols), make([]float32, cols)
					draw(rng, got) // RowMul overwrites
					RowMul(got, idx, val, w, stride)
					mulAddGo(want, idx, val, w, stride)
					same(t, "RowMul", cols, stride, len(idx), got, want)

					g := make([]float32, cols)
					draw(rng, g)
					accGot := make([]float32, rows*stride)
					draw(rng, accGot)
					accWant := append([]float32(nil), accGot...)
					RowAcc(accGot, idx, val, g, stride)
					rowAccGo(accWant, idx, val, g, stride)
					same(t, "RowAcc", cols, stride, len(idx), accGot, accWant)
				}
			}
		}
	})
}

// TestCombineMatchesAxpys: on every path, Combine gives the bits of
// axpys into a cleared row, j in order, at every width, for rows at any
// offsets (unaligned, overlapping, repeated, in any order) and at the very
// end of src.
func TestCombineMatchesAxpys(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(6, 6))
		for _, cols := range widths {
			src := make([]float32, 3*cols+40)
			draw(rng, src)
			for _, n := range []int{0, 1, 2, 7, 9, 17, 40} {
				off, coef := make([]int32, n), make([]float32, n)
				for j := range off {
					off[j] = int32(rng.IntN(len(src) - cols + 1))
				}
				if n > 0 {
					off[n-1] = int32(len(src) - cols)
				}
				draw(rng, coef)
				got, want := make([]float32, cols), make([]float32, cols)
				draw(rng, got) // Combine overwrites
				for j, o := range off {
					for k := range want {
						want[k] += float32(coef[j] * src[int(o)+k])
					}
				}
				Combine(got, off, coef, src)
				same(t, "Combine", cols, cols, n, got, want)
			}
		}
	})
}

// TestColsMatchRowAcc: on every path, Cols.AddTo adds Xᵀ·G with the bits
// of the Go loop of RowAcc over the rows in order, and Cols.MulTo forms
// X·W with those of RowMul's, for blocks of one row,
// of a few, and of all rows, ranges of one column, of a few, and of all,
// the sizes NewCols picks, rows of every length (empty ones included), and
// accumulators that already hold values.
func TestColsMatchRowAcc(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(6, 6))
		for _, cols := range widths {
			pad := rng.IntN(3)
			stride, dim, rows := cols+pad, 1+rng.IntN(70), rng.IntN(120)
			x := make([][2]any, rows)
			for i := range x {
				idx, val := sparseRow(rng, dim, nnzs(dim)[rng.IntN(8)])
				x[i] = [2]any{idx, val}
			}
			row := func(i int) ([]int32, []float32) { return x[i][0].([]int32), x[i][1].([]float32) }
			g := make([]float32, rows*cols)
			draw(rng, g)
			acc0 := make([]float32, dim*stride)
			draw(rng, acc0)
			want := append([]float32(nil), acc0...)
			for i := range rows {
				idx, val := row(i)
				rowAccGo(want, idx, val, g[i*cols:(i+1)*cols], stride)
			}
			for _, sz := range [][2]int{{1, 1}, {3, 7}, {64, 16}, {max(rows, 1), dim}, {0, 0}} {
				var c *Cols
				if sz[0] == 0 {
					c = NewCols(rows, dim, cols, row)
				} else {
					nnz := 0
					for i := range rows {
						nnz += len(x[i][0].([]int32))
					}
					c = newCols(rows, dim, cols, sz[0], sz[1], nnz, row)
				}
				got := append([]float32(nil), acc0...)
				c.AddTo(got, g, cols, stride)
				same(t, fmt.Sprintf("Cols.AddTo, blocks of %d rows, ranges of %d columns,", c.block, c.span), cols, stride, rows, got, want)

				// P = X·W with acc0 as W (dim rows, stride apart).
				p := make([]float32, rows*cols)
				draw(rng, p) // MulTo overwrites
				c.MulTo(p, acc0, cols, stride)
				for i := range rows {
					idx, val := row(i)
					pw := make([]float32, cols)
					mulAddGo(pw, idx, val, acc0, stride)
					same(t, fmt.Sprintf("Cols.MulTo row %d, blocks of %d rows,", i, c.block), cols, stride, len(idx), p[i*cols:(i+1)*cols], pw)
				}
			}
		}
	})
}

func same(t *testing.T, what string, cols, stride, nnz int, got, want []float32) {
	t.Helper()
	for k := range want {
		if math.Float32bits(got[k]) != math.Float32bits(want[k]) && !(got[k] != got[k] && want[k] != want[k]) {
			t.Fatalf("%s cols=%d stride=%d nnz=%d: element %d is %v, the Go loop's %v", what, cols, stride, nnz, k, got[k], want[k])
		}
	}
}

// TestPlainArithmetic pins the Go loops themselves on a case worked by hand.
func TestPlainArithmetic(t *testing.T) {
	w := []float32{1, 2, 9, 3, 4, 9, 5, 6, 9} // 3 rows, stride 3, 2 columns used
	out := make([]float32, 2)
	RowMul(out, []int32{0, 2}, []float32{2, -1}, w, 3)
	if out[0] != 2*1-5 || out[1] != 2*2-6 {
		t.Fatalf("RowMul = %v, want [-3 -2]", out)
	}
	acc := make([]float32, 9)
	RowAcc(acc, []int32{1, 2}, []float32{2, 3}, []float32{1, -1}, 3)
	want := []float32{0, 0, 0, 2, -2, 0, 3, -3, 0}
	for i := range want {
		if acc[i] != want[i] {
			t.Fatalf("RowAcc = %v, want %v", acc, want)
		}
	}
}

// TestBoundsPanic: an index past the matrix panics instead of reading it.
func TestBoundsPanic(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for an index past the matrix")
		}
	}()
	RowMul(make([]float32, 2), []int32{0, 3}, []float32{1, 1}, make([]float32, 9), 3)
}

// TestColsEveryWidth: on every path, Cols.AddTo and Cols.MulTo have the
// bits of the Go loops at every C from 1 to 130 (each AVX2 tile of 1-13
// vectors with each of its 8 masks, two passes past 104 columns; AVX-512's
// 1-8 vectors and the AVX2 passes past 128), odd counts of rows, of
// columns and of non-zeros, blocks of odd sizes, rows of the accumulator
// and of W with no padding and odd padding. The kernels run on one
// goroutine: GOMAXPROCS plays no part.
func TestColsEveryWidth(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 7))
		for cols := 1; cols <= 130; cols++ {
			stride, dim, rows := cols+2*rng.IntN(2)*rng.IntN(4), 1+2*rng.IntN(20), 1+2*rng.IntN(40)
			x := make([][2]any, rows)
			nnz := 0
			for i := range x {
				idx, val := sparseRow(rng, dim, 1+2*rng.IntN(dim/2+1))
				x[i] = [2]any{idx, val}
				nnz += len(idx)
			}
			row := func(i int) ([]int32, []float32) { return x[i][0].([]int32), x[i][1].([]float32) }
			g := make([]float32, rows*cols)
			draw(rng, g)
			acc0 := make([]float32, dim*stride)
			draw(rng, acc0)
			want := append([]float32(nil), acc0...)
			for i := range rows {
				idx, val := row(i)
				rowAccGo(want, idx, val, g[i*cols:(i+1)*cols], stride)
			}
			pw := make([]float32, rows*cols)
			for i := range rows {
				idx, val := row(i)
				mulAddGo(pw[i*cols:(i+1)*cols], idx, val, acc0, stride)
			}
			for _, block := range []int{1, 3, 1 + 2*rng.IntN(rows/2+1), rows} {
				c := newCols(rows, dim, cols, block, dim, nnz, row)
				got := append([]float32(nil), acc0...)
				c.AddTo(got, g, cols, stride)
				same(t, fmt.Sprintf("Cols.AddTo, blocks of %d rows of %d,", block, rows), cols, stride, nnz, got, want)

				// P = X·W with acc0 as W.
				p := make([]float32, rows*cols)
				draw(rng, p) // MulTo overwrites
				c.MulTo(p, acc0, cols, stride)
				same(t, fmt.Sprintf("Cols.MulTo, blocks of %d rows of %d,", block, rows), cols, stride, nnz, p, pw)
			}
		}
	})
}

// TestColsAddKernelUnpadded: colsAdd on every path reads and writes only
// the c floats of each row, G's rows c floats apart and not padded: the
// floats around them, NaN, would turn up in the sums, and those of the
// accumulator's padding must keep their bits.
func TestColsAddKernelUnpadded(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(8, 8))
		nan := float32(math.NaN())
		for cols := 1; cols <= 130; cols++ {
			stride, dim, rows := cols+3, 5, 9
			// G: rows × cols between NaN guards of a vector each.
			gbuf := make([]float32, 16+rows*cols+16)
			for i := range gbuf {
				gbuf[i] = nan
			}
			g := gbuf[16 : 16+rows*cols]
			draw(rng, g)
			for i := range g {
				if g[i] != g[i] {
					g[i] = 1
				}
			}
			acc := make([]float32, dim*stride)
			for f := range dim {
				draw(rng, acc[f*stride:f*stride+cols])
				for k := cols; k < stride; k++ {
					acc[f*stride+k] = nan
				}
			}
			want := append([]float32(nil), acc...)
			// Columns 0, 2 and 4 with 1, 3 and 5 non-zeros on rows 0..8.
			feat, end := []int32{0, 2, 4}, []int32{1, 4, 9}
			r := []int32{8, 0, 4, 8, 0, 1, 2, 3, 8}
			val := make([]float32, len(r))
			draw(rng, val)
			colsAddGo(want, stride, cols, feat, end, 0, r, val, g, cols)
			colsAdd(acc, stride, cols, feat, end, 0, r, val, g, cols)
			same(t, "colsAdd", cols, stride, len(r), acc, want)
		}
	})
}

// TestRowsEveryWidth: on every path, RowMul, RowAcc and Combine have the
// bits of the Go loops at every C from 1 to 130 (the AVX2 row kernels: 0-13
// vectors and each of the 7 tails of 1-7 columns, or each of the 8 masks;
// two passes past 104 or 111 columns), odd non-zero counts, rows with no
// padding or odd padding.
func TestRowsEveryWidth(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 9))
		for cols := 1; cols <= 130; cols++ {
			stride, rows := cols+2*rng.IntN(2)*rng.IntN(4), 1+2*rng.IntN(30)
			for _, nnz := range []int{1, 3, 1 + 2*rng.IntN(rows/2+1)} {
				idx, val := sparseRow(rng, rows, nnz)
				if len(idx) == 0 {
					continue
				}
				w := make([]float32, rows*stride)
				draw(rng, w)
				got, want := make([]float32, cols), make([]float32, cols)
				RowMul(got, idx, val, w, stride)
				mulAddGo(want, idx, val, w, stride)
				same(t, "RowMul", cols, stride, len(idx), got, want)

				off := make([]int32, len(idx))
				for j, r := range idx {
					off[j] = r*int32(stride) + int32(rng.IntN(stride-cols+1))
				}
				Combine(got, off, val, w)
				clear(want)
				mulAddGo(want, off, val, w, 1)
				same(t, "Combine", cols, stride, len(idx), got, want)

				g := make([]float32, cols)
				draw(rng, g)
				accGot := make([]float32, rows*stride)
				draw(rng, accGot)
				accWant := append([]float32(nil), accGot...)
				RowAcc(accGot, idx, val, g, stride)
				rowAccGo(accWant, idx, val, g, stride)
				same(t, "RowAcc", cols, stride, len(idx), accGot, accWant)
			}
		}
	})
}

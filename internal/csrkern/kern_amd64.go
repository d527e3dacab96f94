package csrkern

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasAVX2 selects the assembly kernels; the Go ones give the same bits.
var hasAVX2 = cpu.X86.HasAVX2

// kernel is one assembly tile kernel: dst and src are the tile's first
// element in the output (or accumulator) and in w (or g).
type kernel func(dst *float32, idx *int32, val *float32, n int, src *float32, sb int)

// tiles lists the assembly's tile widths, widest first, with their
// kernels: each runs its columns over all of a row's non-zeros, keeping the
// tile's sums (RowMul) or g's tile (RowAcc) in registers, 96 columns in
// twelve 8-lane registers down to single columns.
var tiles = [...]struct {
	width    int
	mul, acc kernel
}{{96, mul96, acc96}, {32, mul32, acc32}, {8, mul8, acc8}, {4, mul4, acc4}, {1, mul1, acc1}}

func rowMul(out []float32, idx []int32, val []float32, w []float32, stride int) {
	if !hasAVX2 || len(idx) == 0 {
		rowMulGo(out, idx, val, w, stride)
		return
	}
	k := 0
	for _, t := range tiles {
		for ; k+t.width <= len(out); k += t.width {
			t.mul(&out[k], unsafe.SliceData(idx), unsafe.SliceData(val), len(idx), &w[k], stride*4)
		}
	}
}

func rowAcc(acc []float32, idx []int32, val []float32, g []float32, stride int) {
	if !hasAVX2 || len(idx) == 0 {
		rowAccGo(acc, idx, val, g, stride)
		return
	}
	k := 0
	for _, t := range tiles {
		for ; k+t.width <= len(g); k += t.width {
			t.acc(&acc[k], unsafe.SliceData(idx), unsafe.SliceData(val), len(idx), &g[k], stride*4)
		}
	}
}

// mulW sets the W-wide tile at out to Σ_j val[j]·(the tile at w + idx[j]·sb
// bytes); accW adds val[j]·(the tile at g) to the tile at acc + idx[j]·sb.

//go:noescape
func mul96(out *float32, idx *int32, val *float32, n int, w *float32, sb int)

//go:noescape
func mul32(out *float32, idx *int32, val *float32, n int, w *float32, sb int)

//go:noescape
func mul8(out *float32, idx *int32, val *float32, n int, w *float32, sb int)

//go:noescape
func mul4(out *float32, idx *int32, val *float32, n int, w *float32, sb int)

//go:noescape
func mul1(out *float32, idx *int32, val *float32, n int, w *float32, sb int)

//go:noescape
func acc96(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int)

//go:noescape
func acc32(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int)

//go:noescape
func acc8(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int)

//go:noescape
func acc4(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int)

//go:noescape
func acc1(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int)

package csrkern

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasAVX2 selects the assembly kernels; the Go ones give the same bits.
var hasAVX2 = cpu.X86.HasAVX2

// The assembly runs one tile of columns over all of a row's non-zeros,
// keeping the tile's sums (RowMul) or g's tile (RowAcc) in registers: 96
// columns in twelve 8-lane registers, then 32, 8, 4 and single columns.
func rowMul(out []float32, idx []int32, val []float32, w []float32, stride int) {
	if !hasAVX2 || len(idx) == 0 {
		rowMulGo(out, idx, val, w, stride)
		return
	}
	ip, vp, n, sb := unsafe.SliceData(idx), unsafe.SliceData(val), len(idx), stride*4
	k := 0
	for ; k+96 <= len(out); k += 96 {
		mul96(&out[k], ip, vp, n, &w[k], sb)
	}
	for ; k+32 <= len(out); k += 32 {
		mul32(&out[k], ip, vp, n, &w[k], sb)
	}
	for ; k+8 <= len(out); k += 8 {
		mul8(&out[k], ip, vp, n, &w[k], sb)
	}
	for ; k+4 <= len(out); k += 4 {
		mul4(&out[k], ip, vp, n, &w[k], sb)
	}
	for ; k < len(out); k++ {
		mul1(&out[k], ip, vp, n, &w[k], sb)
	}
}

func rowAcc(acc []float32, idx []int32, val []float32, g []float32, stride int) {
	if !hasAVX2 || len(idx) == 0 {
		rowAccGo(acc, idx, val, g, stride)
		return
	}
	ip, vp, n, sb := unsafe.SliceData(idx), unsafe.SliceData(val), len(idx), stride*4
	k := 0
	for ; k+96 <= len(g); k += 96 {
		acc96(&acc[k], ip, vp, n, &g[k], sb)
	}
	for ; k+32 <= len(g); k += 32 {
		acc32(&acc[k], ip, vp, n, &g[k], sb)
	}
	for ; k+8 <= len(g); k += 8 {
		acc8(&acc[k], ip, vp, n, &g[k], sb)
	}
	for ; k+4 <= len(g); k += 4 {
		acc4(&acc[k], ip, vp, n, &g[k], sb)
	}
	for ; k < len(g); k++ {
		acc1(&acc[k], ip, vp, n, &g[k], sb)
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

package csrkern

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:generate go run gen_avx512.go
//go:generate go run gen_avx2.go

// widest picks AVX2 without asking for FMA: the kernels have none, as a
// fused multiply-add would round once where the Go loops round twice.
func widest() path {
	switch {
	case cpu.X86.HasAVX512F:
		return pathAVX512
	case cpu.X86.HasAVX2:
		return pathAVX2
	}
	return pathGo
}

// zkernel is an AVX-512 tile kernel of 16-lane vectors, the last one's
// lanes masked by mask.
type zkernel func(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask int)

// ztiles[v-1] holds v vectors (16·v columns) in registers; up to 8 leaves
// registers for the products and lets C = 104 (Monomer, K = 20, N = 4)
// take one pass over a row's non-zeros.
var ztiles = [...]zkernel{mulz1, mulz2, mulz3, mulz4, mulz5, mulz6, mulz7, mulz8}

// mulAdd adds Σ_j val[j]·src[idx[j]·stride+k] to out[k], in j order; idx
// is not empty and in range.
func mulAdd(out []float32, idx []int32, val []float32, src []float32, stride int) {
	pi, pv := unsafe.SliceData(idx), unsafe.SliceData(val)
	switch use {
	case pathAVX512:
		const widest = 16 * len(ztiles)
		for k := 0; k < len(out); k += widest {
			n := min(widest, len(out)-k)
			v := (n + 15) / 16
			ztiles[v-1](&out[k], pi, pv, len(idx), &src[k], stride*4, 1<<(n-16*(v-1))-1)
		}
	case pathAVX2:
		// Up to 104 columns a pass, the last vector masked: one pass at the
		// models' C where the AVX2 tiles before took two (C = 100: 96 + 4) to
		// five (C = 50: 32 + 8 + 8 + 1 + 1).
		const widest = 8 * len(mtiles)
		for k := 0; k < len(out); k += widest {
			n := min(widest, len(out)-k)
			v := (n + 7) / 8
			mtiles[v-1](&out[k], pi, pv, len(idx), &src[k], stride*4, &tailMask[8*v-n])
		}
	default:
		mulAddGo(out, idx, val, src, stride)
	}
}

// colsAdd is colsAddGo; with AVX-512 and c ≤ 128 (the models' C) one call
// takes all the columns, whose non-zeros are few (12 on average for image
// rows, see NewCols): a call each would cost a good share of their sums.
// With AVX2 only (AMD Zen 3), colsAddAVX2 does the same in 8-lane vectors.
func colsAdd(acc []float32, stride, c int, feat, end []int32, first int, row []int32, val []float32, g []float32, gs int) {
	if use == pathGo {
		colsAddGo(acc, stride, c, feat, end, first, row, val, g, gs)
		return
	}
	// The kernels' reads and writes, checked once here.
	_ = acc[int(feat[len(feat)-1])*stride+c-1]
	_ = row[end[len(end)-1]-1]
	_ = val[end[len(end)-1]-1]
	if use == pathAVX512 && c <= 16*len(ctiles) {
		v := (c + 15) / 16
		ctiles[v-1](&acc[0], stride*4, &feat[0], &end[0], len(feat), first, &row[0], &val[0], &g[0], gs*4, 1<<(c-16*(v-1))-1)
		return
	}
	colsAddAVX2(acc, stride, c, feat, end, first, row, val, g, gs)
}

// colsAddAVX2 is colsAdd in passes of up to 104 columns (13 vectors of 8,
// one pass at the models' C ≤ 104), the last vector's lanes masked. Before,
// colsAddGo with the AVX2 tiles (a call per column and tile: two at C =
// 100, five at C = 50) made 38.7 and 21.3 GFLOP/CPU-s on image rows; this
// makes 48.5 and 48.4, AVX-512's colsz 60.1 and 58.1 (Zen 4, make
// bench-sparse with and without -path=avx2). Each pass adds every
// element's terms in j order, so passes over column ranges give
// colsAddGo's bits. Reading G's last vector unmasked (its rows are padded
// in AddTo) measured the same.
func colsAddAVX2(acc []float32, stride, c int, feat, end []int32, first int, row []int32, val []float32, g []float32, gs int) {
	const widest = 8 * len(ytiles)
	for k := 0; k < c; k += widest {
		n := min(widest, c-k)
		v := (n + 7) / 8
		ytiles[v-1](&acc[k], stride*4, &feat[0], &end[0], len(feat), first, &row[0], &val[0], &g[k], gs*4, &tailMask[8*v-n])
	}
}

// tailMask[8-r:] selects the first r lanes of an 8-lane vector for
// VMASKMOVPS (the lanes whose int32 is negative).
var tailMask = [16]int32{-1, -1, -1, -1, -1, -1, -1, -1}

// ytiles[v-1] is colsAddAVX2's kernel of v vectors (kern_avx2_amd64.s).
var ytiles = [...]func(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask *int32){
	colsy1, colsy2, colsy3, colsy4, colsy5, colsy6, colsy7, colsy8, colsy9, colsy10, colsy11, colsy12, colsy13}

func rowAcc(acc []float32, idx []int32, val []float32, g []float32, stride int) {
	if use == pathGo || len(idx) == 0 {
		rowAccGo(acc, idx, val, g, stride)
		return
	}
	if c := len(g); use == pathAVX512 && c > 0 && c <= 16*len(atiles) {
		// G's row stays in registers over all of the row's non-zeros: row
		// by row, this is the faster backward for bags of words
		// (docs/notes/2026-11-27-bow-rows-gather-ceiling.md).
		v := (c + 15) / 16
		atiles[v-1](&acc[0], unsafe.SliceData(idx), unsafe.SliceData(val), len(idx), &g[0], stride*4, 1<<(c-16*(v-1))-1)
		return
	}
	// Up to 111 columns a pass (13 vectors and 7 more), one pass at the
	// models' C, where the AVX2 tiles before took two (C = 100: 96 + 4) to
	// five (C = 50: 32 + 8 + 8 + 1 + 1): bags of words' backward at C = 50
	// went from 15.8 to 26.4 GFLOP/CPU-s on Zen 4 limited to AVX2.
	const widest = 8*(len(rtiles)-1) + 7
	for k := 0; k < len(g); {
		n := min(widest, len(g)-k)
		rtiles[n/8](&acc[k], unsafe.SliceData(idx), unsafe.SliceData(val), len(idx), &g[k], stride*4, n%8)
		k += n
	}
}

// ctiles[v-1] is colsAdd's kernel of v vectors: for each column, its sums
// in registers over its non-zeros, as ztiles.
var ctiles = [...]func(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask int){
	colsz1, colsz2, colsz3, colsz4, colsz5, colsz6, colsz7, colsz8}

// atiles[v-1] is RowAcc's kernel of v vectors.
var atiles = [...]zkernel{accz1, accz2, accz3, accz4, accz5, accz6, accz7, accz8}

var ptiles = [...]func(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask int){
	colspz1, colspz2, colspz3, colspz4, colspz5, colspz6, colspz7, colspz8}

// colsMul adds, for each column feat[i] in turn, val[j]·(row feat[i] of w,
// ws floats apart) to row row[j] of p (ps floats apart, c used) for j from
// the previous column's end (first for i = 0) to end[i]. Without AVX-512
// (or past its 128 columns), p's rows must be padded to whole 8-float
// vectors: colsMulAVX2 writes the padding.
func colsMul(p []float32, ps, c int, feat, end []int32, first int, row []int32, val []float32, w []float32, ws int) {
	if use == pathGo {
		colsMulGo(p, ps, c, feat, end, first, row, val, w, ws)
		return
	}
	_ = w[int(feat[len(feat)-1])*ws+c-1]
	_ = row[end[len(end)-1]-1]
	_ = val[end[len(end)-1]-1]
	if use == pathAVX512 && c <= 16*len(ztiles) {
		v := (c + 15) / 16
		ptiles[v-1](&p[0], ps*4, &feat[0], &end[0], len(feat), first, &row[0], &val[0], &w[0], ws*4, 1<<(c-16*(v-1))-1)
		return
	}
	colsMulAVX2(p, ps, c, feat, end, first, row, val, w, ws)
}

// colsMulAVX2 is colsMul in passes of up to 104 columns, as colsAddAVX2:
// W's row in registers, P's rows read and written in whole vectors, so the
// lanes from c to the next multiple of 8 must be padding (Cols.MulTo's
// block has rows Stride(c) apart). Before, RowAcc's AVX2 tiles a column
// (96 + 4 columns, two calls; at C = 50 32 + 8 + 8 + 1 + 1, five) made
// 30.5 and 16.6 GFLOP/CPU-s on image rows; this 43.7 and 35.7, more than
// AVX-512's colspz (38.8, 33.2), which stores P's last vector masked (Zen
// 4, make bench-sparse).
func colsMulAVX2(p []float32, ps, c int, feat, end []int32, first int, row []int32, val []float32, w []float32, ws int) {
	if ps < (c+7)&^7 || len(p)%ps != 0 {
		panic("csrkern: colsMul: P's rows not padded to whole vectors")
	}
	const widest = 8 * len(pytiles)
	for k := 0; k < c; k += widest {
		n := min(widest, c-k)
		v := (n + 7) / 8
		pytiles[v-1](&p[k], ps*4, &feat[0], &end[0], len(feat), first, &row[0], &val[0], &w[k], ws*4, &tailMask[8*v-n])
	}
}

// rtiles[v] is rowAcc's AVX2 kernel of v vectors and up to 7 columns more
// (kern_avx2_amd64.s).
var rtiles = [...]func(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, r int){
	accy0, accy1, accy2, accy3, accy4, accy5, accy6, accy7, accy8, accy9, accy10, accy11, accy12, accy13}

// mtiles[v-1] is mulAdd's AVX2 kernel of v vectors (kern_avx2_amd64.s).
var mtiles = [...]func(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask *int32){
	muly1, muly2, muly3, muly4, muly5, muly6, muly7, muly8, muly9, muly10, muly11, muly12, muly13}

// pytiles[v-1] is colsMulAVX2's kernel of v vectors (kern_avx2_amd64.s).
var pytiles = [...]func(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask *int32){
	colspy1, colspy2, colspy3, colspy4, colspy5, colspy6, colspy7, colspy8, colspy9, colspy10, colspy11, colspy12, colspy13}

//go:noescape
func mulz1(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask int)

//go:noescape
func mulz2(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask int)

//go:noescape
func mulz3(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask int)

//go:noescape
func mulz4(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask int)

//go:noescape
func mulz5(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask int)

//go:noescape
func mulz6(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask int)

//go:noescape
func mulz7(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask int)

//go:noescape
func mulz8(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask int)

//go:noescape
func colsz1(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask int)

//go:noescape
func colsz2(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask int)

//go:noescape
func colsz3(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask int)

//go:noescape
func colsz4(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask int)

//go:noescape
func colsz5(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask int)

//go:noescape
func colsz6(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask int)

//go:noescape
func colsz7(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask int)

//go:noescape
func colsz8(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask int)

//go:noescape
func colspz1(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask int)

//go:noescape
func colspz2(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask int)

//go:noescape
func colspz3(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask int)

//go:noescape
func colspz4(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask int)

//go:noescape
func colspz5(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask int)

//go:noescape
func colspz6(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask int)

//go:noescape
func colspz7(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask int)

//go:noescape
func colspz8(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask int)

//go:noescape
func accz1(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, mask int)

//go:noescape
func accz2(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, mask int)

//go:noescape
func accz3(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, mask int)

//go:noescape
func accz4(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, mask int)

//go:noescape
func accz5(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, mask int)

//go:noescape
func accz6(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, mask int)

//go:noescape
func accz7(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, mask int)

//go:noescape
func accz8(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, mask int)

//go:noescape
func colsy1(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask *int32)

//go:noescape
func colsy2(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask *int32)

//go:noescape
func colsy3(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask *int32)

//go:noescape
func colsy4(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask *int32)

//go:noescape
func colsy5(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask *int32)

//go:noescape
func colsy6(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask *int32)

//go:noescape
func colsy7(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask *int32)

//go:noescape
func colsy8(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask *int32)

//go:noescape
func colsy9(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask *int32)

//go:noescape
func colsy10(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask *int32)

//go:noescape
func colsy11(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask *int32)

//go:noescape
func colsy12(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask *int32)

//go:noescape
func colsy13(acc *float32, asb int, feat, end *int32, nf, first int, row *int32, val *float32, gr *float32, gsb int, mask *int32)

//go:noescape
func colspy1(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask *int32)

//go:noescape
func colspy2(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask *int32)

//go:noescape
func colspy3(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask *int32)

//go:noescape
func colspy4(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask *int32)

//go:noescape
func colspy5(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask *int32)

//go:noescape
func colspy6(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask *int32)

//go:noescape
func colspy7(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask *int32)

//go:noescape
func colspy8(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask *int32)

//go:noescape
func colspy9(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask *int32)

//go:noescape
func colspy10(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask *int32)

//go:noescape
func colspy11(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask *int32)

//go:noescape
func colspy12(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask *int32)

//go:noescape
func colspy13(p *float32, psb int, feat, end *int32, nf, first int, row *int32, val *float32, w *float32, wsb int, mask *int32)

//go:noescape
func muly1(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask *int32)

//go:noescape
func muly2(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask *int32)

//go:noescape
func muly3(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask *int32)

//go:noescape
func muly4(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask *int32)

//go:noescape
func muly5(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask *int32)

//go:noescape
func muly6(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask *int32)

//go:noescape
func muly7(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask *int32)

//go:noescape
func muly8(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask *int32)

//go:noescape
func muly9(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask *int32)

//go:noescape
func muly10(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask *int32)

//go:noescape
func muly11(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask *int32)

//go:noescape
func muly12(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask *int32)

//go:noescape
func muly13(out *float32, idx *int32, val *float32, n int, src *float32, sb int, mask *int32)

//go:noescape
func accy0(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, r int)

//go:noescape
func accy1(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, r int)

//go:noescape
func accy2(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, r int)

//go:noescape
func accy3(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, r int)

//go:noescape
func accy4(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, r int)

//go:noescape
func accy5(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, r int)

//go:noescape
func accy6(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, r int)

//go:noescape
func accy7(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, r int)

//go:noescape
func accy8(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, r int)

//go:noescape
func accy9(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, r int)

//go:noescape
func accy10(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, r int)

//go:noescape
func accy11(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, r int)

//go:noescape
func accy12(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, r int)

//go:noescape
func accy13(acc *float32, idx *int32, val *float32, n int, gr *float32, sb int, r int)

package models

import (
	"unsafe"

	"monomer/internal/csrkern"
)

// dataMemory estimates the peak bytes Train holds for its data, beyond the
// parameters (which the caller counts from the settings: L-BFGS history
// and per-group gradient accumulators grow with F·C alone, F·Stride(C) for
// sparse rows): the pair sets' indexes, the objectives' per-pair buffers,
// and what each evaluator keeps of the pairs and rows. Rows are the
// non-zeros of lean and sparse rows, the layout the model reads them in
// (csrkern.Cols for float32 LMT and Monomer where their item groups go by
// columns, packed rows for WNN and float64 kernels; bags of words are
// read from the features row by row); dense rows stay in the
// features (a mapped file) and count nothing. vs is nil without validation
// pairs.
func dataMemory(m model, spec Spec, src rowSource, ts *pairSet, vsrc rowSource, vs *pairSet, shared *sharedRows) int64 {
	var need int64
	type set struct {
		src  rowSource
		ps   *pairSet
		grad bool
	}
	sets := []set{{src, ts, true}}
	if vs != nil {
		sets = append(sets, set{vsrc, vs, false})
	}
	word := int64(4)
	if spec.Float64 {
		word = 8
	}
	_, isWNN := m.(wnn)
	if shared != nil {
		need += shared.nnz*8 + int64(src.rows)*9 // packedRows: idx, val; off, packed
	}
	for _, s := range sets {
		pairs, items := int64(len(s.ps.x)), int64(len(s.ps.items))
		// pairSet: x, y, byX, byY, xEnd, yEnd, yPos, yOther, labels; items,
		// xOff, yOff. objective: ll, g, labelsX and pos.
		need += pairs*(8*4+1) + items*3*4 + pairs*(2*8+1+4)
		nnz := s.src.nnz
		if s.src.sparse != nil && !s.src.lean {
			nnz = sparseNNZ(s.src.sparse, s.ps.items)
		}
		if s.src.lean && shared == nil && rowByRow(m, spec) {
			need += nnz*8 + int64(s.src.rows)*9
		}
		if isWNN {
			need += wnnMemory(s.src, s.ps, s.grad)
			continue
		}
		c, itemLen, stateLen := projLens(m)
		need += items*int64(c+itemLen)*word + pairs*int64(stateLen+1)*word
		if s.grad {
			need += items * int64(c) * word // G
		}
		if !spec.Float64 && (s.src.lean || s.src.sparse != nil) {
			for _, g := range itemGroups(int(items)) {
				share := float64(g.hi-g.lo) / float64(items)
				gnnz := int64(share * float64(nnz))
				if groupByColumns(s.src, g.hi-g.lo, c, gnnz) {
					need += csrkern.ColsBytes(g.hi-g.lo, s.src.dim, c, gnnz)
				}
			}
		}
	}
	return need
}

// sparseNNZ counts the non-zeros of the sparse rows of items.
func sparseNNZ(sp Sparse, items []int32) int64 {
	var n int64
	for _, it := range items {
		idx, _ := sp.SparseRow(int(it))
		n += int64(len(idx))
	}
	return n
}

// wnnMemory is what a WNN evaluator on lean or sparse rows keeps beyond
// the rows: per item and per pair sums, and the pair products, counted on
// every 64th pair (WNN's products cost 6 bytes, 8 with 32-bit columns,
// and a pair's offset 8). Dense rows keep nothing that grows.
func wnnMemory(src rowSource, ps *pairSet, grad bool) int64 {
	if src.sparse == nil && !src.lean {
		return 0
	}
	pairs, items := int64(len(ps.x)), int64(len(ps.items))
	need := items*8 + pairs*8 + pairs*8 // sq, dg64, products' offsets
	if grad {
		chunks := (pairs + wnnChunk - 1) / wnnChunk
		need += (chunks + int64(len(itemGroups(int(items))))) * int64(src.dim) * 8
	}
	per := int64(unsafe.Sizeof(uint16(0)) + unsafe.Sizeof(float32(0)))
	if src.dim > col16Limit {
		per = int64(unsafe.Sizeof(int32(0)) + unsafe.Sizeof(float32(0)))
	}
	return need + per*sampledProducts(src, ps, 64)
}

// sampledProducts estimates the pairs' products (columns non-zero in both
// rows) from every step-th pair in x order.
func sampledProducts(src rowSource, ps *pairSet, step int) int64 {
	n := len(ps.x)
	if n == 0 {
		return 0
	}
	var bx, by []int32
	var vx, vy []float32
	if src.sparse == nil {
		bx, by = make([]int32, src.dim), make([]int32, src.dim)
		vx, vy = make([]float32, src.dim), make([]float32, src.dim)
	}
	var count, sampled int64
	for k := 0; k < n; k += step {
		ix, _ := src.nonZeroRow(int(ps.items[ps.xEnd[k]]), bx, vx)
		iy, _ := src.nonZeroRow(int(ps.items[ps.yEnd[k]]), by, vy)
		for i, j := 0, 0; i < len(ix) && j < len(iy); {
			switch {
			case ix[i] < iy[j]:
				i++
			case ix[i] > iy[j]:
				j++
			default:
				count++
				i++
				j++
			}
		}
		sampled++
	}
	return count * int64(n) / sampled
}

// projLens is a projection model's columns of P and its kernel's per item
// and per pair state (lmtKernel, monomerKernel).
func projLens(m model) (c, itemLen, stateLen int) {
	switch m := m.(type) {
	case lmt:
		return m.k, 0, 0
	case monomer:
		return m.cols(), m.n, 2*m.n + 1
	}
	return 0, 0, 0
}

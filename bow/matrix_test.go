package bow

import (
	"reflect"
	"runtime"
	"testing"
)

// TestMatrixJoinsChunks: the rows of several chunks (items without
// reviews, without a vocabulary hit, with hits) land in item order with
// sum-to-one values and the item counts, the same at any GOMAXPROCS as
// the rows joined one after another.
func TestMatrixJoinsChunks(t *testing.T) {
	const nItems = 37
	g := itemDocs{start: make([]int64, nItems+1)}
	var outs []chunkOut
	type row struct {
		idx, cnt []int32
	}
	var want []row
	wantSt := Stats{Items: nItems}
	for it := range nItems {
		var r row
		reviews := int64(0)
		switch it % 4 {
		case 0: // no review
			wantSt.ItemsNoReviews++
		case 1: // a review without a vocabulary term
			reviews = 1
			wantSt.ItemsNoVocabHit++
		default: // two terms, 1-3 and 2 hits
			reviews = int64(1 + it%2)
			r.idx, r.cnt = []int32{int32(it % 4), int32(4 + it%5)}, []int32{int32(1 + it%3), 2}
			wantSt.ItemsKept++
			wantSt.Hits += int64(3 + it%3)
		}
		g.start[it+1] = g.start[it] + reviews
		if it%5 == 0 {
			outs = append(outs, chunkOut{}) // chunks of 5 items
		}
		o := &outs[len(outs)-1]
		o.rowLen = append(o.rowLen, int32(len(r.idx)))
		o.idx, o.cnt = append(o.idx, r.idx...), append(o.cnt, r.cnt...)
		want = append(want, r)
	}
	outs = append(outs, chunkOut{}) // an empty chunk at the end
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first *Matrix
	for _, p := range []int{1, 2, 3, 7, 16} {
		runtime.GOMAXPROCS(p)
		m, st := g.matrix(outs, 9)
		if st != wantSt {
			t.Fatalf("GOMAXPROCS %d: stats %+v, want %+v", p, st, wantSt)
		}
		if m.Rows() != nItems || m.Dim() != 9 {
			t.Fatalf("GOMAXPROCS %d: %d × %d", p, m.Rows(), m.Dim())
		}
		for it, r := range want {
			idx, val := m.SparseRow(it)
			if !reflect.DeepEqual(idx, r.idx) && len(idx)+len(r.idx) > 0 {
				t.Fatalf("GOMAXPROCS %d: row %d terms %v, want %v", p, it, idx, r.idx)
			}
			var total int64
			for _, c := range r.cnt {
				total += int64(c)
			}
			for j, v := range val {
				if want := float32(float64(r.cnt[j]) / float64(total)); v != want {
					t.Fatalf("GOMAXPROCS %d: row %d value %d = %v, want %v", p, it, j, v, want)
				}
			}
		}
		if first == nil {
			first = m
		} else if !reflect.DeepEqual(m, first) {
			t.Fatalf("GOMAXPROCS %d: the matrix differs from GOMAXPROCS 1's", p)
		}
	}
}

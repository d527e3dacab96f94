package bow

import (
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
)

// TestMatrixJoinsChunks: the rows of several chunks (items without
// reviews, without a vocabulary hit, with hits) land in item order with
// sum-to-one values and the item counts, the same at any GOMAXPROCS as
// the rows joined one after another.
func TestMatrixJoinsChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const nItems = 37
	g := itemDocs{start: make([]int64, nItems+1)}
	var outs []chunkOut
	type row struct {
		idx, cnt []int32
	}
	var want []row
	for it := range nItems {
		reviews := int64(rng.IntN(3))
		g.start[it+1] = g.start[it] + reviews
		if it%5 == 0 {
			outs = append(outs, chunkOut{}) // chunks of 5 items
		}
		o := &outs[len(outs)-1]
		var r row
		if reviews > 0 && it%7 != 3 { // some reviewed items hit no term
			for tm := int32(0); tm < 9; tm++ {
				if rng.IntN(3) == 0 {
					r.idx, r.cnt = append(r.idx, tm), append(r.cnt, int32(1+rng.IntN(4)))
				}
			}
		}
		o.rowLen = append(o.rowLen, int32(len(r.idx)))
		o.idx, o.cnt = append(o.idx, r.idx...), append(o.cnt, r.cnt...)
		want = append(want, r)
	}
	outs = append(outs, chunkOut{}) // an empty chunk at the end
	var wantSt Stats
	wantSt.Items = nItems
	for it, r := range want {
		var total int64
		for _, c := range r.cnt {
			total += int64(c)
		}
		switch {
		case g.start[it] == g.start[it+1]:
			wantSt.ItemsNoReviews++
		case total == 0:
			wantSt.ItemsNoVocabHit++
		default:
			wantSt.ItemsKept++
		}
		wantSt.Hits += total
	}
	if wantSt.ItemsNoReviews == 0 || wantSt.ItemsNoVocabHit == 0 || wantSt.ItemsKept == 0 {
		t.Fatalf("the rows miss a kind: %+v", wantSt)
	}
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
			var sum float64
			for j, v := range val {
				sum += float64(v)
				if v <= 0 || float64(v) > float64(r.cnt[j]) {
					t.Fatalf("GOMAXPROCS %d: row %d value %v of count %d", p, it, v, r.cnt[j])
				}
			}
			if len(val) > 0 && (sum < 0.999 || sum > 1.001) {
				t.Fatalf("GOMAXPROCS %d: row %d sums to %v", p, it, sum)
			}
		}
		if first == nil {
			first = m
		} else if !reflect.DeepEqual(m, first) {
			t.Fatalf("GOMAXPROCS %d: the matrix differs from GOMAXPROCS 1's", p)
		}
	}
}

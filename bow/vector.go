package bow

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Matrix is the item-by-term matrix in compressed sparse rows: row i is
// item i's vector, column j is term j. Rows of dropped items are empty. It
// satisfies models.Sparse.
type Matrix struct {
	rows, dim int
	ptr       []int64 // row i is [ptr[i], ptr[i+1])
	idx       []int32 // term ids, ascending within a row
	val       []float32
	cnt       []int32
}

func (m *Matrix) Rows() int { return m.rows }
func (m *Matrix) Dim() int  { return m.dim }

// NNZ is the number of stored entries.
func (m *Matrix) NNZ() int { return len(m.idx) }

// SparseRow returns row i's term ids (ascending) and weights (raw counts
// normalised to sum to 1, paper section V-D step 3). The slices are
// read-only views.
func (m *Matrix) SparseRow(i int) (idx []int32, val []float32) {
	lo, hi := m.ptr[i], m.ptr[i+1]
	return m.idx[lo:hi:hi], m.val[lo:hi:hi]
}

// Counts returns row i's term ids and raw counts (LDA's input).
func (m *Matrix) Counts(i int) (idx []int32, cnt []int32) {
	lo, hi := m.ptr[i], m.ptr[i+1]
	return m.idx[lo:hi:hi], m.cnt[lo:hi:hi]
}

// itemsPerChunk is the unit of parallel vectorising; the result does not
// depend on it.
const itemsPerChunk = 1024

type chunkOut struct {
	rowLen []int32
	idx    []int32
	cnt    []int32
}

// surfaces count the surface forms of hits, per worker: unigram hits by
// word id (the word determines the term), bigram hits by word-id pair.
type surfaces struct {
	uni  []int64
	pair map[uint64]int64
}

// vectorize counts the vocabulary terms of every review per item; its
// workers look at ctx once per chunk of items.
func (c *corpus) vectorize(ctx context.Context, vocab []Term, nItems int, opts Options) (*Result, error) {
	lex := c.lex
	termOfStem := make([]int32, len(lex.stems))
	for i := range termOfStem {
		termOfStem[i] = -1
	}
	pairTerm := map[uint64]int32{}
	seen := map[string]bool{}
	for id, t := range vocab {
		if seen[t.Term] {
			return nil, fmt.Errorf("bow: vocabulary term %d %q appears twice", id, t.Term)
		}
		seen[t.Term] = true
		if a, b, ok := strings.Cut(t.Term, " "); ok {
			sa, okA := lex.stemIDs[a]
			sb, okB := lex.stemIDs[b]
			if okA && okB {
				pairTerm[uint64(sa)<<32|uint64(sb)] = int32(id)
			}
		} else if s, ok := lex.stemIDs[t.Term]; ok {
			termOfStem[s] = int32(id)
		}
	}

	// Reviews grouped by item (counting sort keeps input order per item).
	start := make([]int64, nItems+1)
	for d := range c.nDocs() {
		start[c.item(d)+1]++
	}
	for i := range nItems {
		start[i+1] += start[i]
	}
	order := make([]int64, c.nDocs())
	fill := slices.Clone(start[:nItems])
	for d := range c.nDocs() {
		it := c.item(d)
		order[fill[it]] = int64(d)
		fill[it]++
	}

	nChunks := (nItems + itemsPerChunk - 1) / itemsPerChunk
	outs := make([]chunkOut, nChunks)
	jobs := make(chan int, nChunks)
	for k := range nChunks {
		jobs <- k
	}
	close(jobs)
	nw := min(opts.workers(), max(nChunks, 1))
	surfs := make([]surfaces, nw)
	var wg sync.WaitGroup
	for w := range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sf := surfaces{uni: make([]int64, len(lex.words)), pair: map[uint64]int64{}}
			scratch := make([]int32, len(vocab))
			var touched []int32
			hit := func(t int32) {
				if scratch[t] == 0 {
					touched = append(touched, t)
				}
				scratch[t]++
			}
			for k := range jobs {
				if ctx.Err() != nil {
					continue // drain; reported after Wait
				}
				var o chunkOut
				lo, hi := k*itemsPerChunk, min((k+1)*itemsPerChunk, nItems)
				for it := lo; it < hi; it++ {
					touched = touched[:0]
					for _, d := range order[start[it]:start[it+1]] {
						es := c.doc(int(d))
						for j, e := range es {
							w := e >> entryShift
							s := lex.stemOf[w]
							if t := termOfStem[s]; t >= 0 {
								hit(t)
								sf.uni[w]++
							}
							if e&entryPair != 0 {
								w2 := es[j+1] >> entryShift
								if t, ok := pairTerm[uint64(s)<<32|uint64(lex.stemOf[w2])]; ok {
									hit(t)
									sf.pair[uint64(w)<<32|uint64(w2)]++
								}
							}
						}
					}
					slices.Sort(touched)
					o.rowLen = append(o.rowLen, int32(len(touched)))
					for _, t := range touched {
						o.idx = append(o.idx, t)
						o.cnt = append(o.cnt, scratch[t])
						scratch[t] = 0
					}
				}
				outs[k] = o
			}
			surfs[w] = sf
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	m := &Matrix{rows: nItems, dim: len(vocab), ptr: make([]int64, nItems+1)}
	st := Stats{Docs: c.docs, Tokens: c.tokens, Items: nItems, Work: c.work}
	row := 0
	for _, o := range outs {
		p := 0
		for _, n := range o.rowLen {
			idx, cnt := o.idx[p:p+int(n)], o.cnt[p:p+int(n)]
			p += int(n)
			var total int64
			for _, x := range cnt {
				total += int64(x)
			}
			switch {
			case start[row] == start[row+1]:
				st.ItemsNoReviews++
			case total == 0:
				st.ItemsNoVocabHit++
			default:
				st.ItemsKept++
			}
			st.Hits += total
			m.idx = append(m.idx, idx...)
			m.cnt = append(m.cnt, cnt...)
			for _, x := range cnt {
				m.val = append(m.val, float32(float64(x)/float64(total)))
			}
			row++
			m.ptr[row] = int64(len(m.idx))
		}
	}

	out := slices.Clone(vocab)
	for i := range out {
		out[i].DocFreq, out[i].Surface = 0, ""
	}
	for _, t := range m.idx {
		out[t].DocFreq++
	}
	// Surface forms: sums over workers (order-free), then the most frequent
	// per term, ties by string.
	best := make([]int64, len(out))
	offer := func(t int32, n int64, s string) {
		if n > best[t] || n == best[t] && s < out[t].Surface {
			best[t], out[t].Surface = n, s
		}
	}
	pairs := map[uint64]int64{}
	for _, sf := range surfs[1:] {
		for w, n := range sf.uni {
			surfs[0].uni[w] += n
		}
	}
	for _, sf := range surfs {
		for k, n := range sf.pair {
			pairs[k] += n
		}
	}
	for w, n := range surfs[0].uni {
		if n > 0 {
			offer(termOfStem[lex.stemOf[w]], n, lex.words[w])
		}
	}
	for k, n := range pairs {
		a, b := k>>32, uint32(k)
		offer(pairTerm[uint64(lex.stemOf[a])<<32|uint64(lex.stemOf[b])], n, lex.words[a]+" "+lex.words[b])
	}
	return &Result{Vocab: out, Matrix: m, Stats: st}, nil
}

// Shared is the share of words items a and b have in common: the histogram
// intersection Σ_t min(v_a(t), v_b(t)) of their sum-to-one rows, from 0
// (no term in common) to 1 (the same word distribution); 0 if either row
// is empty. It is the measure of issue 28 for how much the text of related
// items overlaps, computed the same way on generated and on real reviews.
func (m *Matrix) Shared(a, b int) float64 {
	ia, va := m.SparseRow(a)
	ib, vb := m.SparseRow(b)
	s := 0.0
	for i, j := 0, 0; i < len(ia) && j < len(ib); {
		switch {
		case ia[i] < ib[j]:
			i++
		case ia[i] > ib[j]:
			j++
		default:
			s += float64(min(va[i], vb[j]))
			i++
			j++
		}
	}
	return s
}

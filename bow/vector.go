package bow

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"monomer/internal/par"
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
// workers look at ctx once per chunk of items. The steps: index the
// vocabulary by stems, group the reviews by item, count each chunk of
// items in parallel, then join the chunks in order into the matrix and
// pick each term's surface form.
func (c *corpus) vectorize(ctx context.Context, vocab []Term, nItems int, opts Options) (*Result, error) {
	ti, err := newTermIndex(c.lex, vocab)
	if err != nil {
		return nil, err
	}
	g := c.byItem(nItems)
	outs, surfs := c.countChunks(ctx, ti, g, len(vocab), opts.workers())
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, st := g.matrix(outs, len(vocab))
	st.Docs, st.Tokens, st.Work = c.docs, c.tokens, c.work
	return &Result{Vocab: ti.surfaceForms(c.lex, vocab, m, surfs), Matrix: m, Stats: st}, nil
}

// termIndex finds a vocabulary term from the lexicon's stems.
type termIndex struct {
	ofStem []int32          // a unigram term's id by its stem; -1: none
	pair   map[uint64]int32 // a bigram term's id by its stems (a<<32 | b)
}

// newTermIndex indexes vocab, refusing a term listed twice.
func newTermIndex(lex *lexicon, vocab []Term) (termIndex, error) {
	ti := termIndex{ofStem: make([]int32, len(lex.stems)), pair: map[uint64]int32{}}
	for i := range ti.ofStem {
		ti.ofStem[i] = -1
	}
	seen := map[string]bool{}
	for id, t := range vocab {
		if seen[t.Term] {
			return ti, fmt.Errorf("bow: vocabulary term %d %q appears twice", id, t.Term)
		}
		seen[t.Term] = true
		if a, b, ok := strings.Cut(t.Term, " "); ok {
			sa, okA := lex.stemIDs[a]
			sb, okB := lex.stemIDs[b]
			if okA && okB {
				ti.pair[uint64(sa)<<32|uint64(sb)] = int32(id)
			}
		} else if s, ok := lex.stemIDs[t.Term]; ok {
			ti.ofStem[s] = int32(id)
		}
	}
	return ti, nil
}

// itemDocs are the reviews grouped by item: item i's are order[start[i]:
// start[i+1]], in input order.
type itemDocs struct {
	start, order []int64
}

// byItem groups the reviews by item with a counting sort, which keeps
// their input order per item.
func (c *corpus) byItem(nItems int) itemDocs {
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
	return itemDocs{start, order}
}

// countChunks counts the terms of every item, itemsPerChunk items a job
// over workers goroutines, and returns each chunk's rows in chunk order
// and each worker's surface-form counts. Once ctx is cancelled the
// workers drain the jobs; the caller checks ctx.
func (c *corpus) countChunks(ctx context.Context, ti termIndex, g itemDocs, nTerms, workers int) ([]chunkOut, []surfaces) {
	nItems := len(g.start) - 1
	nChunks := (nItems + itemsPerChunk - 1) / itemsPerChunk
	outs := make([]chunkOut, nChunks)
	jobs := make(chan int, nChunks)
	for k := range nChunks {
		jobs <- k
	}
	close(jobs)
	nw := min(workers, max(nChunks, 1))
	surfs := make([]surfaces, nw)
	var wg sync.WaitGroup
	for w := range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cc := c.newChunkCounter(ti, nTerms)
			for k := range jobs {
				if ctx.Err() != nil {
					continue // drain; reported after Wait
				}
				outs[k] = cc.count(g, k*itemsPerChunk, min((k+1)*itemsPerChunk, nItems))
			}
			surfs[w] = cc.sf
		}()
	}
	wg.Wait()
	return outs, surfs
}

// A chunkCounter is one worker's state: a count per term, the terms
// touched by the current item, and the surface forms of its hits.
type chunkCounter struct {
	c       *corpus
	ti      termIndex
	scratch []int32
	touched []int32
	sf      surfaces
}

func (c *corpus) newChunkCounter(ti termIndex, nTerms int) *chunkCounter {
	return &chunkCounter{c: c, ti: ti, scratch: make([]int32, nTerms),
		sf: surfaces{uni: make([]int64, len(c.lex.words)), pair: map[uint64]int64{}}}
}

func (cc *chunkCounter) hit(t int32) {
	if cc.scratch[t] == 0 {
		cc.touched = append(cc.touched, t)
	}
	cc.scratch[t]++
}

// count counts items lo to hi: each one's term ids in ascending order with
// their counts.
func (cc *chunkCounter) count(g itemDocs, lo, hi int) chunkOut {
	var o chunkOut
	for it := lo; it < hi; it++ {
		cc.touched = cc.touched[:0]
		for _, d := range g.order[g.start[it]:g.start[it+1]] {
			cc.countDoc(cc.c.doc(int(d)))
		}
		slices.Sort(cc.touched)
		o.rowLen = append(o.rowLen, int32(len(cc.touched)))
		for _, t := range cc.touched {
			o.idx = append(o.idx, t)
			o.cnt = append(o.cnt, cc.scratch[t])
			cc.scratch[t] = 0
		}
	}
	return o
}

// countDoc counts one review's unigram and bigram hits.
func (cc *chunkCounter) countDoc(es []uint32) {
	lex := cc.c.lex
	for j, e := range es {
		w := e >> entryShift
		s := lex.stemOf[w]
		if t := cc.ti.ofStem[s]; t >= 0 {
			cc.hit(t)
			cc.sf.uni[w]++
		}
		if e&entryPair != 0 {
			w2 := es[j+1] >> entryShift
			if t, ok := cc.ti.pair[uint64(s)<<32|uint64(lex.stemOf[w2])]; ok {
				cc.hit(t)
				cc.sf.pair[uint64(w)<<32|uint64(w2)]++
			}
		}
	}
}

// matrix joins the chunks' rows in item order into the matrix of
// sum-to-one rows, with the item counts of Stats. Each chunk's rows go to
// their place in exact arrays on all cores (the serial join was 1.8 s at
// Electronics' size); a row's values depend on the row alone, and the
// chunks' counts are integers added in chunk order.
func (g itemDocs) matrix(outs []chunkOut, nTerms int) (*Matrix, Stats) {
	nItems := len(g.start) - 1
	rowAt, nnzAt := make([]int, len(outs)+1), make([]int64, len(outs)+1)
	for k, o := range outs {
		rowAt[k+1], nnzAt[k+1] = rowAt[k]+len(o.rowLen), nnzAt[k]+int64(len(o.idx))
	}
	nnz := nnzAt[len(outs)]
	m := &Matrix{rows: nItems, dim: nTerms, ptr: make([]int64, nItems+1),
		idx: make([]int32, nnz), cnt: make([]int32, nnz), val: make([]float32, nnz)}
	stats := make([]Stats, len(outs))
	par.For(len(outs), 0, func(_, k int) {
		o, st := outs[k], &stats[k]
		row, at := rowAt[k], nnzAt[k]
		copy(m.idx[at:], o.idx)
		copy(m.cnt[at:], o.cnt)
		p := 0
		for _, n := range o.rowLen {
			cnt := o.cnt[p : p+int(n)]
			var total int64
			for _, x := range cnt {
				total += int64(x)
			}
			switch {
			case g.start[row] == g.start[row+1]:
				st.ItemsNoReviews++
			case total == 0:
				st.ItemsNoVocabHit++
			default:
				st.ItemsKept++
			}
			st.Hits += total
			for j, x := range cnt {
				m.val[at+int64(p+j)] = float32(float64(x) / float64(total))
			}
			p += int(n)
			row++
			m.ptr[row] = at + int64(p)
		}
	})
	st := Stats{Items: nItems}
	for _, s := range stats {
		st.ItemsNoReviews += s.ItemsNoReviews
		st.ItemsNoVocabHit += s.ItemsNoVocabHit
		st.ItemsKept += s.ItemsKept
		st.Hits += s.Hits
	}
	return m, st
}

// surfaceForms returns vocab with each term's document frequency in m and
// its surface form: the workers' counts summed (order-free), then the most
// frequent form per term, ties by string.
func (ti termIndex) surfaceForms(lex *lexicon, vocab []Term, m *Matrix, surfs []surfaces) []Term {
	out := slices.Clone(vocab)
	for i := range out {
		out[i].DocFreq, out[i].Surface = 0, ""
	}
	for _, t := range m.idx {
		out[t].DocFreq++
	}
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
			offer(ti.ofStem[lex.stemOf[w]], n, lex.words[w])
		}
	}
	for k, n := range pairs {
		a, b := k>>32, uint32(k)
		offer(ti.pair[uint64(lex.stemOf[a])<<32|uint64(lex.stemOf[b])], n, lex.words[a]+" "+lex.words[b])
	}
	return out
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

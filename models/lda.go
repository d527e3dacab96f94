package models

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mathext"
)

// LDA is latent Dirichlet allocation fitted by online variational Bayes
// (Hoffman, Blei and Bach, "Online Learning for Latent Dirichlet Allocation",
// NIPS 2010) the way gensim's LdaModel does it, with gensim's defaults: the
// paper's LDA+WNN baseline (Sec. IV, "Learning Compatibility from Textual
// Features": 100 topics, gensim, "default parameters kept") runs WNN on the
// topic proportions this model gives each item.
//
// Differences from gensim, all deliberate: arithmetic is float64 (gensim's
// default dtype is float32); the random initial gamma of each document comes
// from a stream keyed by (seed, pass, row index) rather than from one shared
// generator, so the E-step can run in parallel and still give the same bits
// whatever the worker count; rows with no words are skipped in training
// (gensim counts them in the corpus size); updates happen after every chunk
// (gensim's update_every=1, its default and the only mode here); alpha and eta
// are fixed symmetric priors (no "auto").
type LDA struct {
	k, v           int
	alpha, eta     float64
	iterations     int
	gammaThreshold float64
	minProb        float64
	workers        int
	seed           uint64 // inference streams of Transform and LogPerplexity
	// unitGamma starts every document's gamma at 1, the mean of the usual
	// Gamma(100, 1/100) draw. Only the test against gensim sets it: from
	// random starts two implementations drift apart too fast to compare.
	unitGamma bool

	// Both word-major (v rows of k): the E-step reads one word's k topic
	// weights contiguously.
	sstats      []float64 // lambda - eta
	expElogbeta []float64 // exp(E[log beta]) under q(beta | lambda)
}

// CountRows gives documents as term counts: row i lists the term ids
// (0 <= id < Dim) occurring in document i and their counts. Ids need not be
// sorted but should not repeat. Rows with no positive count are empty.
// The bow package's count matrix implements it.
type CountRows interface {
	Rows() int
	Dim() int
	Counts(i int) (idx []int32, cnt []int32)
}

// LDAMinUpdates is the pipeline's least number of LDA M-steps. gensim's
// defaults (chunks of 2000 documents, one pass) make a corpus under 2000
// documents a single M-step with rho = 1 from random topics: barely trained.
// The paper's corpora are large enough that one pass is many updates; on a
// small corpus the pipeline takes passes until it has made 20.
const LDAMinUpdates = 20

// LDAPasses is the number of passes over a corpus of the given number of
// chunks that makes at least minUpdates M-steps: max(1, ⌈minUpdates/chunks⌉).
func LDAPasses(chunks, minUpdates int) int {
	if chunks <= 0 {
		return 1
	}
	return max(1, (minUpdates+chunks-1)/chunks)
}

// ErrLDAInput is wrapped by the errors FitLDA returns for invalid options or
// count rows.
var ErrLDAInput = errors.New("models: lda: invalid input")

// LDAOptions configures FitLDA. The zero value is gensim's LdaModel defaults.
type LDAOptions struct {
	// Topics is the number of topics. 0 means 100 (gensim num_topics).
	Topics int
	// ChunkSize is the number of documents per mini-batch, i.e. per M-step.
	// 0 means 2000 (gensim chunksize). It is capped at the number of
	// documents.
	ChunkSize int
	// Passes over the corpus. 0 means 1 (gensim passes), or with
	// MinUpdates set, LDAPasses(chunks, MinUpdates).
	Passes int
	// MinUpdates, when positive and Passes is 0, sets Passes so that the fit
	// makes at least this many M-steps (see LDAPasses). 0: gensim's one pass.
	MinUpdates int
	// Iterations caps the per-document E-step loop. 0 means 50.
	Iterations int
	// Alpha is the symmetric document-topic Dirichlet prior. 0 means 1/Topics.
	Alpha float64
	// Eta is the symmetric topic-word Dirichlet prior. 0 means 1/Topics.
	Eta float64
	// Decay is kappa in rho_t = (Offset + t)^(-Decay). 0 means 0.5. Must be
	// in (0, 1].
	Decay float64
	// Offset is tau_0 in rho_t. 0 means 1.0.
	Offset float64
	// GammaThreshold stops a document's E-step once the mean absolute change
	// of its gamma falls below it. 0 means 0.001.
	GammaThreshold float64
	// MinimumProbability: Transform sets topic proportions below it to 0
	// (without renormalising), as gensim's get_document_topics drops them.
	// 0 means 0.01 (gensim's default); negative keeps every proportion.
	// Positive values below 1e-8 are raised to 1e-8, as gensim does.
	MinimumProbability float64
	// EvalEvery: the per-word bound is estimated on every EvalEvery-th chunk
	// and on the last chunk of each pass, before that chunk's update, as
	// gensim's eval_every does. 0 means 10; negative never (then
	// LDAStats.PerWordBound is NaN).
	EvalEvery int
	// Workers is the number of goroutines of the E-step, the M-step and
	// Transform. 0 means runtime.GOMAXPROCS(0). Results do not depend on it.
	Workers int
}

func (o LDAOptions) resolve() (LDAOptions, error) {
	bad := func(field string, v any) (LDAOptions, error) {
		return o, fmt.Errorf("models: lda: option %s = %v out of range: %w", field, v, ErrLDAInput)
	}
	switch {
	case o.Topics < 0:
		return bad("Topics", o.Topics)
	case o.ChunkSize < 0:
		return bad("ChunkSize", o.ChunkSize)
	case o.Passes < 0:
		return bad("Passes", o.Passes)
	case o.MinUpdates < 0:
		return bad("MinUpdates", o.MinUpdates)
	case o.Iterations < 0:
		return bad("Iterations", o.Iterations)
	case o.Alpha < 0 || math.IsNaN(o.Alpha) || math.IsInf(o.Alpha, 0):
		return bad("Alpha", o.Alpha)
	case o.Eta < 0 || math.IsNaN(o.Eta) || math.IsInf(o.Eta, 0):
		return bad("Eta", o.Eta)
	case o.Decay < 0 || o.Decay > 1 || math.IsNaN(o.Decay):
		return bad("Decay", o.Decay)
	case o.Offset < 0 || math.IsNaN(o.Offset) || math.IsInf(o.Offset, 0):
		return bad("Offset", o.Offset)
	case o.GammaThreshold < 0 || math.IsNaN(o.GammaThreshold):
		return bad("GammaThreshold", o.GammaThreshold)
	case math.IsNaN(o.MinimumProbability) || o.MinimumProbability > 1:
		return bad("MinimumProbability", o.MinimumProbability)
	case o.Workers < 0:
		return bad("Workers", o.Workers)
	}
	if o.Topics == 0 {
		o.Topics = DefaultTopics
	}
	if o.ChunkSize == 0 {
		o.ChunkSize = 2000
	}
	if o.Passes == 0 && o.MinUpdates == 0 {
		o.Passes = 1
	}
	if o.Iterations == 0 {
		o.Iterations = 50
	}
	if o.Alpha == 0 {
		o.Alpha = 1 / float64(o.Topics)
	}
	if o.Eta == 0 {
		o.Eta = 1 / float64(o.Topics)
	}
	if o.Decay == 0 {
		o.Decay = 0.5
	}
	if o.Offset == 0 {
		o.Offset = 1
	}
	if o.GammaThreshold == 0 {
		o.GammaThreshold = 0.001
	}
	switch {
	case o.MinimumProbability == 0:
		o.MinimumProbability = 0.01
	case o.MinimumProbability < 0:
		o.MinimumProbability = 0
	case o.MinimumProbability < 1e-8:
		o.MinimumProbability = 1e-8
	}
	if o.EvalEvery == 0 {
		o.EvalEvery = 10
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o, nil
}

// LDAStats reports a fit.
type LDAStats struct {
	Documents int   // non-empty rows trained on
	Skipped   int   // empty rows (no positive count), not trained on
	Words     int64 // total count over the trained rows
	Chunks    int   // mini-batches per pass
	Passes    int   // passes over the corpus
	Updates   int   // M-steps over all passes
	FinalRho  float64

	// Inferences is the number of per-document E-steps (Documents x
	// Passes); Iterations sums their gamma iterations and Converged counts
	// those that met GammaThreshold before the Iterations cap (gensim logs
	// the latter as "documents converged").
	Inferences, Iterations, Converged int64

	// PerWordBound is the last evaluation's per-word variational bound (see
	// LDAEval); NaN when EvalEvery is negative.
	PerWordBound float64
	Evaluations  []LDAEval
}

// Perplexity is gensim's logged "perplexity estimate", 2^(-PerWordBound).
// gensim's bound is in nats, so this is not exp(-bound); it is kept for
// comparison with gensim logs.
func (s LDAStats) Perplexity() float64 { return math.Exp2(-s.PerWordBound) }

// LDAEval is one estimate of the per-word bound during training, as gensim's
// log_perplexity(chunk, total_docs): the evidence lower bound (in nats) of
// the chunk under the current model, with the document terms scaled by
// Documents/ChunkDocs to stand for the whole corpus, divided by the scaled
// word count. It is negative; higher (closer to 0) is better. The chunk has
// not yet been used for an update, so it is a held-out estimate.
type LDAEval struct {
	Pass, Chunk  int // 0-based
	ChunkDocs    int
	ChunkWords   int64
	PerWordBound float64
}

// TopicMatrix holds per-row topic proportions (float32, rows x topics). It
// implements Dense so WNN trains on it.
type TopicMatrix struct {
	rows, dim int
	data      []float32
}

var _ Dense = (*TopicMatrix)(nil)

func (t *TopicMatrix) Rows() int           { return t.rows }
func (t *TopicMatrix) Dim() int            { return t.dim }
func (t *TopicMatrix) Row(i int) []float32 { return t.data[i*t.dim : (i+1)*t.dim : (i+1)*t.dim] }

// Stream purposes: each keys its own family of per-row generators.
const (
	ldaStreamFit = iota + 1
	ldaStreamEval
	ldaStreamInfer
)

// ldaEps is added to phinorm against 0/0; gensim's value for float64.
const ldaEps = 1e-100

// FitLDA fits LDA on docs with online variational Bayes. rng seeds the
// initial topics (lambda ~ Gamma(100, 1/100) per entry, as gensim) and the
// per-document generators; the same docs, options and rng state give the
// same model and stats bit for bit, whatever Workers or GOMAXPROCS.
//
// Each pass walks the non-empty rows in order in chunks of ChunkSize; after
// each chunk's E-step, lambda is blended (Hoffman et al. Algorithm 2,
// gensim's LdaState.blend):
//
//	lambda = eta + (1-rho) sstats + rho (D/|chunk|) sstats_chunk
//	rho    = (Offset + pass + updatedDocs/ChunkSize)^(-Decay)
//
// where updatedDocs counts the documents of the first pass's updates so far
// (gensim does not advance it on later passes).
//
// Once ctx is done FitLDA returns ctx.Err() after the chunk in hand.
func FitLDA(ctx context.Context, docs CountRows, opts LDAOptions, rng *rand.Rand) (*LDA, LDAStats, error) {
	var st LDAStats
	o, err := opts.resolve()
	if err != nil {
		return nil, st, err
	}
	v := docs.Dim()
	if v <= 0 {
		return nil, st, fmt.Errorf("models: lda: vocabulary of %d terms: %w", v, ErrLDAInput)
	}
	var rows []int
	for i := 0; i < docs.Rows(); i++ {
		idx, cnt := docs.Counts(i)
		total, err := ldaCheckRow(i, v, idx, cnt)
		if err != nil {
			return nil, st, err
		}
		if total == 0 {
			st.Skipped++
			continue
		}
		rows = append(rows, i)
		st.Words += total
	}
	if len(rows) == 0 {
		return nil, st, fmt.Errorf("models: lda: none of %d rows has a word: %w", docs.Rows(), ErrLDAInput)
	}
	st.Documents = len(rows)

	m := newLDA(o, v)
	// Drawn topic by topic as gensim's (num_topics, num_terms) array.
	for t := 0; t < m.k; t++ {
		for w := 0; w < v; w++ {
			m.sstats[w*m.k+t] = ldaGamma100(rng)
		}
	}
	fitSeed := rng.Uint64()
	m.seed = rng.Uint64()
	// gensim's constructor takes exp(E[log beta]) of the draws alone, without
	// eta; every later sync uses lambda = eta + sstats.
	m.syncExpElogbeta(0)
	if err := m.train(ctx, docs, rows, o, fitSeed, &st); err != nil {
		return nil, st, err
	}
	return m, st, nil
}

func newLDA(o LDAOptions, v int) *LDA {
	return &LDA{
		k: o.Topics, v: v, alpha: o.Alpha, eta: o.Eta,
		iterations: o.Iterations, gammaThreshold: o.GammaThreshold,
		minProb: o.MinimumProbability, workers: o.Workers,
		sstats:      make([]float64, v*o.Topics),
		expElogbeta: make([]float64, v*o.Topics),
	}
}

// train runs the passes of gensim's LdaModel.update over the non-empty rows.
func (m *LDA) train(ctx context.Context, docs CountRows, rows []int, o LDAOptions, fitSeed uint64, st *LDAStats) error {
	d := len(rows)
	chunk := min(d, o.ChunkSize)
	st.Chunks = (d + chunk - 1) / chunk
	if o.Passes == 0 {
		o.Passes = LDAPasses(st.Chunks, o.MinUpdates)
	}
	st.Passes = o.Passes
	other := make([]float64, m.v*m.k)
	var b ldaBatch
	var res ldaResult
	updated := 0
	for pass := 0; pass < o.Passes; pass++ {
		for c := 0; c < st.Chunks; c++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			lo, hi := c*chunk, min((c+1)*chunk, d)
			b.gather(docs, rows[lo:hi])
			if o.EvalEvery > 0 && (hi == d || (c+1)%o.EvalEvery == 0) {
				bound := m.bound(&b, ldaStreamEval, uint64(pass), float64(d)/float64(hi-lo))
				st.Evaluations = append(st.Evaluations, LDAEval{
					Pass: pass, Chunk: c, ChunkDocs: hi - lo, ChunkWords: b.words, PerWordBound: bound,
				})
			}
			m.infer(&b, fitSeed, ldaStreamFit, uint64(pass), &res, true)
			st.Inferences += int64(hi - lo)
			st.Iterations += res.iterations
			st.Converged += res.converged
			m.accumulate(&b, &res, other)

			rho := math.Pow(o.Offset+float64(pass)+float64(updated)/float64(chunk), -o.Decay)
			m.blend(rho, other, float64(d)/float64(hi-lo))
			st.Updates++
			st.FinalRho = rho
			if pass == 0 {
				updated += hi - lo
			}
		}
	}
	st.PerWordBound = math.NaN()
	if n := len(st.Evaluations); n > 0 {
		st.PerWordBound = st.Evaluations[n-1].PerWordBound
	}
	return nil
}

// ldaCheckRow validates row i and returns its total count.
func ldaCheckRow(i, v int, idx, cnt []int32) (int64, error) {
	if len(idx) != len(cnt) {
		return 0, fmt.Errorf("models: lda: row %d: %d term ids but %d counts: %w", i, len(idx), len(cnt), ErrLDAInput)
	}
	var total int64
	for j, w := range idx {
		if w < 0 || int(w) >= v {
			return 0, fmt.Errorf("models: lda: row %d: term id %d outside vocabulary [0,%d): %w", i, w, v, ErrLDAInput)
		}
		if cnt[j] < 0 {
			return 0, fmt.Errorf("models: lda: row %d: term id %d has count %d: %w", i, w, cnt[j], ErrLDAInput)
		}
		total += int64(cnt[j])
	}
	return total, nil
}

// NumTopics returns the number of topics.
func (m *LDA) NumTopics() int { return m.k }

// VocabSize returns the number of terms the model was fitted on.
func (m *LDA) VocabSize() int { return m.v }

// Topics returns the topic-word distributions, one row of VocabSize per
// topic: lambda normalised to sum to 1 (gensim's get_topics).
func (m *LDA) Topics() [][]float64 {
	out := make([][]float64, m.k)
	for t := range out {
		row := make([]float64, m.v)
		var sum float64
		for w := range row {
			row[w] = m.eta + m.sstats[w*m.k+t]
			sum += row[w]
		}
		floats.Scale(1/sum, row)
		out[t] = row
	}
	return out
}

// Transform infers the topic proportions of every row of docs (normalised
// gamma, as gensim's get_document_topics, with proportions below
// MinimumProbability set to 0). An empty row gets gamma = alpha, i.e.
// uniform proportions. Row i's result depends only on the model and row i's
// counts. It panics if docs has another vocabulary size or a term id out of
// range: it must be the vocabulary the model was fitted on.
func (m *LDA) Transform(docs CountRows) *TopicMatrix {
	m.checkDim(docs)
	n := docs.Rows()
	out := &TopicMatrix{rows: n, dim: m.k, data: make([]float32, n*m.k)}
	var b ldaBatch
	var res ldaResult
	const block = 4096
	rows := make([]int, 0, block)
	for lo := 0; lo < n; lo += block {
		rows = rows[:0]
		for i := lo; i < min(lo+block, n); i++ {
			rows = append(rows, i)
		}
		b.mustGather(docs, rows, m.v)
		m.infer(&b, m.seed, ldaStreamInfer, 0, &res, false)
		for d, i := range rows {
			g := res.gamma[d*m.k : (d+1)*m.k]
			sum := floats.Sum(g)
			dst := out.data[i*m.k : (i+1)*m.k]
			for t, x := range g {
				p := x / sum
				if p < m.minProb {
					p = 0
				}
				dst[t] = float32(p)
			}
		}
	}
	return out
}

// LogPerplexity returns the per-word variational bound (nats, negative,
// higher is better) of docs under the model: gensim's
// log_perplexity(corpus) on the whole corpus. It uses the same per-row
// inference as Transform. It returns NaN when docs has no words and panics
// as Transform does.
func (m *LDA) LogPerplexity(docs CountRows) float64 {
	m.checkDim(docs)
	var b ldaBatch
	var score float64
	var words int64
	const block = 4096
	rows := make([]int, 0, block)
	n := docs.Rows()
	elogbeta := m.elogbeta()
	// The topic part is counted once; the document parts are summed over
	// blocks in order.
	for lo := 0; lo < n; lo += block {
		rows = rows[:0]
		for i := lo; i < min(lo+block, n); i++ {
			rows = append(rows, i)
		}
		b.mustGather(docs, rows, m.v)
		score += m.docBound(&b, elogbeta, m.seed, ldaStreamInfer, 0)
		words += b.words
	}
	if words == 0 {
		return math.NaN()
	}
	return (score + m.topicBound(elogbeta)) / float64(words)
}

func (m *LDA) checkDim(docs CountRows) {
	if docs.Dim() != m.v {
		panic(fmt.Sprintf("models: lda: rows have %d terms, model has %d", docs.Dim(), m.v))
	}
}

// ldaBatch is a chunk of rows copied into one CSR block, so that workers
// never call CountRows concurrently.
type ldaBatch struct {
	rows  []int
	ptr   []int
	idx   []int32
	cnt   []float64
	words int64
}

func (b *ldaBatch) gather(docs CountRows, rows []int) {
	b.rows = append(b.rows[:0], rows...)
	b.ptr = append(b.ptr[:0], 0)
	b.idx, b.cnt, b.words = b.idx[:0], b.cnt[:0], 0
	for _, i := range rows {
		idx, cnt := docs.Counts(i)
		for j, w := range idx {
			if cnt[j] == 0 {
				continue
			}
			b.idx = append(b.idx, w)
			b.cnt = append(b.cnt, float64(cnt[j]))
			b.words += int64(cnt[j])
		}
		b.ptr = append(b.ptr, len(b.idx))
	}
}

func (b *ldaBatch) mustGather(docs CountRows, rows []int, v int) {
	for _, i := range rows {
		idx, cnt := docs.Counts(i)
		if _, err := ldaCheckRow(i, v, idx, cnt); err != nil {
			panic(err.Error())
		}
	}
	b.gather(docs, rows)
}

// ldaResult holds a batch's E-step output: per document gamma and, when
// collecting statistics, the final exp(E[log theta]) and per-word
// cnt/phinorm, from which the document's sufficient statistics follow.
type ldaResult struct {
	gamma, expTheta, ratio []float64
	iters                  []int32
	conv                   []bool
	iterations, converged  int64
}

// ldaScratch is one worker's buffers.
type ldaScratch struct {
	pcg               rand.PCG
	rng               *rand.Rand
	expTheta, last    []float64
	acc, phinorm, tmp []float64
}

func (m *LDA) newScratch() *ldaScratch {
	s := &ldaScratch{
		expTheta: make([]float64, m.k),
		last:     make([]float64, m.k),
		acc:      make([]float64, m.k),
		tmp:      make([]float64, m.k),
	}
	s.rng = rand.New(&s.pcg)
	return s
}

// ldaParallel calls fn on consecutive ranges of [0, n) from `workers`
// goroutines. Which worker gets which range varies; callers write results
// per index only, so the output does not.
func ldaParallel(n, workers, grain int, fn func(s int, lo, hi int)) {
	if workers <= 1 || n <= grain {
		fn(0, 0, n)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for s := 0; s < workers; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(int64(grain))) - grain
				if lo >= n {
					return
				}
				fn(s, lo, min(lo+grain, n))
			}
		}()
	}
	wg.Wait()
}

// infer runs the E-step on every document of b (gensim's inference).
func (m *LDA) infer(b *ldaBatch, base uint64, purpose, pass uint64, r *ldaResult, collect bool) {
	n, k := len(b.rows), m.k
	r.gamma = ldaGrow(r.gamma, n*k)
	r.iters = ldaGrow(r.iters, n)
	r.conv = ldaGrow(r.conv, n)
	if collect {
		r.expTheta = ldaGrow(r.expTheta, n*k)
		r.ratio = ldaGrow(r.ratio, len(b.idx))
	}
	scratch := make([]*ldaScratch, m.workers)
	ldaParallel(n, m.workers, 8, func(w int, lo, hi int) {
		s := scratch[w]
		if s == nil {
			s = m.newScratch()
			scratch[w] = s
		}
		for d := lo; d < hi; d++ {
			a, c := ldaStreamSeed(base, purpose, pass, b.rows[d])
			s.pcg.Seed(a, c)
			j0, j1 := b.ptr[d], b.ptr[d+1]
			g := r.gamma[d*k : (d+1)*k]
			r.iters[d], r.conv[d] = m.inferDoc(s, b.idx[j0:j1], b.cnt[j0:j1], g)
			if collect {
				copy(r.expTheta[d*k:(d+1)*k], s.expTheta)
				for j := j0; j < j1; j++ {
					r.ratio[j] = b.cnt[j] / s.phinorm[j-j0]
				}
			}
		}
	})
	r.iterations, r.converged = 0, 0
	for d := 0; d < n; d++ {
		r.iterations += int64(r.iters[d])
		if r.conv[d] {
			r.converged++
		}
	}
}

// inferDoc fits one document's gamma by the fixed-point iteration of
// Hoffman et al. (Algorithm 2, with phi kept implicit as gensim does):
//
//	gamma_k = alpha + expElogtheta_k * sum_w cnt_w expElogbeta_kw / phinorm_w
//	phinorm_w = sum_k expElogtheta_k expElogbeta_kw
//
// It leaves the final exp(E[log theta]) in s.expTheta and phinorm in
// s.phinorm, and returns the iterations run and whether gamma converged.
func (m *LDA) inferDoc(s *ldaScratch, idx []int32, cnt []float64, gamma []float64) (int32, bool) {
	k := m.k
	for t := range gamma {
		gamma[t] = ldaGamma100(s.rng)
		if m.unitGamma {
			gamma[t] = 1
		}
	}
	ldaExpDirichlet(gamma, s.expTheta)
	if cap(s.phinorm) < len(idx) {
		s.phinorm = make([]float64, len(idx))
	}
	phinorm := s.phinorm[:len(idx)]
	eb := m.expElogbeta
	m.phinorm(idx, s.expTheta, phinorm)
	for it := int32(1); it <= int32(m.iterations); it++ {
		copy(s.last, gamma)
		acc := s.acc
		clear(acc)
		for j, w := range idx {
			floats.AddScaled(acc, cnt[j]/phinorm[j], eb[int(w)*k:int(w)*k+k])
		}
		var change float64
		for t := range gamma {
			gamma[t] = m.alpha + s.expTheta[t]*acc[t]
			change += math.Abs(gamma[t] - s.last[t])
		}
		ldaExpDirichlet(gamma, s.expTheta)
		m.phinorm(idx, s.expTheta, phinorm)
		if change/float64(k) < m.gammaThreshold {
			return it, true
		}
	}
	return int32(m.iterations), false
}

func (m *LDA) phinorm(idx []int32, expTheta, phinorm []float64) {
	k, eb := m.k, m.expElogbeta
	for j, w := range idx {
		phinorm[j] = floats.Dot(expTheta, eb[int(w)*k:int(w)*k+k]) + ldaEps
	}
}

// accumulate forms the chunk's sufficient statistics in other (gensim's
// sstats after inference): other_wk = expElogbeta_wk * sum_d
// expTheta_dk cnt_dw / phinorm_dw. Documents are added in order, each
// element by one goroutine, so the sums do not depend on Workers.
func (m *LDA) accumulate(b *ldaBatch, r *ldaResult, other []float64) {
	k := m.k
	clear(other)
	blocks := ldaTopicBlocks(k, m.workers)
	ldaParallel(len(blocks)-1, m.workers, 1, func(_ int, lo, hi int) {
		for bl := lo; bl < hi; bl++ {
			t0, t1 := blocks[bl], blocks[bl+1]
			for d := range b.rows {
				th := r.expTheta[d*k+t0 : d*k+t1]
				for j := b.ptr[d]; j < b.ptr[d+1]; j++ {
					w := int(b.idx[j])
					floats.AddScaled(other[w*k+t0:w*k+t1], r.ratio[j], th)
				}
			}
		}
	})
	floats.Mul(other, m.expElogbeta)
}

// ldaTopicBlocks splits [0, k) into up to `workers` ranges.
func ldaTopicBlocks(k, workers int) []int {
	n := max(1, min(workers, k))
	out := make([]int, n+1)
	for i := range out {
		out[i] = i * k / n
	}
	return out
}

// blend is gensim's LdaState.blend with the corpus size as target:
// sstats = (1-rho) sstats + rho*scale*other, then the expectation is synced.
func (m *LDA) blend(rho float64, other []float64, scale float64) {
	for i, x := range other {
		m.sstats[i] = (1-rho)*m.sstats[i] + rho*scale*x
	}
	m.syncExpElogbeta(m.eta)
}

// syncExpElogbeta sets expElogbeta = exp(psi(prior+sstats_kw) -
// psi(sum_w (prior+sstats_kw))) (E[log beta] under q(beta | lambda)).
func (m *LDA) syncExpElogbeta(prior float64) {
	psiTot := m.topicDigammaTotals(prior)
	k := m.k
	ldaParallel(m.v, m.workers, 256, func(_ int, lo, hi int) {
		for i := lo * k; i < hi*k; i++ {
			m.expElogbeta[i] = math.Exp(mathext.Digamma(prior+m.sstats[i]) - psiTot[i%k])
		}
	})
}

// topicDigammaTotals returns psi(sum_w (prior + sstats_kw)) per topic, the
// sums taken in word order.
func (m *LDA) topicDigammaTotals(prior float64) []float64 {
	k := m.k
	tot := make([]float64, k)
	for w := 0; w < m.v; w++ {
		floats.Add(tot, m.sstats[w*k:(w+1)*k])
	}
	for t := range tot {
		tot[t] = mathext.Digamma(tot[t] + prior*float64(m.v))
	}
	return tot
}

// bound is gensim's log_perplexity(chunk, total_docs): the chunk's
// variational bound with its document part scaled by subsample, divided by
// the scaled word count.
func (m *LDA) bound(b *ldaBatch, purpose, pass uint64, subsample float64) float64 {
	elogbeta := m.elogbeta()
	score := m.docBound(b, elogbeta, m.seed, purpose, pass)*subsample + m.topicBound(elogbeta)
	return score / (subsample * float64(b.words))
}

// docBound returns the document part of the variational bound (gensim's
// LdaModel.bound) summed over the batch in row order: for each document,
// E[log p(w | theta, beta)] + E[log p(theta | alpha)] - E[log q(theta | gamma)].
func (m *LDA) docBound(b *ldaBatch, elogbeta []float64, base, purpose, pass uint64) float64 {
	var r ldaResult
	m.infer(b, base, purpose, pass, &r, false)
	k := m.k
	per := make([]float64, len(b.rows))
	lgAlpha, _ := math.Lgamma(m.alpha)
	lgSumAlpha, _ := math.Lgamma(m.alpha * float64(k))
	ldaParallel(len(b.rows), m.workers, 8, func(_ int, lo, hi int) {
		elogtheta := make([]float64, k)
		tmp := make([]float64, k)
		for d := lo; d < hi; d++ {
			g := r.gamma[d*k : (d+1)*k]
			psiSum := mathext.Digamma(floats.Sum(g))
			for t, x := range g {
				elogtheta[t] = mathext.Digamma(x) - psiSum
			}
			var s float64
			for j := b.ptr[d]; j < b.ptr[d+1]; j++ {
				w := int(b.idx[j])
				floats.AddTo(tmp, elogtheta, elogbeta[w*k:(w+1)*k])
				s += b.cnt[j] * floats.LogSumExp(tmp)
			}
			var gsum float64
			for t, x := range g {
				lg, _ := math.Lgamma(x)
				s += (m.alpha-x)*elogtheta[t] + lg - lgAlpha
				gsum += x
			}
			lgSum, _ := math.Lgamma(gsum)
			per[d] = s + lgSumAlpha - lgSum
		}
	})
	var score float64
	for _, s := range per {
		score += s
	}
	return score
}

// topicBound returns the topic part of the bound: E[log p(beta | eta)] -
// E[log q(beta | lambda)], summed over fixed blocks of words in order.
func (m *LDA) topicBound(elogbeta []float64) float64 {
	k := m.k
	lgEta, _ := math.Lgamma(m.eta)
	const block = 256
	nb := (m.v + block - 1) / block
	part := make([]float64, nb)
	ldaParallel(nb, m.workers, 1, func(_ int, lo, hi int) {
		for bl := lo; bl < hi; bl++ {
			var s float64
			for i := bl * block * k; i < min((bl+1)*block, m.v)*k; i++ {
				lambda := m.eta + m.sstats[i]
				lg, _ := math.Lgamma(lambda)
				s += (m.eta-lambda)*elogbeta[i] + lg - lgEta
			}
			part[bl] = s
		}
	})
	var score float64
	for _, s := range part {
		score += s
	}
	lgSumEta, _ := math.Lgamma(m.eta * float64(m.v))
	tot := make([]float64, k)
	for w := 0; w < m.v; w++ {
		floats.Add(tot, m.sstats[w*k:(w+1)*k])
	}
	for _, x := range tot {
		lg, _ := math.Lgamma(x + m.eta*float64(m.v))
		score += lgSumEta - lg
	}
	return score
}

// elogbeta returns E[log beta] under q(beta | lambda), word-major.
func (m *LDA) elogbeta() []float64 {
	k := m.k
	psiTot := m.topicDigammaTotals(m.eta)
	out := make([]float64, m.v*k)
	ldaParallel(m.v, m.workers, 256, func(_ int, lo, hi int) {
		for i := lo * k; i < hi*k; i++ {
			out[i] = mathext.Digamma(m.eta+m.sstats[i]) - psiTot[i%k]
		}
	})
	return out
}

// ldaExpDirichlet sets dst = exp(psi(g) - psi(sum g)), gensim's
// exp(dirichlet_expectation(g)).
func ldaExpDirichlet(g, dst []float64) {
	psiSum := mathext.Digamma(floats.Sum(g))
	for t, x := range g {
		dst[t] = math.Exp(mathext.Digamma(x) - psiSum)
	}
}

// ldaGamma100 draws from Gamma(shape 100, scale 1/100), gensim's initial
// distribution of lambda and gamma, by Marsaglia and Tsang's method (2000).
var ldaGammaC = 1 / math.Sqrt(9*(100-1.0/3))

func ldaGamma100(r *rand.Rand) float64 {
	const d = 100 - 1.0/3
	c := ldaGammaC
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		x2 := x * x
		if u < 1-0.0331*x2*x2 || math.Log(u) < 0.5*x2+d*(1-v+math.Log(v)) {
			return d * v / 100
		}
	}
}

// ldaStreamSeed derives the PCG seed of one row's generator for one purpose
// and pass (SplitMix64 finaliser, so nearby keys give unrelated streams).
func ldaStreamSeed(base, purpose, pass uint64, row int) (uint64, uint64) {
	a := ldaMix(base ^ ldaMix(purpose<<48^pass))
	return a, ldaMix(a ^ ldaMix(uint64(row)))
}

func ldaMix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func ldaGrow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"path/filepath"
	"strconv"
	"strings"

	"monomer/bow"
	"monomer/imagefeat"
	"monomer/job"
	"monomer/pipeline"
	"monomer/schema"
)

// Features builds the item-feature matrix of an experiment: the image
// matrix (Arrow IPC, memory-mapped by training), the same matrix of the
// embeddings a user brought (embeddings.go), or the bag-of-words
// vocabulary and vectors. All write feature_items.parquet, the items that
// have a feature vector; later stages drop the rest.
type Features struct{}

var _ ExpStage[featuresParams] = Features{}

func (Features) Name() string { return "features" }

// Deps: the bow-shard nodes exist only with vocab_shards (ShardedStage).
func (Features) Deps() []string { return []string{"ingest", "bow-shard"} }

type featuresParams struct {
	Kind              string  `json:"kind"`
	VocabShards       int     `json:"vocab_shards,omitempty"`
	ImageScale        float64 `json:"image_scale,omitempty"`
	VocabSize         int     `json:"vocab_size,omitempty"`
	UseSummary        bool    `json:"use_summary,omitempty"`
	VocabSampleTokens int64   `json:"vocab_sample_tokens,omitempty"`
	RejectRatio       float64 `json:"reject_ratio,omitempty"` // embeddings only
	// ImageFeatures is the raw image-feature file (image features only),
	// and Embeddings the embeddings file with its ids file if any
	// (embeddings only), keyed by their content (Files).
	ImageFeatures string   `json:"-"`
	Embeddings    []string `json:"-"`
	// Vocabulary is the vocabulary.parquet of vocabulary_from's run,
	// keyed by content; VocabularyMissing says why that run has none (the
	// vocabulary is then counted, with a WARN). The reason names paths, so
	// the key holds only that it is missing (MarshalJSON): the same
	// wherever the root of runs lies.
	Vocabulary        string `json:"-"`
	VocabularyFixed   bool   `json:"vocabulary_from,omitempty"`
	VocabularyMissing string `json:"vocabulary_missing,omitempty"`
}

// MarshalJSON is the node's key: the parameters, with why vocabulary_from
// found no vocabulary reduced to that it found none.
func (p featuresParams) MarshalJSON() ([]byte, error) {
	type plain featuresParams
	if p.VocabularyMissing != "" {
		p.VocabularyMissing = "no vocabulary"
	}
	return json.Marshal(plain(p))
}

// Files is the image-feature file, for image features, or the embeddings
// files, for embeddings.
func (p featuresParams) Files() []string {
	var files []string
	if p.ImageFeatures != "" {
		files = append(files, p.ImageFeatures)
	}
	if p.Vocabulary != "" {
		files = append(files, p.Vocabulary)
	}
	return append(files, p.Embeddings...)
}

func (Features) Params(e *job.Resolved) featuresParams {
	if e.Features == "image" {
		return featuresParams{Kind: "image", ImageScale: e.Settings.ImageScale, ImageFeatures: e.Data.ImageFeatures}
	}
	if e.Features == "embeddings" {
		return featuresParams{Kind: "embeddings", RejectRatio: e.Settings.RejectRatio.Get(), Embeddings: imagefeat.EmbeddingFiles(e.Data.Embeddings)}
	}
	p := featuresParams{Kind: "bow", VocabShards: e.Settings.VocabShards.Get(), VocabSize: e.Settings.VocabSize, UseSummary: e.Settings.UseSummary.Get(),
		VocabSampleTokens: e.Settings.VocabSampleTokens} // the reviews: ingest's table, an upstream output
	if e.VocabularyFrom != "" {
		p.Vocabulary, p.VocabularyMissing = fixedVocabulary(e)
		p.VocabularyFixed = p.Vocabulary != ""
	}
	return p
}

// imageMatrixFile is the image-feature matrix inside the features directory.
const imageMatrixFile = "image.arrow"

func (Features) Run(ctx context.Context, env *pipeline.Env, p featuresParams) (*pipeline.Result, error) {
	it, err := readItems(ctx, env.InDir)
	if err != nil {
		return nil, err
	}
	if p.Kind == "image" {
		return imageFeatures(ctx, env, p, it)
	}
	if p.Kind == "embeddings" {
		return embeddingFeatures(ctx, env, p, it)
	}
	return bowFeatures(ctx, env, p, it)
}

func imageFeatures(ctx context.Context, env *pipeline.Env, p featuresParams, it *items) (*pipeline.Result, error) {
	rows := it.rows()
	tr := env.Track("extract image features", 0)
	var sum string // the matrix's sha256, hashed as it is written: the runner need not read 10 GB again
	st, err := imagefeat.Extract(ctx, p.ImageFeatures, rows, len(it.asin),
		float32(p.ImageScale), filepath.Join(env.OutDir, imageMatrixFile), imagefeat.WithProgress(tr.Add), imagefeat.WithSHA256(&sum))
	tr.Done()
	if err != nil {
		return nil, err
	}
	idx := make([]int32, len(it.asin))
	for i := range idx {
		idx[i] = int32(i)
	}
	if _, err := checkSpread(ctx, env, p.ImageFeatures, idx, false); err != nil {
		return nil, err
	}
	n, err := schema.Write(filepath.Join(env.OutDir, "feature_items.parquet"), schema.FeatureItemsCols{ASIN: it.asin, ItemIdx: idx})
	if err != nil {
		return nil, err
	}
	return &pipeline.Result{
		Rows:   map[string]int64{"feature_items": n, "image": int64(len(it.asin))},
		Stats:  map[string]any{"extract": st},
		SHA256: map[string]string{imageMatrixFile: sum},
	}, nil
}

// reviewBatches reads the reviews table; a test breaks its batches up.
var reviewBatches = schema.Batches[schema.ReviewsCols]

// reviewDocs iterates over the reviews ingest kept (its reviews table at
// path) as bag-of-words documents: in file order, each tagged with its
// item's row in rows, the summary in front of the text if summary is set.
// Each loop reads the table once, one row group at a time, counting each
// document handed over with count. A review of an item not in rows is an
// error: the table and the items come from one ingest.
func reviewDocs(ctx context.Context, path string, rows map[string]int32, summary bool, count func(int64)) iter.Seq2[bow.Doc, error] {
	return func(yield func(bow.Doc, error) bool) {
		var at int64 // rows before the batch
		for b, err := range reviewBatches(ctx, path) {
			if err != nil {
				yield(bow.Doc{}, err)
				return
			}
			for k, a := range b.ASIN {
				row, ok := rows[a]
				if !ok {
					yield(bow.Doc{}, fmt.Errorf("stages: %s row %d: a review of %s, which is not an item of the experiment", path, at+int64(k), a))
					return
				}
				count(1)
				if !yield(bow.Doc{Item: row, Text: docText(b.Summary[k], b.Text[k], summary)}, nil) {
					return
				}
			}
			at += int64(len(b.ASIN))
		}
	}
}

// docText is a review as the bag of words reads it: the summary in front
// of the text if summary is set (use_summary). monomer score reads a new
// item's text through it too.
func docText(summary, text string, useSummary bool) string {
	if useSummary && summary != "" {
		return summary + ". " + text
	}
	return text
}

// bowRows is the bag of words of docs over items 0..n-1: counted over
// vocab, or over the vocabulary ranked from docs when vocab is nil. The
// features stage and monomer score (a run's stored vocabulary) both call
// it, so a new item's row is the row the stage gives the same text.
func bowRows(ctx context.Context, docs iter.Seq2[bow.Doc, error], n int, vocab []bow.Term, opts bow.Options) (*bow.Result, error) {
	if vocab != nil {
		return bow.Vectorize(ctx, docs, n, vocab, opts)
	}
	return bow.Build(ctx, docs, n, opts)
}

func bowFeatures(ctx context.Context, env *pipeline.Env, p featuresParams, it *items) (*pipeline.Result, error) {
	rows := it.rows()
	opts := bowOptions(p)
	var vocab []bow.Term
	if p.VocabShards > 0 {
		shards, err := readBowShards(ctx, env, it.asin, p.VocabShards, p.UseSummary)
		if err != nil {
			return nil, err
		}
		if vocab, err = bow.Merge(shards, opts); err != nil {
			return nil, err
		}
	}
	// One read of the reviews ingest kept, tagging as it goes: the raw
	// reviews file is read once per experiment, by ingest. Documents are
	// tagged as they are handed over, so counting them tracks the
	// tokenising too.
	path, err := inputs(env.InDir).file("ingest", reviewsFile)
	if err != nil {
		return nil, err
	}
	tr := env.Track("tokenise and tag reviews", 0)
	docs := reviewDocs(ctx, path, rows, p.UseSummary, tr.Add)
	var res *bow.Result
	var warns []pipeline.Warning
	var fixed map[string]any // vocabulary_from's stats
	if p.Vocabulary != "" {
		res, fixed, warns, err = vectorizeFixed(ctx, p.Vocabulary, docs, len(it.asin), opts)
	} else {
		if vocab == nil && p.VocabularyMissing != "" {
			warns = append(warns, pipeline.Warning{Msg: "vocabulary_from: the vocabulary is counted on this run's reviews: " + p.VocabularyMissing})
		}
		res, err = bowRows(ctx, docs, len(it.asin), vocab, opts)
	}
	tr.Done()
	if err != nil {
		return nil, err
	}
	stats := map[string]any{"bow": res.Stats}
	if fixed != nil {
		stats["vocabulary_from"] = fixed
	}

	// Vocabulary, in term-id order.
	v := len(res.Vocab)
	id, cnt, df := make([]int32, v), make([]int64, v), make([]int64, v)
	term, kind, surface := make([]string, v), make([]string, v), make([]string, v)
	for i, t := range res.Vocab {
		id[i], term[i], kind[i], cnt[i], df[i], surface[i] = int32(i), t.Term, t.Kind.String(), t.Count, t.DocFreq, t.Surface
	}
	nv, err := schema.Write(filepath.Join(env.OutDir, "vocabulary.parquet"), schema.VocabularyCols{TermID: id, Term: term, Kind: kind, Count: cnt, DocFreq: df, Surface: surface})
	if err != nil {
		return nil, err
	}

	// Vectors of the kept items, in item order.
	var asin []string
	var itemIdx []int32
	var termIDs, counts [][]int32
	var weights [][]float32
	var empty []string // the first items left without a term, for the WARN
	for i := range it.asin {
		ids, w := res.Matrix.SparseRow(i)
		if len(ids) == 0 {
			if len(empty) < 3 {
				empty = append(empty, strconv.Quote(it.asin[i]))
			}
			continue
		}
		_, c := res.Matrix.Counts(i)
		asin = append(asin, it.asin[i])
		itemIdx = append(itemIdx, int32(i))
		termIDs, weights, counts = append(termIDs, ids), append(weights, w), append(counts, c)
	}
	nb, err := schema.Write(filepath.Join(env.OutDir, "bow.parquet"), schema.BowCols{ASIN: asin, TermIDs: termIDs, Weights: weights, ItemIdx: itemIdx, Counts: counts})
	if err != nil {
		return nil, err
	}
	nf, err := schema.Write(filepath.Join(env.OutDir, "feature_items.parquet"), schema.FeatureItemsCols{ASIN: asin, ItemIdx: itemIdx})
	if err != nil {
		return nil, err
	}
	return &pipeline.Result{
		Rows:     map[string]int64{"vocabulary": nv, "bow": nb, "feature_items": nf},
		Stats:    stats,
		Warnings: append(warns, noTermWarnings(res.Stats, len(it.asin), empty)...),
	}, nil
}

// noTermWarnings is the WARN line of the items whose text holds no term
// of the vocabulary (a product named "7UP" with one-word reviews): they
// have no bag of words, so they are left out of feature_items, and their
// pairs of training and evaluation with them (negatives' stats,
// positives_dropped_no_feature). first names a few of them.
func noTermWarnings(st bow.Stats, items int, first []string) []pipeline.Warning {
	n := st.ItemsNoVocabHit + st.ItemsNoReviews
	if n == 0 {
		return nil
	}
	return []pipeline.Warning{{
		Msg: fmt.Sprintf("%d of %d items have no vocabulary term in their text (%s...): they have no bag of words and are left out of training and evaluation with their pairs (features' stats bow.items_no_vocab_hit, negatives' positives_dropped_no_feature)",
			n, items, strings.Join(first, ", ")),
		Attrs: map[string]any{"items_without_terms": n, "items": items},
	}}
}

package stages

import (
	"context"
	"errors"
	"io"
	"path/filepath"

	"monomer/amazon"
	"monomer/bow"
	"monomer/imagefeat"
	"monomer/job"
	"monomer/pipeline"
	"monomer/schema"
)

// Features builds the item-feature matrix of an experiment: the image
// matrix (Arrow IPC, memory-mapped by training) or the bag-of-words
// vocabulary and vectors. Both write feature_items.parquet, the items that
// have a feature vector; later stages drop the rest.
type Features struct{}

var _ pipeline.Stage = Features{}

func (Features) Name() string { return "features" }

// Deps: the bow-shard nodes exist only with vocab_shards (pipeline.Sharded).
func (Features) Deps() []string { return []string{"ingest", "bow-shard"} }

type featuresParams struct {
	Kind              string  `json:"kind"`
	VocabShards       int     `json:"vocab_shards,omitempty"`
	ImageScale        float64 `json:"image_scale,omitempty"`
	VocabSize         int     `json:"vocab_size,omitempty"`
	UseSummary        bool    `json:"use_summary,omitempty"`
	VocabSampleTokens int64   `json:"vocab_sample_tokens,omitempty"`
}

func (Features) Key(e *job.Resolved) (any, []string) {
	if e.Features == "image" {
		return featuresParams{Kind: "image", ImageScale: e.Settings.ImageScale}, []string{e.Data.ImageFeatures}
	}
	return featuresParams{Kind: "bow", VocabShards: e.Settings.VocabShards.Get(), VocabSize: e.Settings.VocabSize, UseSummary: e.Settings.UseSummary.Get(),
		VocabSampleTokens: e.Settings.VocabSampleTokens}, []string{e.Data.Reviews}
}

// imageMatrixFile is the image-feature matrix inside the features directory.
const imageMatrixFile = "image.arrow"

func (Features) Run(ctx context.Context, env *pipeline.Env) (*pipeline.Result, error) {
	it, err := readItems(env.InDir("ingest"))
	if err != nil {
		return nil, err
	}
	if env.Exp.Features == "image" {
		return imageFeatures(ctx, env, it)
	}
	return bowFeatures(ctx, env, it)
}

func imageFeatures(ctx context.Context, env *pipeline.Env, it *items) (*pipeline.Result, error) {
	rows := it.rows()
	tr := env.Track("extract image features", 0)
	st, err := imagefeat.Extract(env.Exp.Data.ImageFeatures, rows, len(it.asin), imagefeat.Dim,
		float32(env.Exp.Settings.ImageScale), filepath.Join(env.OutDir, imageMatrixFile),
		imagefeat.WithContext(ctx), imagefeat.WithProgress(tr.Add))
	tr.Done()
	if err != nil {
		return nil, err
	}
	idx := make([]int32, len(it.asin))
	for i := range idx {
		idx[i] = int32(i)
	}
	n, err := schema.Write(filepath.Join(env.OutDir, "feature_items.parquet"), schema.FeatureItems, it.asin, idx)
	if err != nil {
		return nil, err
	}
	return &pipeline.Result{
		Rows:  map[string]int64{"feature_items": n, "image": int64(len(it.asin))},
		Stats: map[string]any{"extract": st},
	}, nil
}

// reviewDocs streams an experiment's reviews as bag-of-words documents. The
// reader pushes records; bow pulls documents: a goroutine bridges the two.
func reviewDocs(ctx context.Context, path string, rows map[string]int32, summary bool) (next func() (bow.Doc, error), stop func()) {
	ch := make(chan bow.Doc, 1024)
	errc := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(ch)
		_, err := amazon.ReadReviews(path, func(r *amazon.Review) error {
			row, ok := rows[r.ASIN]
			if !ok {
				return nil
			}
			text := r.ReviewText
			if summary && r.Summary != "" {
				text = r.Summary + ". " + text
			}
			select {
			case ch <- bow.Doc{Item: row, Text: text}:
				return nil
			case <-done:
				return context.Canceled
			case <-ctx.Done():
				return ctx.Err()
			}
		}, func(amazon.Reject) {}) // counted by ingest
		errc <- err
	}()
	next = func() (bow.Doc, error) {
		d, ok := <-ch
		if ok {
			return d, nil
		}
		if err := <-errc; err != nil {
			errc <- err
			return bow.Doc{}, err
		}
		errc <- nil
		return bow.Doc{}, io.EOF
	}
	stop = func() {
		close(done)
		for range ch {
		}
	}
	return next, stop
}

func bowFeatures(ctx context.Context, env *pipeline.Env, it *items) (*pipeline.Result, error) {
	rows := it.rows()
	s := env.Exp.Settings
	opts := bowOptions(env.Exp)
	var vocab []bow.Term
	if s.VocabShards.Get() > 0 {
		shards, err := readBowShards(env, it.asin, s.VocabShards.Get())
		if err != nil {
			return nil, err
		}
		if vocab, err = bow.Merge(shards, opts); err != nil {
			return nil, err
		}
	}
	// Documents are tagged as they are handed over, so counting them tracks
	// the tokenising too.
	tr := env.Track("tokenise and tag reviews", 0)
	pull, stop := reviewDocs(ctx, env.Exp.Data.Reviews, rows, s.UseSummary.Get())
	next := func() (bow.Doc, error) {
		d, err := pull()
		if err == nil {
			tr.Add(1)
		}
		return d, err
	}
	var res *bow.Result
	var err error
	if vocab != nil {
		res, err = bow.Vectorize(next, len(it.asin), vocab, opts)
	} else {
		res, err = bow.Build(next, len(it.asin), opts)
	}
	stop()
	tr.Done()
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}

	// Vocabulary, in term-id order.
	v := len(res.Vocab)
	id, cnt, df := make([]int32, v), make([]int64, v), make([]int64, v)
	term, kind, surface := make([]string, v), make([]string, v), make([]string, v)
	for i, t := range res.Vocab {
		id[i], term[i], kind[i], cnt[i], df[i], surface[i] = int32(i), t.Term, t.Kind.String(), t.Count, t.DocFreq, t.Surface
	}
	nv, err := schema.Write(filepath.Join(env.OutDir, "vocabulary.parquet"), schema.Vocabulary, id, term, kind, cnt, df, surface)
	if err != nil {
		return nil, err
	}

	// Vectors of the kept items, in item order.
	var asin []string
	var itemIdx []int32
	var termIDs, counts [][]int32
	var weights [][]float32
	for i := range it.asin {
		ids, w := res.Matrix.SparseRow(i)
		if len(ids) == 0 {
			continue
		}
		_, c := res.Matrix.Counts(i)
		asin = append(asin, it.asin[i])
		itemIdx = append(itemIdx, int32(i))
		termIDs, weights, counts = append(termIDs, ids), append(weights, w), append(counts, c)
	}
	nb, err := schema.Write(filepath.Join(env.OutDir, "bow.parquet"), schema.Bow, asin, termIDs, weights, itemIdx, counts)
	if err != nil {
		return nil, err
	}
	nf, err := schema.Write(filepath.Join(env.OutDir, "feature_items.parquet"), schema.FeatureItems, asin, itemIdx)
	if err != nil {
		return nil, err
	}
	return &pipeline.Result{
		Rows:  map[string]int64{"vocabulary": nv, "bow": nb, "feature_items": nf},
		Stats: map[string]any{"bow": res.Stats},
	}, nil
}

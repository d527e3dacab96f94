package stages

import (
	"context"
	"errors"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"monomer/amazon"
	"monomer/bow"
	"monomer/job"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// A bag-of-words experiment reads the raw reviews file exactly once, front
// to back, in ingest, with or without bow-shard nodes: features and the
// shards read ingest's reviews table. Counted through the reviewsOf seam:
// the loops started over the file and the uncompressed bytes they read.
func TestReviewsReadOncePerExperiment(t *testing.T) {
	j := loadTestJob(t)
	j.Experiments = j.Experiments[1:] // women-bow
	e := j.Resolve(0)
	rc, err := amazon.Open(e.Data.Reviews)
	if err != nil {
		t.Fatal(err)
	}
	size, err := io.Copy(io.Discard, rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}

	var loops, bytes int64
	defer func(f func(amazon.ReviewOptions, string, func(amazon.Reject), *amazon.Stats) iter.Seq2[amazon.Review, error]) {
		reviewsOf = f
	}(reviewsOf)
	reviewsOf = func(o amazon.ReviewOptions, path string, reject func(amazon.Reject), st *amazon.Stats) iter.Seq2[amazon.Review, error] {
		return func(yield func(amazon.Review, error) bool) {
			loops++
			var mine amazon.Stats
			for r, err := range amazon.ReviewsWith(o, path, reject, &mine) {
				if !yield(r, err) {
					break
				}
			}
			bytes += mine.Bytes
			if st != nil {
				*st = mine
			}
		}
	}

	var vocab [][]byte
	for _, shards := range []int{0, 2} {
		j.Experiments[0].Settings.VocabShards = job.Opt[int]{}
		if shards > 0 {
			j.Experiments[0].Settings.VocabShards = job.Set(shards)
		}
		loops, bytes = 0, 0
		dir := filepath.Join(t.TempDir(), "run")
		sum, err := runStages(context.Background(), j, named("ingest", "bow-shard", "features"), nil,
			pipeline.Options{RunDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if ran := sum.Run; ran != 2+shards {
			t.Fatalf("vocab_shards %d: %d nodes ran, want %d", shards, ran, 2+shards)
		}
		if loops != 1 || bytes != size {
			t.Errorf("vocab_shards %d: %d reads of %d bytes in all; want one read of the whole file (%d bytes)",
				shards, loops, bytes, size)
		}
		b, err := os.ReadFile(filepath.Join(dir, "women-bow", "features", "vocabulary.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		vocab = append(vocab, b)
	}
	if !slices.Equal(vocab[0], vocab[1]) {
		t.Error("the vocabulary merged from two shards differs from one process's")
	}
}

// Ingest's reviews table holds, in file order, every review of the
// experiment's items as the raw file has it, and only those; an image
// experiment has none.
func TestIngestReviewsTable(t *testing.T) {
	j := loadTestJob(t)
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := runStages(context.Background(), j, named("ingest"), nil, pipeline.Options{RunDir: dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "men-image", "ingest", reviewsFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("image experiment: %s: %v, want none", reviewsFile, err)
	}
	it, err := readItems(t.Context(), runInputs(dir, "women-bow"))
	if err != nil {
		t.Fatal(err)
	}
	rows := it.rows()
	var want schema.ReviewsCols
	for r, err := range amazon.Reviews(j.Resolve(1).Data.Reviews, nil, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := rows[r.ASIN]; ok {
			want.ASIN, want.Summary, want.Text = append(want.ASIN, r.ASIN), append(want.Summary, r.Summary), append(want.Text, r.ReviewText)
		}
	}
	var got schema.ReviewsCols
	for b, err := range schema.Batches[schema.ReviewsCols](context.Background(), filepath.Join(dir, "women-bow", "ingest", reviewsFile)) {
		if err != nil {
			t.Fatal(err)
		}
		got.ASIN, got.Summary, got.Text = append(got.ASIN, b.ASIN...), append(got.Summary, b.Summary...), append(got.Text, b.Text...)
	}
	if len(want.ASIN) < 100 || !slices.Equal(got.ASIN, want.ASIN) || !slices.Equal(got.Summary, want.Summary) || !slices.Equal(got.Text, want.Text) {
		t.Errorf("reviews table: %d rows, want the %d reviews of the items in file order", len(got.ASIN), len(want.ASIN))
	}
	m, err := cache.ReadManifest(filepath.Join(dir, "women-bow", "ingest"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range m.Outputs {
		if o.Name == reviewsFile && (o.Rows == nil || *o.Rows != int64(len(want.ASIN))) {
			t.Errorf("manifest: %s rows %v, want %d", reviewsFile, o.Rows, len(want.ASIN))
		}
	}
}

// use_summary puts a review's summary in front of its text, and only then;
// a review of an item outside the experiment is an error naming the row.
func TestReviewDocsSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), reviewsFile)
	if _, err := schema.Write(path, schema.ReviewsCols{
		ASIN:    []string{"B1", "B2", "B9"},
		Summary: []string{"Great fit", "", "elsewhere"},
		Text:    []string{"soft leather", "no summary", "not ours"},
	}); err != nil {
		t.Fatal(err)
	}
	rows := map[string]int32{"B1": 0, "B2": 1}
	for _, tc := range []struct {
		summary bool
		want    []bow.Doc
	}{
		{false, []bow.Doc{{Item: 0, Text: "soft leather"}, {Item: 1, Text: "no summary"}}},
		{true, []bow.Doc{{Item: 0, Text: "Great fit. soft leather"}, {Item: 1, Text: "no summary"}}},
	} {
		var got []bow.Doc
		var n int64
		var last error
		for d, err := range reviewDocs(context.Background(), path, rows, tc.summary, func(k int64) { n += k }) {
			if err != nil {
				last = err
				break
			}
			got = append(got, d)
		}
		if !slices.Equal(got, tc.want) || n != int64(len(tc.want)) {
			t.Errorf("use_summary %v: %q (counted %d), want %q", tc.summary, got, n, tc.want)
		}
		if last == nil || !strings.Contains(last.Error(), "reviews.parquet row 2: a review of B9, which is not an item") {
			t.Errorf("use_summary %v: error %v, want one naming row 2", tc.summary, last)
		}
	}
}

// A cancel while features reads the reviews stops the stage there: bow
// looks at the context once per batch, breaks out of the loop, and the
// table is read no further.
func TestFeaturesCancelWhileReading(t *testing.T) {
	j := loadTestJob(t)
	j.Experiments = j.Experiments[1:] // women-bow
	dir := filepath.Join(t.TempDir(), "run")
	stageSet := named("ingest", "bow-shard", "features")
	if _, err := runStages(context.Background(), j, stageSet, nil, pipeline.Options{RunDir: dir, Only: "ingest"}); err != nil {
		t.Fatal(err)
	}
	total, err := schema.NumRows(filepath.Join(dir, "women-bow", "ingest", reviewsFile))
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const at = 100
	var yielded int64
	stopped := false
	defer func(f func(context.Context, string) iter.Seq2[schema.ReviewsCols, error]) { reviewBatches = f }(reviewBatches)
	// The demo's table is one row group: hand it over a row at a time.
	reviewBatches = func(ctx context.Context, path string) iter.Seq2[schema.ReviewsCols, error] {
		return func(yield func(schema.ReviewsCols, error) bool) {
			for b, err := range schema.Batches[schema.ReviewsCols](ctx, path) {
				if err != nil {
					yield(b, err)
					return
				}
				for k := range b.ASIN {
					if yielded++; yielded == at {
						cancel()
					}
					row := schema.ReviewsCols{ASIN: b.ASIN[k : k+1], Summary: b.Summary[k : k+1], Text: b.Text[k : k+1]}
					if !yield(row, nil) {
						stopped = true
						return
					}
				}
			}
		}
	}
	_, err = runStages(ctx, j, stageSet, nil, pipeline.Options{RunDir: dir, Only: "features"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("features: %v, want context.Canceled", err)
	}
	// bow looks at the context every 1024 reviews it is handed.
	if !stopped || yielded >= total {
		t.Errorf("read %d of %d reviews after a cancel at %d (loop broken: %v)", yielded, total, at, stopped)
	}
}

// Features and bow-shard read the reviews through ingest's table, so their
// keys name no raw file: a review added for an item outside the experiment
// reruns ingest, which writes the same tables, and leaves the shards and
// features up to date.
func TestReviewsKeyThroughIngest(t *testing.T) {
	j := loadTestJob(t)
	j.Experiments = j.Experiments[1:] // women-bow
	j.Experiments[0].Settings.VocabShards = job.Set(2)
	e := j.Resolve(0)
	if files := (Features{}).Params(&e).Files(); len(files) != 0 {
		t.Errorf("features key names raw files %v", files)
	}
	if _, ok := any(BowShard{}.Params(&e)).(RawFiles); ok {
		t.Errorf("bow-shard's parameters name raw files")
	}
	// A plain copy of the reviews the job can point at and the test append to.
	raw := filepath.Join(t.TempDir(), "reviews.json")
	rc, err := amazon.Open(e.Data.Reviews)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(raw, b, 0o644); err != nil {
		t.Fatal(err)
	}
	j.Experiments[0].Data.Reviews = raw
	stageSet := named("ingest", "bow-shard", "features")
	opts := pipeline.Options{RunDir: filepath.Join(t.TempDir(), "run")}
	if _, err := runStages(context.Background(), j, stageSet, nil, opts); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(raw, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(`{"asin": "NOTANITEM0", "reviewText": "elsewhere", "summary": "x"}` + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	sum, err := runStages(context.Background(), j, stageSet, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Run != 1 || sum.Skipped != 3 {
		t.Errorf("after a review of another item: %d ran, %d skipped; want ingest alone to run", sum.Run, sum.Skipped)
	}
}

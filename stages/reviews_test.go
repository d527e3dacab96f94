package stages

import (
	"context"
	"errors"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"monomer/amazon"
	"monomer/bow"
	"monomer/job"
	"monomer/pipeline"
)

// Each stage of a bag-of-words experiment that needs the reviews reads the
// file exactly once, front to back: ingest (to count each item's reviews),
// every bow-shard node, and features. Counted through the reviewsOf seam:
// the loops started over the file and the uncompressed bytes they read.
func TestReviewsReadOncePerStage(t *testing.T) {
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
	defer func(f func(string, func(amazon.Reject), *amazon.Stats) iter.Seq2[amazon.Review, error]) {
		reviewsOf = f
	}(reviewsOf)
	reviewsOf = func(path string, reject func(amazon.Reject), st *amazon.Stats) iter.Seq2[amazon.Review, error] {
		return func(yield func(amazon.Review, error) bool) {
			loops++
			var mine amazon.Stats
			for r, err := range amazon.Reviews(path, reject, &mine) {
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

	for _, shards := range []int{0, 2} {
		j.Experiments[0].Settings.VocabShards = job.Opt[int]{}
		if shards > 0 {
			j.Experiments[0].Settings.VocabShards = job.Set(shards)
		}
		loops, bytes = 0, 0
		_, err := pipeline.Run(context.Background(), j, []pipeline.Stage{Ingest{}, BowShard{}, Features{}}, nil,
			pipeline.Options{RunDir: filepath.Join(t.TempDir(), "run")})
		if err != nil {
			t.Fatal(err)
		}
		want := int64(2 + shards) // ingest, the shards, features
		if loops != want || bytes != want*size {
			t.Errorf("vocab_shards %d: %d reads of %d bytes in all; want %d reads of the whole file (%d bytes each)",
				shards, loops, bytes, want, size)
		}
	}
}

// use_summary puts a review's summary in front of its text, and only then;
// reviews of items outside the experiment are skipped.
func TestReviewDocsSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reviews_T.json")
	lines := `{"asin": "B1", "summary": "Great fit", "reviewText": "soft leather"}
{"asin": "B9", "summary": "elsewhere", "reviewText": "not ours"}
{"asin": "B2", "reviewText": "no summary"}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
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
		for d, err := range reviewDocs(path, rows, tc.summary, func(k int64) { n += k }) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, d)
		}
		if !slices.Equal(got, tc.want) || n != int64(len(tc.want)) {
			t.Errorf("use_summary %v: %q (counted %d), want %q", tc.summary, got, n, tc.want)
		}
	}
}

// A cancel while features reads the reviews stops the stage there: bow
// looks at the context once per batch, breaks out of the loop, and the
// file is read no further.
func TestFeaturesCancelWhileReading(t *testing.T) {
	j := loadTestJob(t)
	j.Experiments = j.Experiments[1:] // women-bow
	dir := filepath.Join(t.TempDir(), "run")
	stageSet := []pipeline.Stage{Ingest{}, BowShard{}, Features{}}
	if _, err := pipeline.Run(context.Background(), j, stageSet, nil, pipeline.Options{RunDir: dir, Only: "ingest"}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const at = 100
	var yielded, total int
	stopped := false
	defer func(f func(string, func(amazon.Reject), *amazon.Stats) iter.Seq2[amazon.Review, error]) {
		reviewsOf = f
	}(reviewsOf)
	reviewsOf = func(path string, reject func(amazon.Reject), st *amazon.Stats) iter.Seq2[amazon.Review, error] {
		return func(yield func(amazon.Review, error) bool) {
			for r, err := range amazon.Reviews(path, reject, st) {
				if yielded++; yielded == at {
					cancel()
				}
				if !yield(r, err) {
					stopped = true
					return
				}
			}
		}
	}
	for range amazon.Reviews(j.Resolve(0).Data.Reviews, nil, nil) {
		total++
	}
	_, err := pipeline.Run(ctx, j, stageSet, nil, pipeline.Options{RunDir: dir, Only: "features"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("features: %v, want context.Canceled", err)
	}
	// bow looks at the context every 1024 reviews it is handed; the file
	// holds reviews of other items too.
	if !stopped || yielded >= total {
		t.Errorf("read %d of %d reviews after a cancel at %d (loop broken: %v)", yielded, total, at, stopped)
	}
}

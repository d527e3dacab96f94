package stages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"monomer/bow"
	"monomer/job"
	"monomer/pipeline"
	"monomer/schema"
)

// BowShard counts one shard of a bag-of-words experiment's candidate terms:
// the text work that scales out. With vocab_shards: n the DAG holds n nodes
// bow-shard-<i>-of-<n> between ingest and features (ShardedStage),
// each tagging only the reviews of items with index % n == i, run by the
// runner like any stage (lock, atomic commit, manifest, key), so an
// orchestrator runs them as independent tasks. Features then merges their
// counts into exactly the vocabulary one process would choose and
// vectorises against it.
type BowShard struct{}

var _ ShardedStage[bowShardParams] = BowShard{}

func (BowShard) Name() string   { return "bow-shard" }
func (BowShard) Deps() []string { return []string{"ingest"} }

// Shards is vocab_shards for a bag-of-words experiment, else none.
func (BowShard) Shards(e *job.Resolved) int {
	if e.Features != "bow" {
		return 0
	}
	return e.Settings.VocabShards.Get()
}

type bowShardParams struct {
	UseSummary bool `json:"use_summary"`
}

// Params: the counts depend on the text options only; the vocabulary size
// and sample are applied when features merges them. The reviews are
// ingest's table, an upstream output, so no raw file is named.
func (BowShard) Params(e *job.Resolved) bowShardParams {
	return bowShardParams{e.Settings.UseSummary.Get()}
}

// Output files of a shard's directory.
const (
	shardCountsFile = "counts.parquet"
	shardInfoFile   = "info.parquet"
)

func (BowShard) Run(ctx context.Context, env *pipeline.Env, p bowShardParams) (*pipeline.Result, error) {
	it, err := readItems(ctx, env.InDir)
	if err != nil {
		return nil, err
	}
	path, err := inputs(env.InDir).file("ingest", reviewsFile)
	if err != nil {
		return nil, err
	}
	tr := env.Track("tokenise and tag reviews", 0)
	docs := reviewDocs(ctx, path, it.rows(), p.UseSummary, tr.Add)
	// Counting reads no option but the worker count (the vocabulary's
	// size and sample apply when features merges the shards).
	c, err := bow.CountShard(ctx, docs, env.Shard, env.Shards, bow.Options{})
	tr.Done()
	if err != nil {
		return nil, err
	}
	m := len(c.Rows)
	term, level, count, nouns := make([]string, m), make([]int32, m), make([]int64, m), make([]int64, m)
	for k, r := range c.Rows {
		term[k], level[k], count[k], nouns[k] = r.Term, r.Level, r.Count, r.Nouns
	}
	nc, err := schema.Write(filepath.Join(env.OutDir, shardCountsFile), schema.BowCountsCols{Term: term, Level: level, Count: count, Nouns: nouns})
	if err != nil {
		return nil, err
	}
	ni, err := schema.Write(filepath.Join(env.OutDir, shardInfoFile), schema.BowShardCols{Shard: []int32{int32(c.Shard)}, Shards: []int32{int32(c.Shards)},
		Docs: []int64{c.Docs}, Tokens: []int64{c.Tokens}, LevelTokens: [][]int64{c.LevelTokens}, Fingerprint: []string{shardFingerprint(p.UseSummary, it.asin)}})
	if err != nil {
		return nil, err
	}
	return &pipeline.Result{
		Rows:  map[string]int64{"counts": nc, "info": ni},
		Stats: map[string]any{"docs": c.Docs, "tokens": c.Tokens},
	}, nil
}

// shardFingerprint identifies what a shard counted over: the items and the
// text options. The runner's keys already keep shards and features
// consistent; features checks it anyway, since it reads the shards'
// directories by name.
func shardFingerprint(useSummary bool, asins []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%v\x00%d\x00", useSummary, len(asins))
	for _, a := range asins {
		h.Write([]byte(a))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// readBowShards reads all n shards' counts of the experiment, written by
// the bow-shard nodes features depends on.
func readBowShards(ctx context.Context, env *pipeline.Env, asins []string, n int, useSummary bool) ([]*bow.Counts, error) {
	want := shardFingerprint(useSummary, asins)
	var out []*bow.Counts
	for i := range n {
		dir, err := env.InDir(pipeline.ShardName(BowShard{}.Name(), i, n))
		if err != nil {
			return nil, err
		}
		infoPath, countsPath := filepath.Join(dir, shardInfoFile), filepath.Join(dir, shardCountsFile)
		info, err := schema.ReadAll[schema.BowShardCols](ctx, infoPath)
		if err != nil {
			return nil, err
		}
		if len(info.Shard) != 1 || int(info.Shard[0]) != i || int(info.Shards[0]) != n {
			return nil, fmt.Errorf("stages: %s: not shard %d of %d", infoPath, i, n)
		}
		if info.Fingerprint[0] != want {
			return nil, fmt.Errorf("stages: %s: counted over other items or options than this run's", infoPath)
		}
		c := &bow.Counts{Shard: int(info.Shard[0]), Shards: int(info.Shards[0]), Docs: info.Docs[0], Tokens: info.Tokens[0], LevelTokens: info.LevelTokens[0]}
		counts, err := schema.ReadAll[schema.BowCountsCols](ctx, countsPath)
		if err != nil {
			return nil, err
		}
		c.Rows = make([]bow.CountRow, len(counts.Term))
		for k, term := range counts.Term {
			c.Rows[k] = bow.CountRow{Term: term, Level: counts.Level[k], Count: counts.Count[k], Nouns: counts.Nouns[k]}
		}
		out = append(out, c)
	}
	return out, nil
}

func bowOptions(p featuresParams) bow.Options {
	return bow.Options{VocabSize: p.VocabSize, SampleTokens: p.VocabSampleTokens}
}

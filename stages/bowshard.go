package stages

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"monomer/bow"
	"monomer/pipeline"
	"monomer/schema"
)

// Counting the bag-of-words candidates is the text work that scales out: an
// orchestrator runs `monomer bow-shard --shard i/n` as n independent tasks
// (each tags only the reviews of items with index % n == i), then the
// features stage, with vocab_shards: n, merges their counts into exactly the
// vocabulary one process would choose and vectorises against it.

// BowShardDir is where an experiment's shard counts live in the run
// directory (beside the stage directories).
func BowShardDir(runDir, exp string) string { return filepath.Join(runDir, exp, "bow-shards") }

func shardFiles(dir string, shard, n int) (counts, info string) {
	base := filepath.Join(dir, fmt.Sprintf("shard-%03d-of-%03d", shard, n))
	return base + ".counts.parquet", base + ".info.parquet"
}

// CountBowShard counts shard i of n of experiment e's review corpus and
// writes it under BowShardDir. It reads the ingest stage's items, which must
// exist. Files appear atomically (written aside, then renamed).
func CountBowShard(ctx context.Context, runDir string, e *pipeline.Resolved, shard, n int) (*bow.Counts, error) {
	if e.Features != "bow" {
		return nil, fmt.Errorf("%w: experiment %s has features %s, not bow", pipeline.ErrUsage, e.Name, e.Features)
	}
	it, err := readItems(filepath.Join(runDir, e.Name, "ingest"))
	if err != nil {
		return nil, fmt.Errorf("stages: bow-shard needs the ingest stage of %s: %w", e.Name, err)
	}
	rows := make(map[string]int32, len(it.asin))
	for i, a := range it.asin {
		rows[a] = int32(i)
	}
	next, stop := reviewDocs(ctx, e.Data.Reviews, rows, e.Settings.UseSummary)
	c, err := bow.CountShard(next, shard, n, bowOptions(e))
	stop()
	if err != nil {
		return nil, err
	}
	dir := BowShardDir(runDir, e.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	countsPath, infoPath := shardFiles(dir, shard, n)
	m := len(c.Rows)
	term, level, count, nouns := make([]string, m), make([]int32, m), make([]int64, m), make([]int64, m)
	for k, r := range c.Rows {
		term[k], level[k], count[k], nouns[k] = r.Term, r.Level, r.Count, r.Nouns
	}
	if err := writeAtomic(countsPath, func(p string) error {
		_, err := schema.Write(p, schema.BowCounts, term, level, count, nouns)
		return err
	}); err != nil {
		return nil, err
	}
	err = writeAtomic(infoPath, func(p string) error {
		_, err := schema.Write(p, schema.BowShard, []int32{int32(c.Shard)}, []int32{int32(c.Shards)},
			[]int64{c.Docs}, []int64{c.Tokens}, [][]int64{c.LevelTokens})
		return err
	})
	return c, err
}

// writeAtomic writes a file through a temporary name and renames it.
func writeAtomic(path string, write func(tmp string) error) error {
	tmp := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
	if err := write(tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// readBowShards reads all n shards' counts of an experiment.
func readBowShards(runDir, exp string, n int) ([]*bow.Counts, error) {
	dir := BowShardDir(runDir, exp)
	var out []*bow.Counts
	for i := range n {
		countsPath, infoPath := shardFiles(dir, i, n)
		if _, err := os.Stat(infoPath); err != nil {
			return nil, fmt.Errorf("stages: vocab_shards is %d but shard %d is missing (run `monomer bow-shard --experiment %s --shard %d/%d`): %w",
				n, i, exp, i, n, err)
		}
		info, err := schema.Open(infoPath)
		if err != nil {
			return nil, err
		}
		shard, e1 := info.Int32s("shard")
		shards, e2 := info.Int32s("shards")
		docs, e3 := info.Int64s("docs")
		tokens, e4 := info.Int64s("tokens")
		levels, e5 := info.Int64Lists("level_tokens")
		info.Release()
		for _, err := range []error{e1, e2, e3, e4, e5} {
			if err != nil {
				return nil, err
			}
		}
		if len(shard) != 1 {
			return nil, fmt.Errorf("stages: %s: %d rows, want 1", infoPath, len(shard))
		}
		c := &bow.Counts{Shard: int(shard[0]), Shards: int(shards[0]), Docs: docs[0], Tokens: tokens[0], LevelTokens: levels[0]}
		t, err := schema.Open(countsPath)
		if err != nil {
			return nil, err
		}
		term, e1 := t.Strings("term")
		level, e2 := t.Int32s("level")
		count, e3 := t.Int64s("count")
		nouns, e4 := t.Int64s("nouns")
		t.Release()
		for _, err := range []error{e1, e2, e3, e4} {
			if err != nil {
				return nil, err
			}
		}
		c.Rows = make([]bow.CountRow, len(term))
		for k := range term {
			c.Rows[k] = bow.CountRow{Term: term[k], Level: level[k], Count: count[k], Nouns: nouns[k]}
		}
		out = append(out, c)
	}
	return out, nil
}

func bowOptions(e *pipeline.Resolved) bow.Options {
	return bow.Options{VocabSize: e.Settings.VocabSize, SampleTokens: e.Settings.VocabSampleTokens, UseSummary: e.Settings.UseSummary}
}

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
		c := &bow.Counts{}
		err := schema.Read(infoPath, func(t *schema.Cols) error {
			shard, shards, docs, tokens, levels := t.Int32s("shard"), t.Int32s("shards"), t.Int64s("docs"), t.Int64s("tokens"), t.Int64Lists("level_tokens")
			if t.Err() == nil && len(shard) != 1 {
				return fmt.Errorf("stages: %s: %d rows, want 1", infoPath, len(shard))
			}
			if t.Err() == nil {
				c.Shard, c.Shards, c.Docs, c.Tokens, c.LevelTokens = int(shard[0]), int(shards[0]), docs[0], tokens[0], levels[0]
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		err = schema.Read(countsPath, func(t *schema.Cols) error {
			term, level, count, nouns := t.Strings("term"), t.Int32s("level"), t.Int64s("count"), t.Int64s("nouns")
			c.Rows = make([]bow.CountRow, len(term))
			for k := range term {
				c.Rows[k] = bow.CountRow{Term: term[k], Level: level[k], Count: count[k], Nouns: nouns[k]}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func bowOptions(e *pipeline.Resolved) bow.Options {
	return bow.Options{VocabSize: e.Settings.VocabSize, SampleTokens: e.Settings.VocabSampleTokens, UseSummary: e.Settings.UseSummary}
}

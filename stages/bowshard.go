package stages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	rows := it.rows()
	fp, err := shardFingerprint(e, it.asin)
	if err != nil {
		return nil, err
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
			[]int64{c.Docs}, []int64{c.Tokens}, [][]int64{c.LevelTokens}, []string{fp})
		return err
	})
	return c, err
}

// writeAtomic writes a file through a temporary name and renames it.
func writeAtomic(path string, write func(tmp string) error) error {
	tmp := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
	err := write(tmp)
	if err == nil {
		err = syncFile(tmp)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// shardFingerprint identifies what a shard counted: the experiment's items,
// the reviews file (by size and modification time: hashing tens of GB per
// shard task would cost more than the counting) and the text options. The
// features stage refuses shards whose fingerprint differs from its own.
func shardFingerprint(e *pipeline.Resolved, asins []string) (string, error) {
	fi, err := os.Stat(e.Data.Reviews)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00%v\x00%d\x00", e.Data.Reviews, fi.Size(), fi.ModTime().UnixNano(), e.Settings.UseSummary, len(asins))
	for _, a := range asins {
		h.Write([]byte(a))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// readBowShards reads all n shards' counts of an experiment, checking that
// they were counted over the same items, reviews and options as now.
func readBowShards(runDir string, e *pipeline.Resolved, asins []string, n int) ([]*bow.Counts, error) {
	exp := e.Name
	want, err := shardFingerprint(e, asins)
	if err != nil {
		return nil, err
	}
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
			fps := t.Strings("fingerprint")
			if t.Err() != nil {
				return nil
			}
			if len(shard) != 1 {
				return fmt.Errorf("stages: %s: %d rows, want 1", infoPath, len(shard))
			}
			if fps[0] != want {
				return fmt.Errorf("stages: %s is stale: counted over other items, reviews or options than this run's (rerun `monomer bow-shard --experiment %s --shard %d/%d`)",
					infoPath, exp, i, n)
			}
			c.Shard, c.Shards, c.Docs, c.Tokens, c.LevelTokens = int(shard[0]), int(shards[0]), docs[0], tokens[0], levels[0]
			return nil
		})
		if err != nil {
			return nil, err
		}
		err = schema.Read(countsPath, func(t *schema.Cols) error {
			term, level, count, nouns := t.Strings("term"), t.Int32s("level"), t.Int64s("count"), t.Int64s("nouns")
			if t.Err() != nil {
				return nil
			}
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

package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"monomer/pipeline"
	"monomer/stages"
)

var bowShardOpts struct {
	dirFlags
	experiment string
	shard      string
}

var cmdBowShard = &cobra.Command{
	Use:   "bow-shard JOB.yaml --experiment NAME --shard I/N",
	Short: "Count one shard of a bag-of-words experiment's candidate terms (scale-out of the features stage)",
	Long: `bow-shard tags and counts the reviews of the items whose index modulo N is I,
and writes the counts to DIR/<experiment>/bow-shards/. Run it for I = 0..N-1 as
independent tasks (they need the experiment's ingest stage), then run the job
with vocab_shards: N (e.g. --set experiments.NAME.settings.vocab_shards=N): the
features stage merges the shards into exactly the vocabulary one process
would choose.`,
	Args: exactArgs(1),
	RunE: func(cmd *cobra.Command, args []string) error {
		if bowShardOpts.experiment == "" {
			return fmt.Errorf("%w: bow-shard needs --experiment NAME", pipeline.ErrUsage)
		}
		i, n, err := parseShard(bowShardOpts.shard)
		if err != nil {
			return err
		}
		job, opts, err := bowShardOpts.load(args[0])
		if err != nil {
			return err
		}
		for k, e := range job.Experiments {
			if e.Name != bowShardOpts.experiment {
				continue
			}
			r := job.Resolve(k)
			c, err := stages.CountBowShard(cmd.Context(), opts.RunDir, &r, i, n)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "shard %d/%d of %s: %d reviews, %d tokens, %d count rows in %s\n",
				i, n, r.Name, c.Docs, c.Tokens, len(c.Rows), stages.BowShardDir(opts.RunDir, r.Name))
			return nil
		}
		return fmt.Errorf("%w: no experiment %q in %s", pipeline.ErrUsage, bowShardOpts.experiment, args[0])
	},
}

// parseShard reads "I/N" with 0 <= I < N.
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("%w: --shard %q: want I/N with 0 <= I < N", pipeline.ErrUsage, s)
	}
	return i, n, nil
}

func init() {
	bowShardOpts.register(cmdBowShard)
	cmdBowShard.Flags().StringVar(&bowShardOpts.experiment, "experiment", "", "the bag-of-words experiment (required)")
	cmdBowShard.Flags().StringVar(&bowShardOpts.shard, "shard", "", "I/N: this shard of N (required)")
	cmdRoot.AddCommand(cmdBowShard)
}

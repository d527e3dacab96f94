package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"monomer/job"
	"monomer/pipeline"
	"monomer/stages"
)

type bowShardFlags struct {
	dirFlags
	experiment string
	shard      string
}

func newBowShardCommand(g *globalOptions) *cobra.Command {
	var flags bowShardFlags
	cmd := &cobra.Command{
		Use:   "bow-shard JOB.yaml --experiment NAME --shard I/N",
		Short: "Run one bag-of-words shard node (alias of run --experiment NAME --only bow-shard-I-of-N)",
		Long: `bow-shard runs the DAG node that tags and counts the reviews of the items
whose index modulo N is I, exactly as "monomer run JOB --experiment NAME
--only bow-shard-I-of-N" does: with the runner's lock, atomic commit,
manifest and cache key, into DIR/<experiment>/bow-shard-I-of-N/. N must be
the experiment's vocab_shards (e.g. --set
experiments.NAME.settings.vocab_shards=N); the features stage depends on all
N shard nodes and merges them into exactly the vocabulary one process would
choose.

` + exitCodesHelp,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if flags.experiment == "" {
				return fmt.Errorf("%w: bow-shard needs --experiment NAME", pipeline.ErrUsage)
			}
			i, n, err := parseShard(flags.shard)
			if err != nil {
				return err
			}
			j, opts, err := flags.load(args[0])
			if err != nil {
				return err
			}
			k := slices.IndexFunc(j.Experiments, func(e job.Experiment) bool { return e.Name == flags.experiment })
			if k < 0 {
				return fmt.Errorf("%w: no experiment %q in %s", pipeline.ErrUsage, flags.experiment, args[0])
			}
			r := j.Resolve(k)
			if have := (stages.BowShard{}).Shards(&r); have != n {
				return fmt.Errorf("%w: --shard %d/%d: experiment %s has %d bag-of-words shards (features %s, vocab_shards %d)",
					pipeline.ErrUsage, i, n, r.Name, have, r.Features, r.Settings.VocabShards.Get())
			}
			opts.Experiments = []string{r.Name}
			opts.Only = pipeline.ShardName(stages.BowShard{}.Name(), i, n)
			opts.Logger = pipeline.NewLogger(os.Stderr, pipeline.IsTerminal(os.Stderr))
			opts.RunID, opts.Command, opts.ExitCode = flags.runID, os.Args, exitCode
			g, err := jobGraph(j)
			if err != nil {
				return err
			}
			_, err = pipeline.Run(cmd.Context(), g, opts)
			return err
		},
	}
	flags.register(cmd, g)
	cmd.Flags().StringVar(&flags.experiment, "experiment", "", "the bag-of-words experiment (required)")
	cmd.Flags().StringVar(&flags.shard, "shard", "", "I/N: this shard of N (required)")
	return cmd
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

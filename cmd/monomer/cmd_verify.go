package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"monomer/pipeline"
	"monomer/stages"
)

type verifyFlags struct {
	dirFlags
	experiments []string
	only        string
}

func newVerifyCommand(g *globalOptions) *cobra.Command {
	var flags verifyFlags
	cmd := &cobra.Command{
		Use:   "verify JOB.yaml [--run-dir DIR] [--run-id ID] [--experiment NAME]... [--only STAGE] [--set key=value]...",
		Short: "Rerun up-to-date stages into a scratch directory and check they reproduce their outputs",
		Long: `verify reruns the selected stages (all, or those of --experiment and
--only) into a scratch directory inside the run directory, each on the
recorded outputs of its upstream stages, and compares what they write with
the hashes their manifests record and with the files in the run directory.
It prints one line per stage and exits 0 when every output is reproduced,
or 1 naming the first stage, table, row and column that differs (as diff
does). Every selected stage must be up to date (run the job first). It takes
the run directory's lock like a run and writes nothing there but its
scratch directory, removed at the end. This is the reproducibility check for
CI or a scheduler.

Exit codes:
  0    every selected stage reproduced its outputs
  1    an output differs, or a selected stage is not up to date
  2    usage error, invalid job file, or an unreadable manifest or table
  4    run directory locked by another run
  130  interrupted (SIGINT or SIGTERM)`,
		Example: `  monomer verify jobs/demo.yaml --run-dir runs/demo
  monomer verify jobs/demo.yaml --run-dir runs/demo --experiment men-also_bought-image --only negatives`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			warnEnvSlips(cmd.ErrOrStderr())
			job, opts, err := flags.load(args[0])
			if err != nil {
				return err
			}
			opts.Experiments, opts.Only = flags.experiments, flags.only
			if pipeline.IsTerminal(os.Stderr) {
				opts.Tracker = pipeline.BarTracker(os.Stderr)
			} else {
				opts.Logger = pipeline.NewLogger(os.Stderr, false)
			}
			g, err := jobGraph(job)
			if err != nil {
				return err
			}
			opts.Compare = stages.CompareTables
			res, err := pipeline.Verify(cmd.Context(), g, opts)
			if res != nil {
				for i := range res.Steps {
					fmt.Fprintln(cmd.OutOrStdout(), res.Steps[i].String())
				}
			}
			if err != nil {
				return err
			}
			if s := res.First(); s != nil {
				return fmt.Errorf("verify: %s", s)
			}
			return nil
		},
	}
	flags.register(cmd, g)
	cmd.Flags().StringArrayVar(&flags.experiments, "experiment", nil, "verify only this experiment's stages (repeatable)")
	cmd.Flags().StringVar(&flags.only, "only", "", "verify only this stage")
	return cmd
}

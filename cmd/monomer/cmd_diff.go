package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"monomer/pipeline"
	"monomer/stages"
)

// errDiffer makes diff exit 1 when the run directories differ.
var errDiffer = errors.New("run directories differ")

type diffFlags struct {
	tolerance float64
}

func newDiffCommand() *cobra.Command {
	var flags diffFlags
	cmd := &cobra.Command{
		Use:   "diff DIR_A DIR_B [--tolerance X]",
		Short: "Compare two run directories table by table and file by file",
		Long: `diff compares every file under the two run directories, matched by
relative path: *.parquet tables cell by cell, every other output (the
report's HTML and PNGs, features/image.arrow) by its bytes, and every
manifest.json on its outputs' hashes (not times), stage by stage in DAG
order (upstream first); the run log is not compared. It
prints "identical" and exits 0, or the first difference (table, row counted
from 0, column, both values) and exits 1. A table or manifest it cannot read
is not a difference: diff names it and exits 2; so does a directory that is
not a run directory (no stage directory with a manifest.json).
With --tolerance X, floating-point cells compare within relative tolerance X
and the largest relative difference is reported.

` + exitCodesHelp,
		Example: `  monomer diff runs/gomaxprocs1 runs/gomaxprocs2
  monomer diff runs/demo/2026-01-01 runs/demo/2026-01-02 --tolerance 1e-6`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := pipeline.Diff(cmd.Context(), args[0], args[1], pipeline.DiffOptions{Tolerance: flags.tolerance, Compare: stages.CompareTables})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), res)
			if !res.Identical {
				return errDiffer
			}
			return nil
		},
	}
	cmd.Flags().Float64Var(&flags.tolerance, "tolerance", 0, "relative tolerance for floating-point cells (0: exact)")
	return cmd
}

package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"monomer/pipeline"
)

var statusOpts struct {
	dirFlags
	json bool
}

var cmdStatus = &cobra.Command{
	Use:   "status JOB.yaml [--run-dir DIR] [--run-id ID] [--set key=value]... [--json]",
	Short: "Show every stage as up to date, stale (and why) or missing",
	Long: `status compares every stage's manifest with the job file (and the same
--set and MONOMER_ overrides a run would get), the raw inputs' content and the
upstream outputs now, and prints each stage as "up to date", "stale: <what
changed>" or "missing". It reads only: no lock, no writes.

` + exitCodesHelp,
	Args: exactArgs(1),
	RunE: func(cmd *cobra.Command, args []string) error {
		job, opts, err := statusOpts.load(args[0])
		if err != nil {
			return err
		}
		exp, jobSt := stageSet()
		steps, err := pipeline.Plan(job, exp, jobSt, opts)
		if err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		if statusOpts.json {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(steps)
		}
		width := 0
		for _, s := range steps {
			width = max(width, len(s.ID))
		}
		for _, s := range steps {
			line := string(s.State)
			if len(s.Reasons) > 0 {
				line += ": " + strings.Join(s.Reasons, "; ")
			}
			if s.Note != "" {
				line += " (" + s.Note + ")"
			}
			fmt.Fprintf(w, "%-*s  %s\n", width, s.ID, line)
		}
		return nil
	},
}

func init() {
	statusOpts.register(cmdStatus)
	cmdStatus.Flags().BoolVar(&statusOpts.json, "json", false, "print the stages as JSON")
	cmdRoot.AddCommand(cmdStatus)
}

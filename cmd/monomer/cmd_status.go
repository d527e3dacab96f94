package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"monomer/pipeline"
)

type statusFlags struct {
	dirFlags
	json  bool
	check bool
}

// errNotCurrent makes status --check exit 1, like git diff --exit-code.
var errNotCurrent = errors.New("stages not up to date")

func newStatusCommand(g *globalOptions) *cobra.Command {
	var flags statusFlags
	cmd := &cobra.Command{
		Use:   "status JOB.yaml [--run-dir DIR] [--run-id ID] [--set key=value]... [--json]",
		Short: "Show every stage as up to date, stale (and why) or missing",
		Long: `status compares every stage's manifest with the job file (and the same
--set and MONOMER_ overrides a run would get), the raw inputs' content and the
upstream outputs now, and prints each stage as "up to date", "stale: <what
changed>" or "missing", noting "(restored from the store)" for a stage
whose outputs a run restored from the store rather than computed, and "(a
run restores it from the store)" for a stale or missing one whose outputs the
store holds. It reads only: no lock, no writes. When a run holds
the run directory now, a last line says which (pid, start time, host), since
the stages may change under you.

With --check it exits 1 when any selected stage is stale or missing, and 0
when all are up to date (plain status exits 0 either way), so a script or a
scheduler's sensor can ask "is there work to do?".

` + exitCodesHelp,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			warnEnvSlips(cmd.ErrOrStderr())
			job, opts, err := flags.load(args[0])
			if err != nil {
				return err
			}
			g, err := jobGraph(job)
			if err != nil {
				return err
			}
			steps, err := pipeline.Plan(g, opts)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			holders := pipeline.Holders(opts.RunDir)
			if flags.json {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				if err := enc.Encode(steps); err != nil {
					return err
				}
				for _, h := range holders { // stdout stays the steps' JSON
					fmt.Fprintf(cmd.ErrOrStderr(), "monomer: %s is held by %s\n", opts.RunDir, h)
				}
			} else {
				width := 0
				for _, s := range steps {
					width = max(width, len(s.ID))
				}
				for _, s := range steps {
					line := string(s.State)
					if len(s.Reasons) > 0 {
						line += ": " + strings.Join(s.Reasons, "; ")
					}
					var notes []string
					switch {
					case s.Restored && s.State == pipeline.UpToDate:
						notes = append(notes, "restored from the store")
					case s.Restored:
						notes = append(notes, "a run restores it from the store")
					}
					if s.Note != "" {
						notes = append(notes, s.Note)
					}
					if len(notes) > 0 {
						line += " (" + strings.Join(notes, "; ") + ")"
					}
					fmt.Fprintf(w, "%-*s  %s\n", width, s.ID, line)
				}
				for _, h := range holders {
					fmt.Fprintf(w, "locked: a run holds %s now: %s\n", opts.RunDir, h)
				}
			}
			if flags.check {
				n := 0
				for _, s := range steps {
					if s.State != pipeline.UpToDate {
						n++
					}
				}
				if n > 0 {
					return fmt.Errorf("%w: %d of %d", errNotCurrent, n, len(steps))
				}
			}
			return nil
		},
	}
	flags.register(cmd, g)
	cmd.Flags().BoolVar(&flags.json, "json", false, "print the stages as JSON")
	cmd.Flags().BoolVar(&flags.check, "check", false, "exit 1 when any selected stage is stale or missing")
	return cmd
}

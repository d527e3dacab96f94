package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"monomer/pipeline"
)

type planFlags struct {
	json bool
	sets []string
}

// planJSON is what `monomer plan --json` prints and jobs/airflow reads: the
// DAG as the binary builds it, so a scheduler's task list cannot drift.
type planJSON struct {
	Job         string     `json:"job"`
	JobFile     string     `json:"job_file"`
	Experiments []string   `json:"experiments"`
	Stages      []string   `json:"stages"`     // per experiment, in order
	JobStages   []string   `json:"job_stages"` // after every experiment
	Tasks       []planTask `json:"tasks"`
}

// planTask is one stage of one experiment (or a job-level stage).
type planTask struct {
	// ID is "<experiment>.<node>" or "<node>", where the node is the stage,
	// one shard of it (bow-shard-1-of-4) or one part (train.lmt, a model's
	// training): valid as an Airflow task id.
	ID         string `json:"id"`
	Experiment string `json:"experiment,omitempty"`
	Stage      string `json:"stage"`
	// Part is the part's name for a node of a Parted stage (the model,
	// for train).
	Part     string   `json:"part,omitempty"`
	Upstream []string `json:"upstream"` // task ids
	// Command is the subcommand, "run".
	Command string `json:"command"`
	// Args follow "monomer COMMAND JOB.yaml [--run-dir DIR --run-id ID]" to
	// run exactly this task.
	Args []string `json:"args"`
	// Dir is the task's output directory relative to the run directory.
	Dir string `json:"dir"`
}

func taskID(n *pipeline.Node) string {
	if n.Experiment == "" {
		return n.Name
	}
	return n.Experiment + "." + n.Name
}

func newPlanCommand() *cobra.Command {
	var flags planFlags
	cmd := &cobra.Command{
		Use:   "plan JOB.yaml [--json] [--set key=value]...",
		Short: "Print the job's DAG: experiments, stages and dependencies",
		Long: `plan prints the DAG the job file defines: one task per stage and
experiment (per model for train, per shard for bow-shard) plus the
job-level stages, each with its upstream tasks and the
"monomer run" arguments that run exactly it. With --json it is the input of
jobs/airflow/monomer_dag.py. It reads only the job file.

` + exitCodesHelp,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			warnEnvSlips(cmd.ErrOrStderr())
			j, err := loadJob(args[0], flags.sets)
			if err != nil {
				return err
			}
			g, err := jobGraph(j)
			if err != nil {
				return err
			}
			p := planJSON{Job: j.Name, JobFile: j.Path, Stages: g.ExpStages, JobStages: g.JobStages, Tasks: []planTask{}}
			for _, e := range j.Experiments {
				p.Experiments = append(p.Experiments, e.Name)
			}
			for _, n := range g.Nodes {
				t := planTask{ID: taskID(n), Experiment: n.Experiment, Stage: n.Stage, Part: n.Part, Upstream: []string{}, Command: "run", Dir: n.Dir("")}
				for _, d := range n.Deps {
					t.Upstream = append(t.Upstream, taskID(d))
				}
				if n.Experiment != "" {
					t.Args = []string{"--experiment", n.Experiment}
				}
				t.Args = append(t.Args, "--only", n.Name)
				p.Tasks = append(p.Tasks, t)
			}
			w := cmd.OutOrStdout()
			if flags.json {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(p)
			}
			for _, t := range p.Tasks {
				fmt.Fprintf(w, "%s <- %s\n", t.ID, strings.Join(t.Upstream, ", "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&flags.json, "json", false, "print the DAG as JSON")
	cmd.Flags().StringArrayVar(&flags.sets, "set", nil, "override a job setting, key=value (as for run)")
	return cmd
}

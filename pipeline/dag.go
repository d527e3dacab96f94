package pipeline

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Graph is a job's DAG: the experiment stages of every experiment, in job
// order and the stages' order, then the job-level stages.
type Graph struct {
	Job   *Job
	Nodes []*Node
	// ExpStages and JobStages are the stage names, in DAG order.
	ExpStages, JobStages []string
}

// Node is one stage of one experiment, or one job-level stage.
type Node struct {
	// ID is "<experiment>/<stage>", or "<stage>" for a job-level stage.
	ID string
	// Experiment is the experiment's name; "" for a job-level stage.
	Experiment string
	Stage      Stage
	Deps       []*Node
	exp        *Resolved
}

// Dir is the node's final directory under runDir.
func (n *Node) Dir(runDir string) string {
	return filepath.Join(runDir, n.Experiment, n.Stage.Name())
}

// Resolved is the node's resolved experiment; nil for a job-level stage.
func (n *Node) Resolved() *Resolved { return n.exp }

// NewGraph builds the DAG. expStages must be in an order where every stage
// comes after its Deps; so must jobStages. Errors are programming errors
// (unknown or cyclic deps, duplicate names) except a job whose experiment
// name collides with a job-level stage or a published file, which wraps
// ErrConfig.
func NewGraph(job *Job, expStages, jobStages []Stage) (*Graph, error) {
	g := &Graph{Job: job}
	seen := map[string]bool{}
	for _, s := range expStages {
		for _, d := range s.Deps() {
			if !slices.Contains(g.ExpStages, d) {
				return nil, fmt.Errorf("pipeline: stage %s depends on %q, which is not an earlier experiment stage", s.Name(), d)
			}
		}
		if seen[s.Name()] || !nameRE.MatchString(s.Name()) {
			return nil, fmt.Errorf("pipeline: stage name %q is invalid or used twice", s.Name())
		}
		seen[s.Name()] = true
		g.ExpStages = append(g.ExpStages, s.Name())
	}
	reserved := map[string]string{}
	for _, s := range jobStages {
		for _, d := range s.Deps() {
			if !slices.Contains(g.ExpStages, d) && !slices.Contains(g.JobStages, d) {
				return nil, fmt.Errorf("pipeline: job stage %s depends on %q, which is not an experiment stage or an earlier job stage", s.Name(), d)
			}
		}
		if seen[s.Name()] || !nameRE.MatchString(s.Name()) {
			return nil, fmt.Errorf("pipeline: stage name %q is invalid or used twice", s.Name())
		}
		seen[s.Name()] = true
		g.JobStages = append(g.JobStages, s.Name())
		reserved[s.Name()] = "the job-level stage " + s.Name()
		if p, ok := s.(Publisher); ok {
			for _, f := range p.Publish() {
				reserved[f] = "a file published by " + s.Name()
			}
		}
	}
	byID := map[string]*Node{}
	for i := range job.Experiments {
		r := job.Resolve(i)
		if what, ok := reserved[r.Name]; ok {
			return nil, fmt.Errorf("%w: %s: experiments[%d].name: %q is reserved for %s", ErrConfig, filepath.Base(job.Path), i, r.Name, what)
		}
		for _, s := range expStages {
			n := &Node{ID: r.Name + "/" + s.Name(), Experiment: r.Name, Stage: s, exp: &r}
			for _, d := range s.Deps() {
				n.Deps = append(n.Deps, byID[r.Name+"/"+d])
			}
			byID[n.ID] = n
			g.Nodes = append(g.Nodes, n)
		}
	}
	for _, s := range jobStages {
		n := &Node{ID: s.Name(), Stage: s}
		for _, d := range s.Deps() {
			if slices.Contains(g.JobStages, d) {
				n.Deps = append(n.Deps, byID[d])
				continue
			}
			for _, e := range job.Experiments {
				n.Deps = append(n.Deps, byID[e.Name+"/"+d])
			}
		}
		byID[n.ID] = n
		g.Nodes = append(g.Nodes, n)
	}
	return g, nil
}

// selection is the set of nodes a run with opts considers.
func (g *Graph) selection(opts *Options) (map[*Node]bool, error) {
	if opts.Only != "" && opts.From != "" {
		return nil, fmt.Errorf("%w: --only and --from exclude each other", ErrUsage)
	}
	all := append(slices.Clone(g.ExpStages), g.JobStages...)
	for _, s := range []string{opts.Only, opts.From} {
		if s != "" && !slices.Contains(all, s) {
			return nil, fmt.Errorf("%w: no stage %q (stages: %s)", ErrUsage, s, strings.Join(all, ", "))
		}
	}
	exps := map[string]bool{}
	for _, e := range opts.Experiments {
		found := false
		for _, je := range g.Job.Experiments {
			found = found || je.Name == e
		}
		if !found {
			var names []string
			for _, je := range g.Job.Experiments {
				names = append(names, je.Name)
			}
			return nil, fmt.Errorf("%w: no experiment %q in job %s (experiments: %s)", ErrUsage, e, g.Job.Name, strings.Join(names, ", "))
		}
		exps[e] = true
	}
	named := opts.Only
	if named == "" {
		named = opts.From
	}
	// Job-level stages read every experiment, so a run restricted to some
	// experiments leaves them out unless --only/--from names one.
	jobLevel := len(exps) == 0 || slices.Contains(g.JobStages, named)
	sel := map[*Node]bool{}
	for _, n := range g.Nodes {
		if n.Experiment == "" {
			sel[n] = jobLevel
		} else {
			sel[n] = len(exps) == 0 || exps[n.Experiment]
		}
	}
	switch {
	case opts.Only != "":
		for n := range sel {
			sel[n] = sel[n] && n.Stage.Name() == opts.Only
		}
	case opts.From != "":
		// Nodes are in topological order, so one pass marks descendants.
		down := map[*Node]bool{}
		for _, n := range g.Nodes {
			if n.Stage.Name() == opts.From {
				down[n] = true
			}
			for _, d := range n.Deps {
				if down[d] {
					down[n] = true
				}
			}
		}
		for n := range sel {
			sel[n] = sel[n] && down[n]
		}
	}
	return sel, nil
}

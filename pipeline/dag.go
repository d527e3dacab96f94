package pipeline

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"monomer/job"
)

// Graph is a job's DAG: the experiment stages of every experiment, in job
// order and the stages' order, then the job-level stages.
type Graph struct {
	Job   *job.Job
	Nodes []*Node
	// ExpStages and JobStages are the stage names, in DAG order.
	ExpStages, JobStages []string
}

// Node is one stage of one experiment (one shard of it, for a Sharded
// stage; one part, for a Parted stage), or one job-level stage.
type Node struct {
	// ID is "<experiment>/<name>", or "<name>" for a job-level stage.
	ID string
	// Name is the stage's name, ShardName for a shard or PartName for a
	// part: the node's directory and what --only may name.
	Name string
	// Experiment is the experiment's name; "" for a job-level stage.
	Experiment string
	Stage      Stage
	// Shard and Shards: this is shard Shard of Shards (Shards is 0 for a
	// stage that is not Sharded).
	Shard, Shards int
	// Part is the part's name for a node of a Parted stage, else "".
	Part string
	Deps []*Node
	exp  *job.Resolved
}

// Dir is the node's final directory under runDir.
func (n *Node) Dir(runDir string) string {
	return filepath.Join(runDir, n.Experiment, n.Name)
}

// Sharded is implemented by an experiment stage that runs as several
// nodes, one per shard, so a scheduler can run them on several machines:
// shard i of n is node "<stage>-<i>-of-<n>" (ShardName) with its own
// directory, key (holding i/n), lock, manifest and commit, and Env.Shard
// and Env.Shards tell Run which one it is. A stage that depends on a
// sharded stage depends on every shard, and reads shard i from
// env.InDir(ShardName(stage, i, n)). Shards returning 0 leaves the stage
// out of the experiment (and its dependents do not wait for it).
type Sharded interface {
	Shards(exp *job.Resolved) int
}

// ShardName is the node name (and directory) of shard i of n of stage.
func ShardName(stage string, i, n int) string {
	return fmt.Sprintf("%s-%d-of-%d", stage, i, n)
}

// Parted is implemented by an experiment stage that runs as one node per
// named part of the experiment, so each has its own key and a scheduler can
// run them on several machines: train has one part per learned model, node
// "train.lmt" (PartName). Each part node has its own directory, key (the
// part's name and KeyPart's parameters, in place of Key's), lock, manifest
// and commit, and Env.Part tells Run which part it is. As for Sharded, a
// stage depending on a parted stage depends on every part and reads part p
// from env.InDir(PartName(stage, p)); --only and --from naming the stage
// select all its parts, naming a node one part. Parts returning none leaves
// the stage out of the experiment.
type Parted interface {
	Parts(exp *job.Resolved) []string
	// KeyPart is Key for one part: the parameters and raw files that
	// part's Run reads, and nothing of the other parts.
	KeyPart(exp *job.Resolved, part string) (params any, files []string)
}

// JobKeyer is implemented by a job-level stage whose work depends on the
// job's settings: JobKey replaces Key (which gets a nil exp) and may read
// every experiment's resolved settings (Job.Resolve).
type JobKeyer interface {
	JobKey(job *job.Job) (params any, files []string)
}

// PartName is the node name (and directory) of part of stage.
func PartName(stage, part string) string {
	return stage + "." + part
}

// Resolved is the node's resolved experiment; nil for a job-level stage.
func (n *Node) Resolved() *job.Resolved { return n.exp }

// NewGraph builds the DAG. expStages must be in an order where every stage
// comes after its Deps; so must jobStages. Errors are programming errors
// (unknown or cyclic deps, duplicate names) except a job whose experiment
// name collides with a job-level stage or a published file, which wraps
// ErrConfig.
func NewGraph(j *job.Job, expStages, jobStages []Stage) (*Graph, error) {
	g := &Graph{Job: j}
	seen := map[string]bool{}
	for _, s := range expStages {
		for _, d := range s.Deps() {
			if !slices.Contains(g.ExpStages, d) {
				return nil, fmt.Errorf("pipeline: stage %s depends on %q, which is not an earlier experiment stage", s.Name(), d)
			}
		}
		if seen[s.Name()] || !job.ValidName(s.Name()) {
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
		if seen[s.Name()] || !job.ValidName(s.Name()) {
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
	// byStage: "<experiment>/<stage>" (or "<stage>") -> its nodes.
	byStage := map[string][]*Node{}
	for i := range j.Experiments {
		r := j.Resolve(i)
		if what, ok := reserved[r.Name]; ok {
			return nil, fmt.Errorf("%w: %s: experiments[%d].name: %q is reserved for %s", job.ErrConfig, filepath.Base(j.Path), i, r.Name, what)
		}
		for _, s := range expStages {
			var deps []*Node
			for _, d := range s.Deps() {
				deps = append(deps, byStage[r.Name+"/"+d]...)
			}
			key := r.Name + "/" + s.Name()
			if pt, ok := s.(Parted); ok {
				byStage[key] = []*Node{}
				for _, part := range pt.Parts(&r) {
					name := PartName(s.Name(), part)
					if !job.ValidName(name) {
						return nil, fmt.Errorf("pipeline: stage %s: part name %q is invalid", s.Name(), part)
					}
					n := &Node{ID: r.Name + "/" + name, Name: name, Experiment: r.Name, Stage: s, Part: part, Deps: deps, exp: &r}
					byStage[key] = append(byStage[key], n)
					g.Nodes = append(g.Nodes, n)
				}
				continue
			}
			sh, ok := s.(Sharded)
			if !ok {
				n := &Node{ID: key, Name: s.Name(), Experiment: r.Name, Stage: s, Deps: deps, exp: &r}
				byStage[key] = []*Node{n}
				g.Nodes = append(g.Nodes, n)
				continue
			}
			count := sh.Shards(&r)
			byStage[key] = []*Node{}
			for k := range count {
				name := ShardName(s.Name(), k, count)
				n := &Node{ID: r.Name + "/" + name, Name: name, Experiment: r.Name, Stage: s, Shard: k, Shards: count, Deps: deps, exp: &r}
				byStage[key] = append(byStage[key], n)
				g.Nodes = append(g.Nodes, n)
			}
		}
	}
	for _, s := range jobStages {
		n := &Node{ID: s.Name(), Name: s.Name(), Stage: s}
		for _, d := range s.Deps() {
			if slices.Contains(g.JobStages, d) {
				n.Deps = append(n.Deps, byStage[d]...)
				continue
			}
			for _, e := range j.Experiments {
				n.Deps = append(n.Deps, byStage[e.Name+"/"+d]...)
			}
		}
		byStage[n.ID] = []*Node{n}
		g.Nodes = append(g.Nodes, n)
	}
	return g, nil
}

// selectNodes builds the job's DAG and the nodes opts selects, as Run, Plan
// and Verify all start.
func selectNodes(job *job.Job, expStages, jobStages []Stage, opts *Options) (*Graph, map[*Node]bool, error) {
	g, err := NewGraph(job, expStages, jobStages)
	if err != nil {
		return nil, nil, err
	}
	sel, err := g.selection(opts)
	if err != nil {
		return nil, nil, err
	}
	return g, sel, nil
}

// selection is the set of nodes a run with opts considers.
func (g *Graph) selection(opts *Options) (map[*Node]bool, error) {
	if opts.Only != "" && opts.From != "" {
		return nil, fmt.Errorf("%w: --only and --from exclude each other", ErrUsage)
	}
	all := append(slices.Clone(g.ExpStages), g.JobStages...)
	for _, s := range []string{opts.Only, opts.From} {
		if s == "" || slices.Contains(all, s) || slices.ContainsFunc(g.Nodes, func(n *Node) bool { return n.Name == s }) {
			continue
		}
		return nil, fmt.Errorf("%w: no stage %q (stages: %s)", ErrUsage, s, strings.Join(all, ", "))
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
			sel[n] = sel[n] && (n.Stage.Name() == opts.Only || n.Name == opts.Only)
		}
	case opts.From != "":
		// Nodes are in topological order, so one pass marks descendants.
		down := map[*Node]bool{}
		for _, n := range g.Nodes {
			if n.Stage.Name() == opts.From || n.Name == opts.From {
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

package pipeline

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"monomer/pipeline/cache"
)

// Spec is what the runner is given to run: a neutral description of a
// job's DAG, which the layer above (package stages) expands from the job
// file into experiments × stages × shards × parts. The runner knows
// nothing else of the job.
type Spec struct {
	// Job is the job's name, in every log line and the run log.
	Job string
	// Experiments are the job's experiments, in job order: what
	// --experiment may name.
	Experiments []string
	// ExpStages are the stages of every experiment and JobStages the
	// job-level stages, each in an order where a stage comes after its
	// Deps: what --only and --from may name, and the order of the golden
	// records. A stage may have no node (bow-shard in an image-only job).
	ExpStages, JobStages []StageInfo
	// Nodes are the DAG's nodes, in experiment order and then the stages'
	// order (a node after the nodes it depends on), then the job-level
	// nodes.
	Nodes []*Node
}

// StageInfo declares one stage of the Spec.
type StageInfo struct {
	Name string
	// Deps are the upstream stages whose outputs the stage's nodes read.
	// For an experiment stage: stages of the same experiment. For a
	// job-level stage: an experiment stage's name means that stage of
	// every experiment of the job; a job-level stage's name means that
	// stage. A stage depending on a sharded or parted stage depends on
	// every shard or part.
	Deps []string
}

// Graph is a job's DAG, as NewGraph checked and linked it.
type Graph struct {
	// Job and Experiments are the Spec's.
	Job         string
	Experiments []string
	Nodes       []*Node
	// ExpStages and JobStages are the stage names, in DAG order.
	ExpStages, JobStages []string
	deps                 map[string][]string // stage -> its Deps
}

// Node is one stage of one experiment (one shard of it, for a sharded
// stage; one part, for a parted stage), or one job-level stage: what the
// runner keys, runs, locks and commits as one unit. The layer above fills
// every field but ID and Deps, which NewGraph sets.
type Node struct {
	// ID is "<experiment>/<name>", or "<name>" for a job-level stage.
	ID string
	// Name is the node's name: the stage's, ShardName for a shard or
	// PartName for a part; its directory and what --only may name.
	Name string
	// Stage is the name of the node's stage (a StageInfo of the Spec).
	Stage string
	// Experiment is the experiment's name; "" for a job-level stage.
	Experiment string
	// Seed seeds Env.RNG and is part of the key.
	Seed uint64
	// Shard and Shards: this is shard Shard of Shards of a sharded stage,
	// with its own directory (ShardName), key (holding Shard/Shards) and
	// commit, so a scheduler can run shards on several machines; Shards
	// is 0 for a stage that is not sharded.
	Shard, Shards int
	// Part is the part's name for a node of a parted stage (PartName;
	// train has one part per model), else "". The part's name is in its
	// key, beside the part's own parameters.
	Part string
	// Replica, when not "", makes the node one more run of its stage under
	// another seed (a job's seeds: "s2"): Name ends in "." + Replica, and
	// of an upstream stage that has nodes of the same Replica the node
	// reads those only (train.lmt.s2 reads split.s2), of any other stage
	// all its nodes. A node with Replica "" reads the nodes of Replica ""
	// of a stage that has them, so the first seed's nodes are wired as in
	// a job of one seed. Env.InDir serves a replica's upstream under the
	// upstream stage's own name.
	Replica string
	// Code is the stage's code version, in the key; see CodeVersion.
	Code cache.Code
	// Work is what the node computes, and Work.Key what it is keyed by.
	Work Stage
	// Config is written to the manifest as the resolved configuration the
	// node ran under (for a person reading it; the key holds what counts).
	Config any
	// Publish names outputs of a job-level node that also appear at the
	// run directory's root (report publishes metrics.parquet): the runner
	// hard-links (or copies) each from the node's directory to
	// RunDir/<name> through a temporary name and a rename, so the root
	// file is never partial.
	Publish []string
	// Preflight, if not nil, tells from the settings alone that the node
	// would fail for want of a resource (train's memory). Run calls it on
	// every selected node before it takes a lock or runs anything and
	// fails at once with its error (which should say the job asks for more
	// than the machine has); Plan reports it as the node's failure. It
	// must not read data files.
	Preflight func() error
	// After, if not nil, runs once the node's outputs are in place in dir,
	// its final directory, whether it ran, was restored from the store or
	// was up to date: it acts on what the stage decided (publish moves the
	// experiment's link in the run root), so a cached node acts again. Its
	// error fails the node, but not the nodes downstream: the outputs they
	// read are in place and recorded, so they run (the report marks an
	// experiment whose publish gate refused the run).
	After func(dir string) error
	// Deps are the nodes this one reads, set by NewGraph.
	Deps []*Node
}

// Dir is the node's final directory under runDir.
func (n *Node) Dir(runDir string) string {
	return filepath.Join(runDir, n.Experiment, n.Name)
}

// ShardName is the node name (and directory) of shard i of n of stage. A
// stage depending on a sharded stage reads shard i from
// env.InDir(ShardName(stage, i, n)).
func ShardName(stage string, i, n int) string {
	return fmt.Sprintf("%s-%d-of-%d", stage, i, n)
}

// PartName is the node name (and directory) of part of stage. A stage
// depending on a parted stage reads part p from env.InDir(PartName(stage,
// p)); --only and --from naming the stage select all its parts, naming a
// node one part.
func PartName(stage, part string) string {
	return stage + "." + part
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// validName reports whether name can be one directory of the run
// directory: letters, digits, '.', '_' and '-', not starting with a
// punctuation mark (the rule of job and experiment names too).
func validName(name string) bool { return nameRE.MatchString(name) }

// NewGraph checks spec and links its nodes to the nodes they depend on.
// Errors are programming errors of the layer above: unknown or cyclic
// deps, duplicate or invalid names, a node of an unknown stage or
// experiment, nodes out of order.
func NewGraph(spec Spec) (*Graph, error) {
	g := &Graph{Job: spec.Job, Experiments: spec.Experiments, deps: map[string][]string{}}
	jobLevel := map[string]bool{}
	for i, list := range [][]StageInfo{spec.ExpStages, spec.JobStages} {
		for _, s := range list {
			for _, d := range s.Deps {
				_, known := g.deps[d]
				if !known || (i == 0 && jobLevel[d]) {
					return nil, fmt.Errorf("pipeline: stage %s depends on %q, which is not an earlier stage it may read", s.Name, d)
				}
			}
			if _, dup := g.deps[s.Name]; dup || !validName(s.Name) {
				return nil, fmt.Errorf("pipeline: stage name %q is invalid or used twice", s.Name)
			}
			g.deps[s.Name] = s.Deps
			if i == 0 {
				g.ExpStages = append(g.ExpStages, s.Name)
			} else {
				g.JobStages = append(g.JobStages, s.Name)
				jobLevel[s.Name] = true
			}
		}
	}
	exps := map[string]bool{}
	for _, e := range spec.Experiments {
		if exps[e] || !validName(e) {
			return nil, fmt.Errorf("pipeline: experiment name %q is invalid or used twice", e)
		}
		exps[e] = true
	}
	// byStage: "<experiment>/<stage>" (or "<stage>") -> its nodes.
	byStage := map[string][]*Node{}
	at := map[*Node]int{}
	for i, n := range spec.Nodes {
		_, known := g.deps[n.Stage]
		switch {
		case !known:
			return nil, fmt.Errorf("pipeline: node %s/%s of an unknown stage %q", n.Experiment, n.Name, n.Stage)
		case jobLevel[n.Stage] != (n.Experiment == ""):
			return nil, fmt.Errorf("pipeline: node %s of stage %s: experiment %q", n.Name, n.Stage, n.Experiment)
		case n.Experiment != "" && !exps[n.Experiment]:
			return nil, fmt.Errorf("pipeline: node %s of an unknown experiment %q", n.Name, n.Experiment)
		case !validName(n.Name) || !strings.HasPrefix(n.Name, n.Stage):
			return nil, fmt.Errorf("pipeline: stage %s: node name %q is invalid", n.Stage, n.Name)
		case n.Replica != "" && (!validName(n.Replica) || !strings.HasSuffix(n.Name, "."+n.Replica)):
			return nil, fmt.Errorf("pipeline: stage %s: node %q of replica %q does not end in its replica's name", n.Stage, n.Name, n.Replica)
		}
		n.ID = n.Name
		key := n.Stage
		if n.Experiment != "" {
			n.ID = n.Experiment + "/" + n.Name
			key = n.Experiment + "/" + n.Stage
		}
		if _, dup := at[n]; dup || slices.ContainsFunc(byStage[key], func(o *Node) bool { return o.ID == n.ID }) {
			return nil, fmt.Errorf("pipeline: node %s is listed twice", n.ID)
		}
		at[n] = i
		byStage[key] = append(byStage[key], n)
	}
	for _, n := range spec.Nodes {
		n.Deps = nil
		for _, d := range g.deps[n.Stage] {
			switch {
			case n.Experiment != "":
				n.Deps = append(n.Deps, sameReplica(byStage[n.Experiment+"/"+d], n.Replica)...)
			case jobLevel[d]:
				n.Deps = append(n.Deps, byStage[d]...)
			default:
				for _, e := range spec.Experiments {
					n.Deps = append(n.Deps, byStage[e+"/"+d]...)
				}
			}
		}
		for _, d := range n.Deps {
			if at[d] > at[n] {
				return nil, fmt.Errorf("pipeline: node %s comes before %s, which it depends on", n.ID, d.ID)
			}
		}
		g.Nodes = append(g.Nodes, n)
	}
	return g, nil
}

// sameReplica are the nodes of ups (one upstream stage's) of replica r, or
// all of ups when none is: a stage run once per seed reads its own seed's
// upstream, and the one node of a stage that is not (ingest) otherwise.
func sameReplica(ups []*Node, r string) []*Node {
	var out []*Node
	for _, u := range ups {
		if u.Replica == r {
			out = append(out, u)
		}
	}
	if out == nil {
		return ups
	}
	return out
}

// StageDeps are the Deps of the stage named stage.
func (g *Graph) StageDeps(stage string) []string { return g.deps[stage] }

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
		if !slices.Contains(g.Experiments, e) {
			return nil, fmt.Errorf("%w: no experiment %q in job %s (experiments: %s)", ErrUsage, e, g.Job, strings.Join(g.Experiments, ", "))
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
			sel[n] = sel[n] && (n.Stage == opts.Only || n.Name == opts.Only)
		}
	case opts.From != "":
		// Nodes are in topological order, so one pass marks descendants.
		down := map[*Node]bool{}
		for _, n := range g.Nodes {
			if n.Stage == opts.From || n.Name == opts.From {
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

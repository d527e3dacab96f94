package stages

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"monomer/job"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// A stage declares its parameters as one struct P, built once from the
// resolved job by Params (PartParams for a part of a parted stage). The
// runner hashes that value into the node's cache key (as JSON, with the
// content of the raw files P names, see RawFiles) and hands the same value
// to Run, which sees nothing else of the job: pipeline.Env holds no
// settings and a stage type has no fields. So a setting Run reads is a
// field of P, and every field of P is in the key (TestParamsAreTheKey).

// ExpStage is a stage of every experiment, one node each.
type ExpStage[P any] interface {
	Name() string
	Deps() []string
	// Params are the parameters of experiment e's node.
	Params(e *job.Resolved) P
	// Run computes the node from p; see pipeline.Stage.
	Run(ctx context.Context, env *pipeline.Env, p P) (*pipeline.Result, error)
}

// ShardedStage is an experiment stage run as Shards(e) nodes, shard i of
// n named pipeline.ShardName(stage, i, n), each with its own directory,
// key (the shard's i/n beside P), lock and commit, so a scheduler can run
// them on several machines; env.Shard and env.Shards tell Run which one it
// is. Shards returning 0 leaves the stage out of the experiment (and its
// dependents do not wait for it).
type ShardedStage[P any] interface {
	ExpStage[P]
	Shards(e *job.Resolved) int
}

// PartedStage is an experiment stage run as one node per named part of
// the experiment (train: one per model, node train.<model>), each keyed by
// its part's name and PartParams alone, so a change to one part reruns
// that part only; env.Part tells Run which part it is. Parts returning
// none leaves the stage out of the experiment.
type PartedStage[P any] interface {
	Name() string
	Deps() []string
	Parts(e *job.Resolved) []string
	// PartParams are the parameters of part's node: what that part's Run
	// reads, and nothing of the other parts.
	PartParams(e *job.Resolved, part string) P
	Run(ctx context.Context, env *pipeline.Env, p P) (*pipeline.Result, error)
	// PreflightPart tells from the settings alone that the part would fail
	// for want of a resource (pipeline.Node.Preflight), or returns nil.
	PreflightPart(e *job.Resolved, part string) error
}

// JobStage is a job-level stage, run once after every experiment. Its
// parameters come from the whole job, including the experiments it reads
// (env.StageDir names them).
type JobStage[P any] interface {
	Name() string
	Deps() []string
	Params(j *job.Job) P
	Run(ctx context.Context, env *pipeline.Env, p P) (*pipeline.Result, error)
	// Publish names outputs also put at the run directory's root
	// (pipeline.Node.Publish).
	Publish() []string
}

// RawFiles is implemented by parameters naming raw input files: Files
// returns their paths, whose content (not the path) the key hashes, so a
// moved data directory reruns nothing. Path fields are therefore left out
// of P's JSON, and only they may be: every other field must be keyed.
type RawFiles interface {
	Files() []string
}

// Stage is one entry of Experiment or Job: a typed stage bound to how its
// nodes are made (Each, Sharded, Parted, JobLevel). Graph expands the
// entries into the runner's nodes.
type Stage interface {
	Name() string
	Deps() []string
	// nodes are the stage's nodes for experiment e of j, or for the job
	// (e nil) for a job-level stage.
	nodes(j *job.Job, e *job.Resolved) []*pipeline.Node
}

// Each makes s one node per experiment.
func Each[P any](s ExpStage[P]) Stage { return each[P]{s} }

// Sharded makes s one node per shard of each experiment.
func Sharded[P any](s ShardedStage[P]) Stage { return sharded[P]{s} }

// Parted makes s one node per part of each experiment.
func Parted[P any](s PartedStage[P]) Stage { return parted[P]{s} }

// JobLevel makes s one node for the job.
func JobLevel[P any](s JobStage[P]) Stage { return jobLevel[P]{s} }

type (
	each[P any]     struct{ ExpStage[P] }
	sharded[P any]  struct{ ShardedStage[P] }
	parted[P any]   struct{ PartedStage[P] }
	jobLevel[P any] struct{ JobStage[P] }
)

// An ExpStage may leave an experiment out (active false: publish without a
// publish: block) and act once its outputs are in place (after, see
// pipeline.Node.After).
type (
	optionalStage interface{ active(e *job.Resolved) bool }
	afterStage    interface {
		after(e *job.Resolved) func(dir string) error
	}
)

func (s each[P]) nodes(_ *job.Job, e *job.Resolved) []*pipeline.Node {
	if o, ok := s.ExpStage.(optionalStage); ok && !o.active(e) {
		return nil
	}
	n := expNode(s.ExpStage, e, s.Name(), bind(s.Params(e), s.Run))
	if a, ok := s.ExpStage.(afterStage); ok {
		n.After = a.after(e)
	}
	return []*pipeline.Node{n}
}

func (s sharded[P]) nodes(_ *job.Job, e *job.Resolved) []*pipeline.Node {
	n := s.Shards(e)
	var out []*pipeline.Node
	for i := range n {
		node := expNode(s.ShardedStage, e, pipeline.ShardName(s.Name(), i, n), bind(s.Params(e), s.Run))
		node.Shard, node.Shards = i, n
		out = append(out, node)
	}
	return out
}

func (s parted[P]) nodes(_ *job.Job, e *job.Resolved) []*pipeline.Node {
	var out []*pipeline.Node
	for _, part := range s.Parts(e) {
		node := expNode(s.PartedStage, e, pipeline.PartName(s.Name(), part), bind(s.PartParams(e, part), s.Run))
		node.Part = part
		node.Preflight = func() error { return s.PreflightPart(e, part) }
		out = append(out, node)
	}
	return out
}

func (s jobLevel[P]) nodes(j *job.Job, _ *job.Resolved) []*pipeline.Node {
	seed := j.SeedList()[0]
	return []*pipeline.Node{{Name: s.Name(), Stage: s.Name(), Seed: seed, Code: codeOf(s.JobStage),
		Work: bind(s.Params(j), s.Run), Config: j, Publish: s.Publish()}}
}

// expNode is a node of experiment e.
func expNode(s interface{ Name() string }, e *job.Resolved, name string, work pipeline.Stage) *pipeline.Node {
	return &pipeline.Node{Name: name, Stage: s.Name(), Experiment: e.Name, Seed: e.Seed, Code: codeOf(s), Work: work, Config: e}
}

// bound is a stage's Run bound to the parameters of one node: the value
// Key gives the runner to hash is the value Run gets.
type bound[P any] struct {
	p   P
	run func(context.Context, *pipeline.Env, P) (*pipeline.Result, error)
}

func bind[P any](p P, run func(context.Context, *pipeline.Env, P) (*pipeline.Result, error)) pipeline.Stage {
	return bound[P]{p, run}
}

func (b bound[P]) Key() (any, []string) { return keyOf(b.p) }

// keyOf is what the runner hashes for parameters p: p itself (as JSON)
// and the content of the raw files it names.
func keyOf(p any) (any, []string) {
	if f, ok := p.(RawFiles); ok {
		return p, f.Files()
	}
	return p, nil
}

func (b bound[P]) Run(ctx context.Context, env *pipeline.Env) (*pipeline.Result, error) {
	return b.run(ctx, env, b.p)
}

// codeOf is the stage's code version (versions.go): its Version, whether
// it is GoDependent, its NumericEnv. A stage without a Version is keyed by
// the executable's hash.
func codeOf(s any) cache.Code {
	var c cache.Code
	if v, ok := s.(interface{ Version() string }); ok {
		c.Version = v.Version()
	}
	if g, ok := s.(interface{ GoDependent() bool }); ok {
		c.GoDependent = g.GoDependent()
	}
	if n, ok := s.(interface{ NumericEnv() string }); ok {
		c.NumericEnv = n.NumericEnv()
	}
	return c
}

// A perSeed stage runs once per seed of the job's seeds (job.Job.Seeds):
// the nodes of seeds after the first are replicas (pipeline.Node.Replica)
// named <node>.<job.SeedTag>, reading their own seed's upstream.
type perSeed interface{ perSeed() }

func (Negatives) perSeed() {}
func (Split) perSeed()     {}
func (Train) perSeed()     {}
func (Evaluate) perSeed()  {}
func (Recommend) perSeed() {}

// seeded reports whether s is a perSeed stage.
func seeded(s Stage) bool {
	t, ok := s.(interface{ typed() any })
	if !ok {
		return false
	}
	_, ok = t.typed().(perSeed)
	return ok
}

// typed is the stage a binding wraps.
func (s each[P]) typed() any     { return s.ExpStage }
func (s sharded[P]) typed() any  { return s.ShardedStage }
func (s parted[P]) typed() any   { return s.PartedStage }
func (s jobLevel[P]) typed() any { return s.JobStage }

// Graph expands the job into the runner's DAG: expStages for every
// experiment, in job order, then jobStages. An experiment named like a
// job-level stage or a file one publishes is an error wrapping
// job.ErrConfig; the other errors are programming errors.
func Graph(j *job.Job, expStages, jobStages []Stage) (*pipeline.Graph, error) {
	spec := pipeline.Spec{Job: j.Name}
	for _, s := range expStages {
		spec.ExpStages = append(spec.ExpStages, pipeline.StageInfo{Name: s.Name(), Deps: s.Deps()})
	}
	var jobNodes []*pipeline.Node
	// Names beside the experiments' directories in the run directory, by
	// lower case: on a case-insensitive file system Report is report.
	reserved := map[string]string{strings.ToLower(pipeline.RunLogName): "the run log"}
	for _, s := range jobStages {
		spec.JobStages = append(spec.JobStages, pipeline.StageInfo{Name: s.Name(), Deps: s.Deps()})
		reserved[strings.ToLower(s.Name())] = "the job-level stage " + s.Name()
		for _, n := range s.nodes(j, nil) {
			for _, f := range n.Publish {
				reserved[strings.ToLower(f)] = "a file published by " + s.Name()
			}
			jobNodes = append(jobNodes, n)
		}
	}
	for i := range j.Experiments {
		r := j.Resolve(i)
		if what, ok := reserved[strings.ToLower(r.Name)]; ok {
			return nil, fmt.Errorf("%w: %s: experiments[%d].name: %q is reserved for %s", job.ErrConfig, filepath.Base(j.Path), i, r.Name, what)
		}
		spec.Experiments = append(spec.Experiments, r.Name)
		for _, s := range expStages {
			spec.Nodes = append(spec.Nodes, s.nodes(j, &r)...)
			if !seeded(s) {
				continue
			}
			for _, seed := range j.SeedList()[1:] {
				rs := r
				rs.Seed = seed
				tag := j.SeedTag(seed)
				for _, n := range s.nodes(j, &rs) {
					n.Name += "." + tag
					n.Replica = tag
					spec.Nodes = append(spec.Nodes, n)
				}
			}
		}
	}
	spec.Nodes = append(spec.Nodes, jobNodes...)
	return pipeline.NewGraph(spec)
}

// CompareTables is the table comparison of diff and verify
// (pipeline.CompareFunc): schema.Compare, cell by cell.
func CompareTables(ctx context.Context, a, b string, tol float64) (*pipeline.TableDiff, error) {
	d, err := schema.Compare(ctx, a, b, tol)
	if err != nil {
		return nil, err
	}
	return &pipeline.TableDiff{Row: d.Row, Column: d.Column, A: d.A, B: d.B, Detail: d.Detail,
		Largest: d.Largest, LargestRow: d.LargestRow, LargestColumn: d.LargestColumn, LargestA: d.LargestA, LargestB: d.LargestB}, nil
}

package pipeline

import (
	"context"

	"monomer/job"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// The runner knows nothing of the job file; its tests still take their
// experiments and settings from one, as package stages does: tStage is a
// fake stage declared against the job, and expand turns a job and fake
// stages into the neutral Spec the runner takes (experiments × stages ×
// shards × parts), the way stages.Graph does for the real ones.

// tStage is a fake stage: Key reads the resolved experiment (nil for a
// job-level stage) and Run gets a tEnv, which adds the job to the Env.
type tStage interface {
	Name() string
	Deps() []string
	Key(e *job.Resolved) (any, []string)
	Run(ctx context.Context, env *tEnv) (*Result, error)
}

// tEnv is the Env of a fake stage, with the job it was expanded from.
type tEnv struct {
	*Env
	Exp *job.Resolved
	Job *job.Job
}

// The optional declarations of a fake stage.
type (
	tParted interface {
		Parts(e *job.Resolved) []string
		KeyPart(e *job.Resolved, part string) (any, []string)
	}
	tSharded  interface{ Shards(e *job.Resolved) int }
	tJobKeyer interface {
		JobKey(j *job.Job) (any, []string)
	}
	tPublisher  interface{ Publish() []string }
	tPreflight  interface{ Preflight(e *job.Resolved) error }
	tVersioned  interface{ Version() string }
	tGoDep      interface{ GoDependent() bool }
	tNumericEnv interface{ NumericEnv() string }
)

// tWork is a fake stage bound to one node.
type tWork struct {
	s    tStage
	e    *job.Resolved
	j    *job.Job
	part string
}

func (w tWork) Key() (any, []string) {
	if p, ok := w.s.(tParted); ok && w.part != "" {
		return p.KeyPart(w.e, w.part)
	}
	if k, ok := w.s.(tJobKeyer); ok && w.e == nil {
		return k.JobKey(w.j)
	}
	return w.s.Key(w.e)
}

func (w tWork) Run(ctx context.Context, env *Env) (*Result, error) {
	return w.s.Run(ctx, &tEnv{Env: env, Exp: w.e, Job: w.j})
}

func codeOf(s tStage) cache.Code {
	var c cache.Code
	if v, ok := s.(tVersioned); ok {
		c.Version = v.Version()
	}
	if g, ok := s.(tGoDep); ok {
		c.GoDependent = g.GoDependent()
	}
	if n, ok := s.(tNumericEnv); ok {
		c.NumericEnv = n.NumericEnv()
	}
	return c
}

// expand is the job's DAG of the fake stages.
func expand(j *job.Job, exp, jobSt []tStage) (*Graph, error) {
	spec := Spec{Job: j.Name}
	for _, s := range exp {
		spec.ExpStages = append(spec.ExpStages, StageInfo{Name: s.Name(), Deps: s.Deps()})
	}
	for _, s := range jobSt {
		spec.JobStages = append(spec.JobStages, StageInfo{Name: s.Name(), Deps: s.Deps()})
	}
	for i := range j.Experiments {
		r := j.Resolve(i)
		spec.Experiments = append(spec.Experiments, r.Name)
		for _, s := range exp {
			node := func(name string, part string) *Node {
				n := &Node{Name: name, Stage: s.Name(), Experiment: r.Name, Seed: r.Seed, Code: codeOf(s),
					Work: tWork{s: s, e: &r, j: j, part: part}, Part: part, Config: &r}
				if p, ok := s.(tPreflight); ok && part == "" {
					n.Preflight = func() error { return p.Preflight(&r) }
				}
				return n
			}
			switch st := s.(type) {
			case tParted:
				for _, part := range st.Parts(&r) {
					spec.Nodes = append(spec.Nodes, node(PartName(s.Name(), part), part))
				}
			case tSharded:
				n := st.Shards(&r)
				for k := range n {
					nd := node(ShardName(s.Name(), k, n), "")
					nd.Shard, nd.Shards = k, n
					spec.Nodes = append(spec.Nodes, nd)
				}
			default:
				spec.Nodes = append(spec.Nodes, node(s.Name(), ""))
			}
		}
	}
	seed := j.Seed
	if seed == 0 {
		seed = 1
	}
	for _, s := range jobSt {
		n := &Node{Name: s.Name(), Stage: s.Name(), Seed: seed, Code: codeOf(s), Work: tWork{s: s, j: j}, Config: j}
		if p, ok := s.(tPublisher); ok {
			n.Publish = p.Publish()
		}
		spec.Nodes = append(spec.Nodes, n)
	}
	return NewGraph(spec)
}

// runJob, planJob, verifyJob and recordJob expand the job and call Run,
// Plan, Verify and RecordStages.
func runJob(ctx context.Context, j *job.Job, exp, jobSt []tStage, opts Options) (*Summary, error) {
	g, err := expand(j, exp, jobSt)
	if err != nil {
		return nil, err
	}
	return Run(ctx, g, opts)
}

func planJob(j *job.Job, exp, jobSt []tStage, opts Options) ([]Step, error) {
	g, err := expand(j, exp, jobSt)
	if err != nil {
		return nil, err
	}
	return Plan(g, opts)
}

func verifyJob(ctx context.Context, j *job.Job, exp, jobSt []tStage, opts Options) (*VerifyResult, error) {
	g, err := expand(j, exp, jobSt)
	if err != nil {
		return nil, err
	}
	opts.Compare = compareTables
	return Verify(ctx, g, opts)
}

func recordJob(j *job.Job, exp, jobSt []tStage, dir string) ([]cache.StageRecord, error) {
	g, err := expand(j, exp, jobSt)
	if err != nil {
		return nil, err
	}
	return RecordStages(g, dir)
}

// compareTables is the table comparison the CLI passes in (stages'
// CompareTables), for the tests that locate a differing cell.
func compareTables(ctx context.Context, a, b string, tol float64) (*TableDiff, error) {
	d, err := schema.Compare(ctx, a, b, tol)
	if err != nil {
		return nil, err
	}
	return &TableDiff{Row: d.Row, Column: d.Column, A: d.A, B: d.B, Detail: d.Detail,
		Largest: d.Largest, LargestRow: d.LargestRow, LargestColumn: d.LargestColumn, LargestA: d.LargestA, LargestB: d.LargestB}, nil
}

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"monomer/pipeline/cache"
)

// VerifyStep is one stage's verdict in Verify.
type VerifyStep struct {
	ID string `json:"id"`
	// Match: the rerun wrote every output with the hash its manifest
	// records. Otherwise Diff says where the first difference is.
	Match   bool   `json:"match"`
	Outputs int    `json:"outputs"`
	Diff    string `json:"diff,omitempty"`
	// Table, Row (-1 when not a cell) and Column locate the first differing
	// cell of a Parquet output; A is the run directory's value, B the
	// rerun's.
	Table  string `json:"table,omitempty"`
	Row    int64  `json:"row"`
	Column string `json:"column,omitempty"`
	A      string `json:"a,omitempty"`
	B      string `json:"b,omitempty"`
}

// VerifyResult is what Verify found, stage by stage in DAG order.
type VerifyResult struct {
	Steps []VerifyStep
}

// First returns the first stage whose rerun differed, or nil.
func (r *VerifyResult) First() *VerifyStep {
	for i := range r.Steps {
		if !r.Steps[i].Match {
			return &r.Steps[i]
		}
	}
	return nil
}

// Verify reruns the selected stages (opts.Experiments and opts.Only; From
// and Force are ignored) into a scratch directory and compares their
// outputs with the hashes their manifests record, like Go's
// GODEBUG=gocacheverify=1. Each stage reads the recorded outputs of its
// upstream stages, so every stage is checked on its own. Every selected
// stage's key must match its manifest (one that is stale has nothing
// recorded to reproduce: an error); its outputs on disk are compared too,
// so an output edited after the run is found. Verify takes the locks a run of the same
// selection would, so no run commits underneath it, and writes nothing to
// the run directory but its scratch directory (.verify.tmp-<pid>, removed
// at the end, or by the next run if killed). A manifest or table that
// cannot be read is an error wrapping ErrUsage.
func Verify(ctx context.Context, g *Graph, opts Options) (*VerifyResult, error) {
	if opts.RunDir == "" {
		return nil, fmt.Errorf("%w: no run directory", ErrUsage)
	}
	if opts.From != "" {
		return nil, fmt.Errorf("%w: verify takes --only, not --from", ErrUsage)
	}
	if fi, err := os.Stat(opts.RunDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: run directory %s does not exist", ErrUsage, opts.RunDir)
	}
	sel, err := g.selection(&opts)
	if err != nil {
		return nil, err
	}
	log := opts.logger()
	locks, err := lockFor(g, sel, &opts, log)
	if err != nil {
		return nil, err
	}
	defer releaseAll(locks)
	scratch := filepath.Join(opts.RunDir, fmt.Sprintf(".verify%s%d", tmpMark, os.Getpid()))
	if err := os.RemoveAll(scratch); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	defer os.RemoveAll(scratch)

	hashes := cache.OpenHashCache(opts.hashCachePath())
	hashes.ReadOnly() // verify writes nothing but its scratch directory
	r := &runner{g: g, opts: &opts, log: log, hashes: hashes, sum: &Summary{}}
	res := &VerifyResult{}
	for _, n := range g.Nodes {
		if !sel[n] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		m, err := r.upToDateKey(n)
		if err != nil {
			return res, err
		}
		log.Info("stage verify", attrs(n)...)
		step, err := r.verifyNode(ctx, n, m, filepath.Join(scratch, n.Experiment, n.Name))
		if err != nil {
			return res, err
		}
		res.Steps = append(res.Steps, *step)
	}
	if len(res.Steps) == 0 {
		return res, fmt.Errorf("%w: verify: no stage selected", ErrUsage)
	}
	return res, nil
}

// upToDateKey returns n's manifest when its key matches the inputs now.
// Its outputs may have been modified since: that is for verifyNode to
// find and locate.
func (r *runner) upToDateKey(n *Node) (*cache.Manifest, error) {
	in, err := r.inputs(n)
	var mu *missingUpstream
	switch {
	case errors.As(err, &mu):
		return nil, fmt.Errorf("pipeline: verify: %s is not up to date (upstream %s has no outputs); run it first", n.ID, mu.dep.ID)
	case err != nil:
		return nil, err
	}
	m, err := cache.ReadManifest(n.Dir(r.opts.RunDir))
	switch {
	case notExist(err):
		return nil, fmt.Errorf("pipeline: verify: %s has not run; run it first", n.ID)
	case err != nil:
		return nil, fmt.Errorf("%w: verify: unreadable manifest: %v", ErrUsage, err)
	case m.Format != cache.ManifestFormat || m.Key != in.Key():
		return nil, fmt.Errorf("pipeline: verify: %s is not up to date (stale: %s); run it first", n.ID, strings.Join(cache.StaleReasons(m.Inputs, in), "; "))
	}
	return m, nil
}

// verifyNode reruns n into out and compares what it wrote with m.
func (r *runner) verifyNode(ctx context.Context, n *Node, m *cache.Manifest, out string) (*VerifyStep, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	res, err := runStage(ctx, n.Work, n.env(r, out))
	if err != nil {
		return nil, fmt.Errorf("pipeline: verify: %s: %w", n.ID, err)
	}
	if res == nil {
		res = &Result{}
	}
	outs, err := r.sealOutputs(out, res)
	if err != nil {
		return nil, fmt.Errorf("pipeline: verify: %s: %w", n.ID, err)
	}
	step := &VerifyStep{ID: n.ID, Match: true, Outputs: len(m.Outputs), Row: -1}
	now := map[string]string{}
	for _, o := range outs {
		now[o.Name] = o.SHA256
	}
	recorded := m.OutputMap()
	differ := func(name, detail string) {
		step.Match, step.Table, step.Diff = false, name, detail
	}
	// Outputs in name order (the manifest's), then any the rerun added. A
	// rerun output must hash as recorded, and so must the file on disk; a
	// difference in either is located by comparing the two files.
	dir := n.Dir(r.opts.RunDir)
	for _, o := range m.Outputs {
		final := filepath.Join(dir, filepath.FromSlash(o.Name))
		sum, ok := now[o.Name]
		disk, _, err := r.hashes.File(final)
		if err != nil && !notExist(err) {
			return nil, fmt.Errorf("%w: verify: %s: %v", ErrUsage, n.ID, err)
		}
		note := ""
		if disk != o.SHA256 {
			note = " (the file on disk no longer has the recorded hash)"
		}
		switch {
		case !ok:
			differ(o.Name, "the rerun did not write it")
		case disk == "":
			differ(o.Name, "recorded, but missing from the run directory")
		case sum == o.SHA256 && disk == o.SHA256:
			continue
		case strings.HasSuffix(o.Name, ".parquet"):
			d := &DiffResult{Row: -1}
			found := false
			if err := diffTable(ctx, r.opts.Compare, final, filepath.Join(out, filepath.FromSlash(o.Name)), o.Name, 0, d, &found); err != nil {
				return nil, fmt.Errorf("%w: verify: %s: %v", ErrUsage, n.ID, err)
			}
			switch {
			case !found:
				differ(o.Name, fmt.Sprintf("same cells, other bytes (sha256 %s recorded, %s on disk, %s rerun)", cache.Short(o.SHA256), cache.Short(disk), cache.Short(sum)))
			case d.Row < 0:
				differ(o.Name, d.Detail+note)
			default:
				differ(o.Name, fmt.Sprintf("row %d, column %s: %s in the run directory vs %s rerun%s", d.Row, d.Column, d.A, d.B, note))
				step.Row, step.Column, step.A, step.B = d.Row, d.Column, d.A, d.B
			}
		default:
			differ(o.Name, fmt.Sprintf("sha256 %s recorded, %s on disk, %s rerun", cache.Short(o.SHA256), cache.Short(disk), cache.Short(sum)))
		}
		break
	}
	if step.Match {
		for _, o := range outs {
			if _, ok := recorded[o.Name]; !ok {
				differ(o.Name, "written by the rerun, not recorded")
				break
			}
		}
	}
	return step, nil
}

// String is the line the verify command prints for the stage.
func (s *VerifyStep) String() string {
	if s.Match {
		return fmt.Sprintf("%s: ok (%d outputs reproduced)", s.ID, s.Outputs)
	}
	return fmt.Sprintf("%s: differs: %s: %s", s.ID, s.Table, s.Diff)
}

package pipeline

import (
	"context"
	"fmt"
	"testing"

	"monomer/pipeline/cache"
)

// keyOnly is a Stage whose key is fixed parameters and no files.
type keyOnly struct{}

func (keyOnly) Key() (any, []string)                       { return map[string]int{"k": 1}, nil }
func (keyOnly) Run(context.Context, *Env) (*Result, error) { return &Result{}, nil }

// Shards of one stage differ only by their index: it must be in their keys
// (else the store would give shard 1 shard 0's outputs); an unsharded
// node's key has no shard.
func TestShardInKey(t *testing.T) {
	r := &runner{opts: &Options{RunDir: t.TempDir()}, hashes: cache.OpenHashCache("")}
	node := func(shard, shards int) *Node {
		return &Node{Stage: "bow", Name: "bow", Experiment: "e", Shard: shard, Shards: shards, Code: cache.Code{Version: "1"}, Work: keyOnly{}}
	}
	keys := map[string]bool{}
	for _, n := range []*Node{node(0, 0), node(0, 2), node(1, 2)} {
		in, err := r.inputs(n)
		must(t, err)
		if want := map[bool]string{true: fmt.Sprintf("%d/%d", n.Shard, n.Shards), false: ""}[n.Shards > 0]; in.Shard != want {
			t.Errorf("shard %d of %d: key's shard %q, want %q", n.Shard, n.Shards, in.Shard, want)
		}
		keys[in.Key()] = true
	}
	if len(keys) != 3 {
		t.Errorf("%d distinct keys for an unsharded node and two shards", len(keys))
	}
}

// Every selected node's Preflight runs before anything, not only the
// first's; an unselected node's does not.
func TestPreflightAll(t *testing.T) {
	ok := &Node{ID: "a/ingest", Preflight: func() error { return nil }}
	bad := &Node{ID: "a/train", Preflight: func() error { return fmt.Errorf("needs 9 GiB") }}
	g := &Graph{Nodes: []*Node{ok, bad}}
	if err := preflightAll(g, map[*Node]bool{ok: true, bad: true}); err == nil || err.Error() != "pipeline: a/train: needs 9 GiB" {
		t.Errorf("error %v", err)
	}
	if err := preflightAll(g, map[*Node]bool{ok: true}); err != nil {
		t.Errorf("unselected node's preflight ran: %v", err)
	}
}

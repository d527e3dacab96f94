package stages

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"monomer/job"
	"monomer/pipeline"
	"monomer/pipeline/cache"
)

var update = flag.Bool("update", false, "add this build's outputs to testdata/stage-versions.json (`make golden` records every build); rewrite testdata/demo-tables.md (TestDemoTables)")

// goldenVersions holds every stage's version and output hashes on the
// fixed input of testJob (the committed tiny data set).
const goldenVersions = "testdata/stage-versions.json"

// TestStageVersions is the guard of the code versions (stages/versions.go):
// it runs every stage on a fixed input and fails, naming the stage, when a
// stage's outputs changed while its version and inputs did not. It runs in
// every build CI tests (pure Go; OpenBLAS under the CPU's kernel, Haswell
// and SkylakeX), each compared with its own record where builds differ
// (recommend's gemm distances) and with the one shared record elsewhere.
// After a version bump (or a change of the fixed input), record the new
// outputs of every build and kernel with one command:
//
//	make golden
func TestStageVersions(t *testing.T) {
	j := loadTestJob(t)
	// The bag-of-words experiment once more with its text counted in two
	// bow-shard nodes, so the shards are guarded too.
	sharded := j.Experiments[1]
	sharded.Name += "-sharded"
	sharded.Settings.VocabShards = job.Set(2)
	j.Experiments = append(j.Experiments, sharded)
	dir := t.TempDir()
	runJob(t, j, dir)
	g, err := Graph(j, Experiment(), Job())
	if err != nil {
		t.Fatal(err)
	}
	now, err := pipeline.RecordStages(g, dir)
	if err != nil {
		t.Fatal(err)
	}
	var golden []cache.StageRecord
	b, err := os.ReadFile(goldenVersions)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &golden); err != nil {
			t.Fatalf("%s: %v", goldenVersions, err)
		}
	case !os.IsNotExist(err) || !*update:
		t.Fatalf("%v (create it with -update)", err)
	}
	if *update {
		out, err := json.MarshalIndent(cache.UpdateRecords(golden, now), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, '\n')
		if !bytes.Equal(out, b) {
			if err := os.WriteFile(goldenVersions, out, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote %s", goldenVersions)
		}
		return
	}
	problems, notes := cache.CheckStages(golden, now, g.StageDeps)
	for _, n := range notes {
		t.Log(n)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// Every stage declares its version, so no key hashes the executable.
func TestEveryStageVersioned(t *testing.T) {
	for _, n := range everyStageGraph(t).Nodes {
		code, err := cache.CodeVersion(n.Stage, n.Code)
		if err != nil || code[0] != 'v' {
			t.Errorf("node %s: code version %q, %v", n.ID, code, err)
		}
	}
}

// TestSameBitsEveryBuild: train, evaluate and recommend write the same
// bytes in every build the golden file records (pure Go, OpenBLAS under
// each kernel), so a user can diff the tables of runs on different
// machines. Only the report differs, by the kernel its page names. A change
// that makes one of these depend on the BLAS kernel again shows up here
// when `make golden` re-records as a second record for the stage.
func TestSameBitsEveryBuild(t *testing.T) {
	b, err := os.ReadFile(goldenVersions)
	if err != nil {
		t.Fatal(err)
	}
	var golden []cache.StageRecord
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatalf("%s: %v", goldenVersions, err)
	}
	records := map[string]int{}
	for _, r := range golden {
		records[r.Stage]++
	}
	for _, s := range []string{"train", "evaluate", "recommend"} {
		if records[s] != 1 {
			t.Errorf("%s: %d records in %s, want 1: its outputs differ between builds or kernels (this may be a BUG: a product left on BLAS's kernel-dependent order)", s, records[s], goldenVersions)
		}
	}
}

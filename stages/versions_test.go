package stages

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"monomer/job"
	"monomer/pipeline"
	"monomer/pipeline/cache"
)

var update = flag.Bool("update", false, "add this build's outputs to testdata/stage-versions.json (`make golden` records every build); rewrite testdata/demo-tables.md (TestDemoTables)")

// keepFrom and keepKernels are `make golden`'s on a CPU that cannot run
// every kernel it records: the golden file before, and those kernels.
var (
	keepFrom    = flag.String("keep-from", "", "with -keep-kernels: take these kernels' records from this earlier golden file (`make golden` on a CPU that cannot run them)")
	keepKernels = flag.String("keep-kernels", "", "comma-separated OpenBLAS kernels whose records -keep-from keeps")
)

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
	if *keepFrom != "" {
		keepGolden(t)
		return
	}
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

// keepGolden adds to the golden file just recorded the records of
// -keep-kernels from -keep-from (cache.KeepRecords), and logs each.
func keepGolden(t *testing.T) {
	read := func(p string) []cache.StageRecord {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var r []cache.StageRecord
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return r
	}
	kernels := strings.Split(*keepKernels, ",")
	kept := func(env string) bool { // "openblas 0.3.21 SkylakeX"
		f := strings.Fields(env)
		return len(f) > 0 && slices.ContainsFunc(kernels, func(k string) bool { return strings.EqualFold(k, f[len(f)-1]) })
	}
	out, notes := cache.KeepRecords(read(goldenVersions), read(*keepFrom), kept)
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goldenVersions, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		fmt.Println("make golden: kept:", n)
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

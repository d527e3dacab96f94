package cache

import (
	"slices"
	"strings"
	"testing"
)

// TestGuardEnvironments: a NumericEnv stage is compared with the record of
// its environment; environments that wrote the same bits share one record;
// an environment never recorded is compared with the outputs every
// recorded one agreed on, and only noted where they disagree.
func TestGuardEnvironments(t *testing.T) {
	now := func(env, out string) StageRecord {
		return StageRecord{Stage: "train", Version: "1", Env: env, Inputs: "i", Outputs: map[string]string{"e/fits.parquet": out}}
	}
	stages := func(string) []string { return nil } // train's Deps
	var golden []StageRecord
	for _, r := range []StageRecord{now("blas go", "g"), now("blas Haswell", "g"), now("blas SkylakeX", "g")} {
		golden = UpdateRecords(golden, []StageRecord{r})
	}
	if len(golden) != 1 || strings.Join(golden[0].Envs, ",") != "blas Haswell,blas SkylakeX,blas go" || golden[0].Env != "" {
		t.Fatalf("three environments, same bits: records %+v, want one listing all three", golden)
	}
	if p, n := CheckStages(golden, []StageRecord{now("blas Haswell", "g")}, stages); len(p)+len(n) != 0 {
		t.Errorf("recorded kernel, same outputs: %q %q", p, n)
	}
	if p, _ := CheckStages(golden, []StageRecord{now("blas Haswell", "x")}, stages); len(p) != 1 || !strings.Contains(p[0], "BUG") {
		t.Errorf("recorded kernel, other outputs: %q", p)
	}
	// A kernel never recorded must give the bits all the others agree on.
	if p, _ := CheckStages(golden, []StageRecord{now("blas Zen", "x")}, stages); len(p) != 1 || !strings.Contains(p[0], "may be a bug") {
		t.Errorf("new kernel, other outputs: %q", p)
	}
	if p, n := CheckStages(golden, []StageRecord{now("blas Zen", "g")}, stages); len(p)+len(n) != 0 {
		t.Errorf("new kernel, same outputs: %q %q", p, n)
	}

	// SkylakeX now rounds differently: it leaves the shared record for its own.
	golden = UpdateRecords(golden, []StageRecord{now("blas SkylakeX", "s")})
	var got []string
	for _, r := range golden {
		got = append(got, strings.Join(r.Envs, "+")+"="+r.Outputs["e/fits.parquet"])
	}
	if strings.Join(got, " ") != "blas Haswell+blas go=g blas SkylakeX=s" {
		t.Errorf("after SkylakeX changed: %v", got)
	}
	if p, _ := CheckStages(golden, []StageRecord{now("blas SkylakeX", "g")}, stages); len(p) != 1 {
		t.Errorf("SkylakeX compared with the others' record: %q", p)
	}
	if p, n := CheckStages(golden, []StageRecord{now("blas Zen", "z")}, stages); len(p) != 0 || len(n) != 1 || !strings.Contains(n[0], `none is "blas Zen"`) {
		t.Errorf("new kernel where the recorded ones disagree: %q %q", p, n)
	}
	// Re-recording the one environment of a record replaces the record.
	single := UpdateRecords(nil, []StageRecord{now("blas go", "g")})
	single = UpdateRecords(single, []StageRecord{now("blas go", "g3")})
	if len(single) != 1 || single[0].Outputs["e/fits.parquet"] != "g3" || strings.Join(single[0].Envs, ",") != "blas go" {
		t.Errorf("re-recorded the only environment: %+v", single)
	}
	bumped := now("blas go", "g2")
	bumped.Version = "2"
	if up := UpdateRecords(golden, []StageRecord{bumped}); len(up) != 1 || strings.Join(up[0].Envs, ",") != "blas go" {
		t.Errorf("records of an old version kept: %+v", up)
	}
}

// TestGuardProblems: each way a stage can differ from its golden record
// gives its own message, and a stage whose inputs changed only because an
// upstream stage changed is noted, not blamed.
func TestGuardProblems(t *testing.T) {
	rec := func(stage, version, inputs, out string) StageRecord {
		return StageRecord{Stage: stage, Version: version, Inputs: inputs, Outputs: map[string]string{"e/" + stage: out}}
	}
	golden := UpdateRecords(nil, []StageRecord{rec("ingest", "1", "i", "o"), rec("split", "1", "i", "o"),
		rec("train", "1", "i", "o"), rec("evaluate", "1", "i", "o"), rec("negatives", "1", "i", "o"), rec("report", "1", "i", "o"), rec("old", "1", "i", "o")})
	if len(golden) != 7 || golden[0].Envs != nil || golden[6].Stage != "old" {
		t.Fatalf("records of a pure-Go run: %+v", golden)
	}
	deps := map[string][]string{"split": {"ingest"}, "train": {"split"}, "evaluate": {"train"}, "negatives": {"ingest"}, "report": {"evaluate"}, "plot": {"report"}}
	now := []StageRecord{
		rec("ingest", "1", "i", "o"),     // unchanged
		rec("split", "1", "i", "x"),      // outputs changed: a bug
		rec("train", "1", "j", "x"),      // inputs changed by split
		rec("evaluate", "2", "j", "x"),   // new version
		rec("negatives", "1", "i2", "o"), // inputs changed, upstream not to blame
		rec("report", "1", "j", "x"),     // inputs changed by evaluate
		rec("plot", "1", "j", "x"),       // no golden record
	}
	problems, notes := CheckStages(golden, now, func(s string) []string { return deps[s] })
	want := []string{
		"stage split: outputs changed under unchanged version 1 (e/split): this may be a BUG",
		"stage evaluate: version 2, the golden file has 1",
		"stage negatives: its parameters or raw inputs changed",
		"stage plot has no golden record",
		"stage old is in the golden file but not in the DAG",
	}
	if len(problems) != len(want) {
		t.Fatalf("problems %q, want %d", problems, len(want))
	}
	for i, p := range problems {
		if !strings.HasPrefix(p, want[i]) {
			t.Errorf("problem %d: %q, want it to start %q", i, p, want[i])
		}
	}
	if !slices.Equal(notes, []string{"stage train: not compared, its input from split changed", "stage report: not compared, its input from evaluate changed"}) {
		t.Errorf("notes %q", notes)
	}
}

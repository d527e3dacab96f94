package cache

import (
	"fmt"
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

// TestKeepRecords: `make golden` on a CPU that cannot run SkylakeX keeps
// SkylakeX's records: joined to the new shared record where its bits
// agreed with a recorded build's, kept as they were where it had its own
// record of today's version and inputs, and kept stale (noted, not
// compared) where that record is of an older version. A later recording
// under SkylakeX makes it a measured environment again.
func TestKeepRecords(t *testing.T) {
	rec := func(stage, version, inputs, out string, envs ...string) StageRecord {
		return StageRecord{Stage: stage, Version: version, Envs: envs, Inputs: inputs, Outputs: map[string]string{"o": out}}
	}
	const go_, hsw, skx = "blas go", "blas Haswell", "blas SkylakeX"
	old := []StageRecord{
		rec("train", "1", "i", "t", go_, hsw, skx), // same bits in every build
		rec("report", "1", "r", "p-go", go_),
		rec("report", "1", "r", "p-hsw", hsw),
		rec("report", "1", "r", "p-skx", skx),
		rec("eval", "1", "e", "v-go", go_),
		rec("eval", "1", "e", "v-skx", skx),
	}
	// Recorded now without SkylakeX: train bumped to version 2, report
	// unchanged, eval's inputs changed.
	now := []StageRecord{
		rec("train", "2", "i", "t2", go_, hsw),
		rec("report", "1", "r", "p-go", go_),
		rec("report", "1", "r", "p-hsw", hsw),
		rec("eval", "1", "e2", "v2", go_),
	}
	kept := func(e string) bool { return e == skx }
	got, notes := KeepRecords(now, old, kept)
	var lines []string
	for _, g := range got {
		lines = append(lines, fmt.Sprintf("%s v%s %s=%s inferred=%s stale=%v", g.Stage, g.Version, strings.Join(g.Envs, "+"), g.Outputs["o"], strings.Join(g.Inferred, "+"), g.Stale))
	}
	want := []string{
		"train v2 blas Haswell+blas SkylakeX+blas go=t2 inferred=blas SkylakeX stale=false",
		"report v1 blas Haswell=p-hsw inferred= stale=false",
		"report v1 blas SkylakeX=p-skx inferred= stale=false",
		"report v1 blas go=p-go inferred= stale=false",
		"eval v1 blas SkylakeX=v-skx inferred= stale=true",
		"eval v1 blas go=v2 inferred= stale=false",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("kept records:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if len(notes) != 3 || !strings.Contains(notes[0], "joins the record") || !strings.Contains(notes[2], "stale") {
		t.Errorf("notes %q", notes)
	}
	deps := func(string) []string { return nil }
	only := func(stage string) []StageRecord { // the golden file, one stage's records
		return slices.DeleteFunc(slices.Clone(got), func(r StageRecord) bool { return r.Stage != stage })
	}
	// Under SkylakeX: the joined record is compared (and catches a change),
	// the stale one only noted.
	p, n := CheckStages(only("train"), []StageRecord{{Stage: "train", Version: "2", Env: skx, Inputs: "i", Outputs: map[string]string{"o": "other"}}}, deps)
	if len(p) != 1 || len(n) != 0 {
		t.Errorf("train under an inferred environment, other bits: problems %q notes %q", p, n)
	}
	p, n = CheckStages(only("eval"), []StageRecord{{Stage: "eval", Version: "1", Env: skx, Inputs: "e2", Outputs: map[string]string{"o": "x"}}}, deps)
	if len(p) != 0 || len(n) != 1 || !strings.Contains(n[0], "stale") {
		t.Errorf("eval under a stale record: problems %q notes %q", p, n)
	}
	// Recording SkylakeX later: measured, no longer inferred or stale.
	re := UpdateRecords(got, []StageRecord{{Stage: "train", Version: "2", Env: skx, Inputs: "i", Outputs: map[string]string{"o": "t2"}}})
	if len(re) == 0 || re[0].Stage != "train" || len(re[0].Inferred) != 0 || len(re[0].Envs) != 3 {
		t.Errorf("SkylakeX re-recorded: %+v", re[0])
	}
	// Nothing to keep: the records are those recorded.
	if same, notes := KeepRecords(now, old, func(string) bool { return false }); len(same) != len(now) || len(notes) != 0 {
		t.Errorf("no environment kept: %d records, notes %q", len(same), notes)
	}
}

package cache

import (
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
	bumped := now("blas go", "g2")
	bumped.Version = "2"
	if up := UpdateRecords(golden, []StageRecord{bumped}); len(up) != 1 || strings.Join(up[0].Envs, ",") != "blas go" {
		t.Errorf("records of an old version kept: %+v", up)
	}
}

package pipeline

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

// versioned declares a version for any stage.
type versioned struct {
	tStage
	v string
}

func (s versioned) Version() string { return s.v }

// TestGuard: the guard passes on an unchanged run, fails naming the one
// stage whose behaviour a switch changed under an unchanged version (its
// downstream stages are only noted), asks for -update once the version is
// bumped, and passes after it.
func TestGuard(t *testing.T) {
	f := newFixture(t)
	job := f.load(t)
	var neg *fakeStage
	exp := make([]tStage, len(f.exp))
	for i, s := range f.exp {
		exp[i] = versioned{s, "1.0.0"}
		if fs, ok := s.(*fakeStage); ok && fs.name == "negatives" {
			neg = fs
		}
	}
	jobSt := []tStage{versioned{f.jobSt[0], "1.0.0"}}
	deps, err := expand(job, exp, jobSt) // for the stages' Deps
	must(t, err)
	record := func() []StageRecord {
		t.Helper()
		dir := t.TempDir()
		_, err := runJob(context.Background(), job, exp, jobSt, Options{RunDir: dir})
		must(t, err)
		recs, err := recordJob(job, exp, jobSt, dir)
		must(t, err)
		return recs
	}
	golden := record()
	if len(golden) != 7 || golden[0].Stage != "ingest" || len(golden[0].Outputs) != 2 || golden[0].Outputs["a/out.txt"] == "" {
		t.Fatalf("records %+v", golden)
	}
	if p, n := CheckStages(golden, record(), deps); len(p)+len(n) != 0 {
		t.Fatalf("unchanged run: problems %q, notes %q", p, n)
	}

	neg.salt = "changed"
	now := record()
	p, n := CheckStages(golden, now, deps)
	// The message says first that this may be a bug, then how to record.
	if len(p) != 1 || !strings.HasPrefix(p[0], "stage negatives: outputs changed under unchanged version 1.0.0 (a/out.txt, b/out.txt): this may be a BUG") ||
		strings.Index(p[0], "BUG") > strings.Index(p[0], "make golden") {
		t.Errorf("problems %q", p)
	}
	if len(n) != 4 || !strings.Contains(n[0], "stage split: not compared, its input from negatives changed") {
		t.Errorf("notes %q", n)
	}

	exp[2] = versioned{neg, "1.1.0"}
	now = record()
	if p, _ := CheckStages(golden, now, deps); len(p) != 1 || p[0] != "stage negatives: version 1.1.0, the golden file has 1.0.0: record its outputs with `make golden`" {
		t.Errorf("after the bump: %q", p)
	}
	golden = UpdateRecords(golden, now)
	if p, n := CheckStages(golden, record(), deps); len(p)+len(n) != 0 {
		t.Errorf("after -update: problems %q, notes %q", p, n)
	}

	// A change of the test's own inputs is not blamed on a version.
	job.Experiments[0].Settings.SwapsPerEdge = 3
	if p, _ := CheckStages(golden, record(), deps); len(p) != 1 || !strings.HasPrefix(p[0], "stage negatives: its parameters or raw inputs changed") {
		t.Errorf("inputs changed: %q", p)
	}
}

// TestGuardEnvironments: a NumericEnv stage is compared with the record of
// its environment; environments that wrote the same bits share one record;
// an environment never recorded is compared with the outputs every
// recorded one agreed on, and only noted where they disagree.
func TestGuardEnvironments(t *testing.T) {
	now := func(env, out string) StageRecord {
		return StageRecord{Stage: "train", Version: "1", Env: env, Inputs: "i", Outputs: map[string]string{"e/fits.parquet": out}}
	}
	stages, err := NewGraph(Spec{ExpStages: []StageInfo{{Name: "train"}}})
	must(t, err)
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

// TestVerifyNondeterministic: a stage that writes other bytes when rerun
// with the same key is named with the differing file (cells are located in
// cmd/monomer TestVerify); the others
// reproduce; a stale stage is refused.
func TestVerifyNondeterministic(t *testing.T) {
	f := newFixture(t)
	if _, _, err := f.run(t, Options{}); err != nil {
		t.Fatal(err)
	}
	job := f.load(t)
	res, err := verifyJob(context.Background(), job, f.exp, f.jobSt, Options{RunDir: f.runDir})
	if err != nil || len(res.Steps) != 13 || res.First() != nil {
		t.Fatalf("fresh: %+v, %v", res, err)
	}
	f.exp[5].(*fakeStage).salt = "nondeterministic" // evaluate
	res, err = verifyJob(context.Background(), job, f.exp, f.jobSt, Options{RunDir: f.runDir, Experiments: []string{"b"}})
	must(t, err)
	first := res.First()
	if len(res.Steps) != 6 || first == nil || first.ID != "b/evaluate" || first.Table != "out.txt" || first.Row != -1 {
		t.Fatalf("steps %+v", res.Steps)
	}
	if got := first.String(); !regexp.MustCompile(`^b/evaluate: differs: out.txt: sha256 (\w{12}) recorded, (\w{12}) on disk, \w{12} rerun$`).MatchString(got) {
		t.Errorf("line %q", got)
	}
	_, err = verifyJob(context.Background(), f.load(t, "settings.k=7"), f.exp, f.jobSt, Options{RunDir: f.runDir, Only: "train"})
	if err == nil || !strings.Contains(err.Error(), "a/train is not up to date (stale: param k changed (100 -> 7))") {
		t.Errorf("stale: %v", err)
	}
	if h := hidden(t, f.runDir); len(h) != 0 {
		t.Errorf("left %v", h)
	}
}

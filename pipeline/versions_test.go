package pipeline

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"monomer/pipeline/cache"
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
	record := func() []cache.StageRecord {
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
	if p, n := cache.CheckStages(golden, record(), deps.StageDeps); len(p)+len(n) != 0 {
		t.Fatalf("unchanged run: problems %q, notes %q", p, n)
	}

	neg.salt = "changed"
	now := record()
	p, n := cache.CheckStages(golden, now, deps.StageDeps)
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
	if p, _ := cache.CheckStages(golden, now, deps.StageDeps); len(p) != 1 || p[0] != "stage negatives: version 1.1.0, the golden file has 1.0.0: record its outputs with `make golden`" {
		t.Errorf("after the bump: %q", p)
	}
	golden = cache.UpdateRecords(golden, now)
	if p, n := cache.CheckStages(golden, record(), deps.StageDeps); len(p)+len(n) != 0 {
		t.Errorf("after -update: problems %q, notes %q", p, n)
	}

	// A change of the test's own inputs is not blamed on a version.
	job.Experiments[0].Settings.SwapsPerEdge = 3
	if p, _ := cache.CheckStages(golden, record(), deps.StageDeps); len(p) != 1 || !strings.HasPrefix(p[0], "stage negatives: its parameters or raw inputs changed") {
		t.Errorf("inputs changed: %q", p)
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

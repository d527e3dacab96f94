package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"monomer/pipeline/cache"
	"monomer/stages"
)

// TestScoreOtherVersion: a run whose features code is another version
// than this binary's is refused by `monomer score` with exit 3 and one
// line naming both versions, before any input is read.
func TestScoreOtherVersion(t *testing.T) {
	dir := t.TempDir()
	code := map[string]string{"ingest": "v" + stages.Ingest{}.Version(), "features": "v0.0.1", "train.monomer": "v" + stages.Train{}.Version()}
	for st, c := range code {
		d := filepath.Join(dir, "run", "e", st)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := cache.WriteManifest(d, &cache.Manifest{Format: 1, Inputs: cache.KeyInputs{Stage: st, Code: c + " go1.0/amd64", Params: []byte(`{"kind":"bow"}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	r := monomer(t, dir, "real", nil, "score", "run", "--experiment", "e", "--items", "none.csv", "--text", "none.csv", "--out", "scored")
	want := "the run's features code is version 0.0.1, this monomer's " + stages.Features{}.Version()
	if r.code != 3 || !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q; want 3 and one line with %q", r.code, r.stderr, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "scored")); !os.IsNotExist(err) {
		t.Fatalf("score made its output directory: %v", err)
	}
}

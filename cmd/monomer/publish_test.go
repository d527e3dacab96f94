package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// "published" holds the run root's links to published runs: no run id may
// take it (exit 2, nothing written).
func TestRunIDPublishedReserved(t *testing.T) {
	dir := jobDir(t)
	for _, id := range []string{"published", "Published"} {
		r := monomer(t, dir, "fake", nil, "run", "job.yaml", "--run-dir", "out", "--run-id", id)
		if r.code != exitUsage || !strings.Contains(r.stderr, "is reserved for the links to published runs") {
			t.Errorf("--run-id %s: exit %d, stderr %q", id, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("a refused --run-id created the run directory")
	}
}

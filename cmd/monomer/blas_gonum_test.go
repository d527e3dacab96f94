//go:build !openblas

package main

import (
	"strings"
	"testing"
)

// TestPureGoWarns: the pure-Go build logs exactly one WARN at the start of a
// run, saying it is pure Go and what it costs.
func TestPureGoWarns(t *testing.T) {
	dir := jobDir(t)
	r := monomer(t, dir, "fake", nil, "run", "job.yaml")
	if r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	var warns []string
	for _, l := range logLines(t, r.stderr) {
		if l["level"] == "WARN" {
			warns = append(warns, l["msg"].(string))
		}
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "without OpenBLAS") || !strings.Contains(warns[0], "10x slower") {
		t.Errorf("warnings %q, want one about the pure-Go build", warns)
	}
}

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

// TestPureGoKernelName: the pure-Go build checks a kernel name too and says
// that no kernel choice applies to it.
func TestPureGoKernelName(t *testing.T) {
	r := monomer(t, t.TempDir(), "fake", nil, "blas", "--blas-kernel", "Nonsense")
	if r.code != 2 || !strings.Contains(r.stderr, "this build has no OpenBLAS, so no kernel choice applies to it") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if r := monomer(t, t.TempDir(), "fake", nil, "blas", "--blas-kernel", "Haswell"); r.code != 0 || !strings.Contains(r.stdout, "impl: gonum\n") {
		t.Errorf("a known name: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

package pipeline

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeaf: the runner is a leaf, like Go's cmd/go/internal/cache: it
// imports no package of this module but its own sub-packages (not job,
// not stages, no domain library) and nothing of Arrow or Parquet, so it
// knows nothing of the job file or of the tables it hashes. The two small
// file libraries it shares with download are allowed; anything they
// imported would be listed here too.
func TestLeaf(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to list the dependencies with")
	}
	out, err := exec.Command(goTool, "list", "-deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list -deps listed nothing")
	}
	for _, p := range deps {
		inModule := p == "monomer" || strings.HasPrefix(p, "monomer/")
		shared := p == "monomer/internal/sidefile" || p == "monomer/internal/filelock"
		if inModule && !shared && p != "monomer/pipeline" && !strings.HasPrefix(p, "monomer/pipeline/") ||
			strings.HasPrefix(p, "github.com/apache/arrow-go") {
			t.Errorf("pipeline depends on %s", p)
		}
	}
}

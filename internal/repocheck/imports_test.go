package repocheck

import (
	"os/exec"
	"strings"
	"testing"
)

// libraries are the domain packages: they take values and return values,
// and know nothing of the job file, the runner or the stages.
var libraries = []string{"amazon", "imagefeat", "bow", "graph", "models", "report", "schema", "synth", "download", "catalogue"}

// TestImportRules holds the import rules of docs/architecture.md that no
// package's own test holds (pipeline's TestLeaf and job's TestJobImports
// hold theirs): no library depends on job, pipeline or stages, at any
// depth; and schema is the only package that imports Parquet, so every
// table is written and read one way.
func TestImportRules(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to list the imports with")
	}
	for _, lib := range libraries {
		out, err := exec.Command(goTool, "list", "-deps", "monomer/"+lib+"/...").Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", lib, err)
		}
		for _, p := range strings.Fields(string(out)) {
			for _, bad := range []string{"monomer/job", "monomer/pipeline", "monomer/stages"} {
				if p == bad || strings.HasPrefix(p, bad+"/") {
					t.Errorf("library %s depends on %s", lib, p)
				}
			}
		}
	}
	out, err := exec.Command(goTool, "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "monomer/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		if pkg == "monomer/schema" {
			continue
		}
		for _, p := range strings.Fields(imports) {
			if strings.HasPrefix(p, "github.com/apache/arrow-go/v18/parquet") {
				t.Errorf("%s imports %s: Parquet is read and written through schema only", pkg, p)
			}
		}
	}
}

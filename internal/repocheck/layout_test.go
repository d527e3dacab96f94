package repocheck

import (
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestInternalIsLibraries: internal/ is the ground floor of
// docs/architecture.md's layout. Every package under it is a library, not
// a program (programs live in cmd/<tool>/), and none of its files, tests
// included, imports a package of this module outside internal/: an import
// arrow from there would run back up through the floors.
func TestInternalIsLibraries(t *testing.T) {
	module, err := modulePath(root)
	if err != nil {
		t.Fatal(err)
	}
	problems, files, err := groundFloor(root, module)
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("no Go file under internal/: the walk found nothing to check")
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestGroundFloorFinds: groundFloor names a program and each kind of
// upward import in a tree made for it, and passes what the rule allows: a
// generator run by `go run` (a file no build includes, as csrkern's
// gen_avx2.go), imports within internal/, a module whose name merely
// starts like this one's, and what the go tool never builds (testdata).
func TestGroundFloorFinds(t *testing.T) {
	dir := t.TempDir()
	for path, src := range map[string]string{
		"go.mod":                       "module example.com/m\n\ngo 1.26\n",
		"internal/lib/lib.go":          "package lib\n\nimport (\n\t\"fmt\"\n\t\"example.com/m/internal/par\"\n\t\"example.com/mx/job\"\n)\n",
		"internal/lib/gen.go":          "//go:build ignore\n\n// gen writes a table.\npackage main\n\nimport \"os\"\n",
		"internal/tool/main.go":        "// Command tool is a program in the wrong place.\npackage main\n",
		"internal/up/up.go":            "package up\n\nimport s \"example.com/m/schema\"\n",
		"internal/up/up_test.go":       "package up_test\n\nimport (\n\t\"testing\"\n\t\"example.com/m/synth\"\n)\n",
		"internal/root/root.go":        "package root\n\nimport \"example.com/m\"\n",
		"internal/lib/testdata/x/x.go": "package main\n\nimport \"example.com/m/job\"\n",
		"internal/.hidden/h.go":        "package main\n",
		"internal/linuxonly/main_l.go": "//go:build linux\n\npackage main\n",
		"internal/par/par.go":          "package par\n",
		"cmd/ok/main.go":               "package main\n\nimport \"example.com/m/job\"\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	module, err := modulePath(dir)
	if err != nil || module != "example.com/m" {
		t.Fatalf("modulePath: %q, %v", module, err)
	}
	problems, files, err := groundFloor(dir, module)
	if err != nil {
		t.Fatal(err)
	}
	if files != 8 {
		t.Errorf("%d files checked, want the 8 outside testdata and hidden folders", files)
	}
	want := []string{
		"internal/linuxonly/main_l.go: package main: a program; programs live in cmd/<tool>/",
		"internal/root/root.go imports example.com/m, which is outside internal/",
		"internal/tool/main.go: package main: a program; programs live in cmd/<tool>/",
		"internal/up/up.go imports example.com/m/schema, which is outside internal/",
		"internal/up/up_test.go imports example.com/m/synth, which is outside internal/",
	}
	if fmt.Sprint(problems) != fmt.Sprint(want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
}

// modulePath is the module path go.mod at dir declares.
func modulePath(dir string) (string, error) {
	src, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(src), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", filepath.Join(dir, "go.mod"))
}

// groundFloor reads every Go file under root/internal that the go tool
// could build (it skips testdata and folders starting with . or _, as the
// go tool does) and returns, in path order, one line for each that is
// package main or imports a package of module outside internal/, and how
// many files it read. A file under `//go:build ignore` is a generator run
// by `go run FILE` and may be package main; its imports are held to the
// rule all the same. Files are parsed rather than listed by the go tool so
// that files of every build constraint (another system's, a tag's) count.
func groundFloor(root, module string) (problems []string, files int, err error) {
	ground := module + "/internal"
	fset := token.NewFileSet()
	err = filepath.WalkDir(filepath.Join(root, "internal"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		files++
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if f.Name.Name == "main" && !ignored(f.Comments, f.Package) {
			problems = append(problems, rel+": package main: a program; programs live in cmd/<tool>/")
		}
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: %v", rel, err)
			}
			if (path == module || strings.HasPrefix(path, module+"/")) && path != ground && !strings.HasPrefix(path, ground+"/") {
				problems = append(problems, fmt.Sprintf("%s imports %s, which is outside internal/", rel, path))
			}
		}
		return nil
	})
	return problems, files, err
}

// ignored reports whether the file's build constraint (a //go:build line
// above its package clause) is exactly the ignore tag.
func ignored(comments []*ast.CommentGroup, pkg token.Pos) bool {
	for _, g := range comments {
		if g.Pos() >= pkg {
			break
		}
		for _, c := range g.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			x, err := constraint.Parse(c.Text)
			if err != nil {
				return false
			}
			if tag, ok := x.(*constraint.TagExpr); ok && tag.Tag == "ignore" {
				return true
			}
		}
	}
	return false
}

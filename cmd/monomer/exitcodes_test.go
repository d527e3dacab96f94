package main

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"monomer/amazon"
	"monomer/download"
	"monomer/job"
	"monomer/pipeline"
	"monomer/stages"
)

// TestREADMEExitCodes: the manual's exit-code table (docs/running.md) lists exactly the
// exit* constants of main.go, and each sentinel lands on the row whose
// meaning names it, so the table a scheduler's retry rule is written from
// is the code's.
func TestREADMEExitCodes(t *testing.T) {
	readme, err := os.ReadFile("../../docs/running.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "## Exit codes\n")
	if !ok {
		t.Fatal("docs/running.md has no \"## Exit codes\" section")
	}
	rows := map[int]string{}
	row := regexp.MustCompile(`(?m)^\| (\d+) \| (.*) \|$`)
	for _, m := range row.FindAllStringSubmatch(strings.SplitN(strings.TrimLeft(table, "\n"), "\n\n", 2)[0], -1) {
		code, _ := strconv.Atoi(m[1])
		rows[code] = m[2]
	}

	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "main.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[int]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.INT && strings.HasPrefix(name.Name, "exit") {
					v, _ := strconv.Atoi(lit.Value)
					consts[v] = name.Name
				}
			}
		}
	}
	if got, want := slices.Sorted(maps.Keys(rows)), slices.Sorted(maps.Keys(consts)); !slices.Equal(got, want) {
		t.Fatalf("README's exit codes %v, main.go's %v (%v)", got, want, consts)
	}
	for code := range consts {
		if !strings.Contains(exitCodesHelp, fmt.Sprintf("\n  %-4d %s", code, "")) {
			t.Errorf("--help lacks code %d", code)
		}
	}

	tests := []struct {
		err  error
		word string // in the README's meaning of the code
	}{
		{nil, "success"},
		{errors.New("x"), "failure"},
		{job.ErrConfig, "invalid job file"},
		{pipeline.ErrUsage, "usage error"},
		{job.ErrUsage, "usage error"}, // a --set without '=': the job's own sentinel since the runner imports no job
		{pipeline.ErrUnreadable, "could not be read"},
		{amazon.ErrCorrupt, "corrupt"},
		{pipeline.ErrBadInput, "bad input"},
		{pipeline.ErrLocked, "locked"},
		{download.ErrLocked, "being fetched"},
		{pipeline.ErrMissingInput, "does not exist"},
		{stages.ErrNotPromoted, "not promoted"},
		{context.Canceled, "interrupted"},
	}
	for _, tc := range tests {
		code := exitCode(fmt.Errorf("wrapped: %w", tc.err))
		if tc.err == nil {
			code = exitCode(nil)
		}
		if !strings.Contains(rows[code], tc.word) {
			t.Errorf("%v exits %d, whose README meaning %q does not say %q", tc.err, code, rows[code], tc.word)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"monomer/pipeline"
)

// TestFreshCommands: every newRootCommand starts from the flags' defaults,
// so a flag given to one command tree does not leak into the next.
func TestFreshCommands(t *testing.T) {
	path := filepath.Join(jobDir(t), "job.yaml")
	plan := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		root := newRootCommand()
		root.SetOut(&out)
		if err := execute(context.Background(), root, append([]string{"plan", path}, args...)); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if js := plan("--json"); !strings.HasPrefix(js, "{") {
		t.Fatalf("plan --json: %q", js)
	}
	if txt := plan(); strings.HasPrefix(txt, "{") || !strings.Contains(txt, "a.ingest <- ") {
		t.Fatalf("plan after plan --json: %q", txt)
	}
}

// TestUnknownCommand: cobra's own error for an unknown subcommand is a
// usage error by type, with cobra's text.
func TestUnknownCommand(t *testing.T) {
	root := newRootCommand()
	root.SetOut(&bytes.Buffer{})
	err := execute(context.Background(), root, []string{"rnu"})
	if !errors.Is(err, pipeline.ErrUsage) || exitCode(err) != exitUsage || !strings.HasPrefix(err.Error(), `unknown command "rnu" for "monomer"`) {
		t.Fatalf("err = %v", err)
	}
	root = newRootCommand()
	root.SetOut(&bytes.Buffer{})
	if err := execute(context.Background(), root, []string{"run", "--forse"}); !errors.Is(err, pipeline.ErrUsage) || err.Error() != "usage: unknown flag: --forse" {
		t.Fatalf("unknown flag: %v", err)
	}
}

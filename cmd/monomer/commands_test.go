package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

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

// TestUnknownCommand: an unknown subcommand is a usage error by type, on
// one line with the command meant (cobra's suggestion took three).
func TestUnknownCommand(t *testing.T) {
	root := newRootCommand()
	root.SetOut(&bytes.Buffer{})
	err := execute(context.Background(), root, []string{"rnu"})
	if !errors.Is(err, pipeline.ErrUsage) || exitCode(err) != exitUsage || !strings.HasPrefix(err.Error(), `usage: unknown command "rnu" for "monomer"; did you mean run? (commands: blas, `) {
		t.Fatalf("err = %v", err)
	}
	root = newRootCommand()
	root.SetOut(&bytes.Buffer{})
	if err := execute(context.Background(), root, []string{"run", "--forse"}); !errors.Is(err, pipeline.ErrUsage) || err.Error() != "usage: unknown flag: --forse" {
		t.Fatalf("unknown flag: %v", err)
	}
}

// TestUsageErrorsExit2: every command, given an argument too many, an
// unknown flag or (for a command grouping others) an unknown or missing
// subcommand, exits 2 with one line and prints no help. cobra's own checks
// exited 1 (blas a.yaml b.yaml, gen extra), and a group printed its help
// and exited 0 (cache trm, cache, completion nosuch, help nosuch).
func TestUsageErrorsExit2(t *testing.T) {
	dir := jobDir(t)
	var cases [][]string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		path := strings.Fields(c.CommandPath())[1:]
		with := func(more ...string) []string { return append(slices.Clone(path), more...) }
		cases = append(cases, with("--no-such-flag"))
		if c.HasSubCommands() {
			cases = append(cases, with(), with("trm"), with("trm", "job.yaml"))
		} else {
			// One argument more than the most the command takes.
			most := -1
			for n := range 4 {
				if c.ValidateArgs(slices.Repeat([]string{"job.yaml"}, n)) == nil {
					most = n
				}
			}
			if most < 0 || most == 3 {
				t.Errorf("%s takes %d arguments", c.CommandPath(), most)
			}
			cases = append(cases, with(slices.Repeat([]string{"job.yaml"}, most+1)...))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand())
	cases = append(cases,
		[]string{"blas", "job.yaml", "job.yaml"}, // the report's cases
		[]string{"gen", "--scale", "tiny", "--seed", "1", "--out", "x", "extra"},
		[]string{"download", "extra", "--release", "2014", "--category", "Baby", "--out", "x"},
		[]string{"help", "nosuch"},
		[]string{"help", "run", "extra"},
		// Flags that cannot give what they promise: one file for two
		// writers, a profile of a dry run (L6: a file that was neither, a
		// flag ignored).
		[]string{"run", "job.yaml", "--trace", "p.out", "--cpuprofile", "./p.out"},
		[]string{"run", "job.yaml", "--dry-run", "--trace", "t.out"},
		[]string{"run", "job.yaml", "--dry-run", "--cpuprofile", "t.out"},
	)
	for _, args := range cases {
		r := monomer(t, dir, "fake", nil, args...)
		if r.code != exitUsage || r.stdout != "" || !strings.HasPrefix(r.stderr, "monomer: usage: ") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("monomer %s: exit %d, stdout %q, stderr %q; want exit 2 and one line", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	for _, f := range []string{"p.out", "t.out", "runs"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was made (%v)", f, err)
		}
	}
	if len(cases) < 40 {
		t.Errorf("only %d cases: the walk missed commands", len(cases))
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDataPathNotAFile: a data path that can never be a data file (a
// directory, a device, a named pipe, a path through a regular file) exits 2
// and a symbolic link loop exits 3, never 1, which a scheduler retries
// though the same path fails the same way; a missing file stays 5. Each
// message is one line naming the path and what it is, found before any
// stage runs (it was each experiment's ingest failing: "(2 stages
// failed)").
func TestDataPathNotAFile(t *testing.T) {
	dir := jobDir(t)
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"loop2", "loop1"}, {"loop1", "loop2"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		meta   string
		code   int
		stderr string
	}{
		{"folder", 2, "monomer: usage: a/ingest: input file " + filepath.Join(dir, "folder") + " is a directory, not a data file (check data_dir and data in the job file)\n"},
		{"/dev/null", 2, "monomer: usage: a/ingest: input file /dev/null is a character device, not a data file (check data_dir and data in the job file)\n"},
		{"pipe", 2, "monomer: usage: a/ingest: input file " + filepath.Join(dir, "pipe") + " is a named pipe, not a data file (check data_dir and data in the job file)\n"},
		{"meta.txt/x", 2, "monomer: usage: a/ingest: input file " + filepath.Join(dir, "meta.txt/x") + " cannot be a file: stat " + filepath.Join(dir, "meta.txt/x") + ": not a directory (check data_dir and data in the job file)\n"},
		{"loop1", 3, "monomer: bad input: a/ingest: input file " + filepath.Join(dir, "loop1") + " is a symbolic link loop (fix the links in the data folder)"},
		{"gone.txt", 5, "input file " + filepath.Join(dir, "gone.txt") + " does not exist"},
	}
	for _, tt := range tests {
		r := monomer(t, dir, "fake", []string{"MONOMER_STORE=off"}, "run", "job.yaml", "--set", "data.meta="+tt.meta, "--run-id", "x")
		if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
			t.Errorf("data.meta=%s: exit %d, want %d; stderr:\n%s", tt.meta, r.code, tt.code, r.stderr)
		}
		if tt.code == 2 && !strings.HasSuffix(r.stderr, tt.stderr) {
			t.Errorf("data.meta=%s: stderr %q, want %q", tt.meta, r.stderr, tt.stderr)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadOnlyRunDir: an existing run directory on a read-only file system
// exits 2 for run and verify (a retry cannot make it writable), with a
// message that says so. It mounts a tmpfs, so it needs root (or
// CAP_SYS_ADMIN) and skips without; pipeline's TestLockErrorReadOnly checks
// the classification everywhere.
func TestReadOnlyRunDir(t *testing.T) {
	dir := jobDir(t)
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=16m"); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): needs root", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	runs := filepath.Join(mnt, "runs")
	if r := monomer(t, dir, "fake", []string{"MONOMER_STORE=off"}, "run", "job.yaml", "--run-dir", runs); r.code != 0 {
		t.Fatalf("run on the writable tmpfs: exit %d\n%s", r.code, r.stderr)
	}
	if err := syscall.Mount("", mnt, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount read-only: %v", err)
	}
	want := "monomer: usage: run directory " + runs + " is on a read-only file system: run and verify write its lock file (.lock) and scratch files; give a writable --run-dir, or copy the run directory to one\n"
	for _, cmd := range []string{"run", "verify"} {
		r := monomer(t, dir, "fake", []string{"MONOMER_STORE=off"}, cmd, "job.yaml", "--run-dir", runs)
		if r.code != 2 || !strings.HasSuffix(r.stderr, want) {
			t.Errorf("%s on a read-only run directory: exit %d, want 2; stderr:\n%s", cmd, r.code, r.stderr)
		}
	}
}

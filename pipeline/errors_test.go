package pipeline

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestLockErrorReadOnly: the lock file of an existing run directory on a
// read-only file system (EROFS), or in one without write permission, is a
// usage error (exit 2): no retry makes the directory writable. A cause a
// retry may get past stays a plain failure. cmd/monomer's TestReadOnlyRunDir
// checks a real read-only mount where it may mount one.
func TestLockErrorReadOnly(t *testing.T) {
	tests := []struct {
		err   error
		usage bool
		text  string
	}{
		{syscall.EROFS, true, "usage: run directory runs/x is on a read-only file system: run and verify write its lock file (.lock)"},
		{syscall.EACCES, true, "usage: run directory runs/x cannot be written: open runs/x/.lock: permission denied"},
		{syscall.ENOSPC, false, "pipeline: lock runs/x/.lock: open runs/x/.lock: no space left on device"},
		{syscall.EIO, false, "pipeline: lock runs/x/.lock: open runs/x/.lock: input/output error"},
	}
	for _, tt := range tests {
		err := lockError("runs/x/.lock", &fs.PathError{Op: "open", Path: "runs/x/.lock", Err: tt.err})
		if errors.Is(err, ErrUsage) != tt.usage || !strings.HasPrefix(err.Error(), tt.text) {
			t.Errorf("%v: %v (usage %v), want usage %v and %q", tt.err, err, errors.Is(err, ErrUsage), tt.usage, tt.text)
		}
	}
	// A directory in the lock's place is not monomer's lock: usage, left
	// as it is (sidefile_test.go has the other intruders).
	dir := t.TempDir()
	if err := os.Mkdir(dir+"/"+LockName, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := acquire(dir+"/"+LockName, true); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory as the lock: %v, want usage naming a directory", err)
	}
}

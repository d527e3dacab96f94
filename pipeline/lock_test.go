package pipeline

import (
	"os"
	"path/filepath"
	"testing"
)

// A run taking the lock shared (restricted to some experiments) erases a
// dead exclusive holder's line, so no message names that run afterwards,
// and writes no line of its own.
func TestSharedLockErasesDeadHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), LockName)
	const dead = "pid 999999 started 2026-01-01T00:00:00Z on gone"
	must(t, os.WriteFile(path, []byte(dead+"\n"), 0o644))
	l, err := acquire(path, false)
	must(t, err)
	b, err := os.ReadFile(path)
	must(t, err)
	if l.previous != dead || len(b) != 0 {
		t.Errorf("shared over a dead holder: previous %q, file %q", l.previous, b)
	}
	l.release()
	if l, err = acquire(path, false); err != nil || l.previous != "" {
		t.Fatalf("shared over a clean file: %v %q", err, l.previous)
	}
	defer l.release()
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Errorf("a shared holder wrote %q", b)
	}
}

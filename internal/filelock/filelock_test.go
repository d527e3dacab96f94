package filelock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A second TryLock fails naming the holder; after Unlock the file is gone
// and the lock can be taken again.
func TestTryLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	l, err := TryLock(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = TryLock(p)
	var he *HeldError
	if !errors.Is(err, ErrHeld) || !errors.As(err, &he) || !strings.HasPrefix(he.Holder, fmt.Sprintf("pid %d started ", os.Getpid())) {
		t.Fatalf("second lock: %v, want ErrHeld naming pid %d", err, os.Getpid())
	}
	l.Unlock()
	l.Unlock()
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("lock file after Unlock: %v", err)
	}
	l, err = TryLock(p)
	if err != nil {
		t.Fatal(err)
	}
	l.Unlock()
}

// A lock file left by a dead holder (its line still there, no flock) is
// taken over and its line replaced.
func TestTryLockStale(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	if err := os.WriteFile(p, []byte("pid 1 started 2020-01-01T00:00:00Z on elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := TryLock(p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	b, _ := os.ReadFile(p)
	if !strings.HasPrefix(string(b), fmt.Sprintf("pid %d ", os.Getpid())) {
		t.Errorf("holder line %q", b)
	}
}

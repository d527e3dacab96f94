package filelock

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"monomer/internal/sidefile"
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

// What is at a lock's name and is not a lock monomer wrote (a link to a
// file elsewhere, a directory, a pipe, a file of other content) is refused
// and left as it is: not truncated, not written, not removed.
func TestTryLockForeign(t *testing.T) {
	for _, tc := range []struct {
		name string
		put  func(p, victim string) error
	}{
		{"symlink", func(p, v string) error { return os.Symlink(v, p) }},
		{"directory", func(p, _ string) error { return os.Mkdir(p, 0o755) }},
		{"fifo", func(p, _ string) error { return syscall.Mkfifo(p, 0o644) }},
		{"notes", func(p, _ string) error { return os.WriteFile(p, []byte("my notes\n"), 0o644) }},
		{"holder line and more", func(p, _ string) error {
			return os.WriteFile(p, []byte("pid 1 started 2020-01-01T00:00:00Z on h\nmore\n"), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			victim := filepath.Join(t.TempDir(), "victim")
			if err := os.WriteFile(victim, []byte("victim\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "x.lock")
			if err := tc.put(p, victim); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Lstat(p)
			var content []byte
			if before.Mode().IsRegular() {
				content, _ = os.ReadFile(p)
			}
			l, err := TryLock(p)
			if err == nil {
				l.Unlock()
				t.Fatal("locked")
			}
			if !errors.Is(err, sidefile.ErrForeign) || !strings.Contains(err.Error(), p) {
				t.Errorf("err %v: want ErrForeign naming %s", err, p)
			}
			if b, _ := os.ReadFile(victim); string(b) != "victim\n" {
				t.Errorf("victim now %q", b)
			}
			after, err := os.Lstat(p)
			if err != nil || after.Mode() != before.Mode() {
				t.Fatalf("%s after: %v %v", tc.name, after, err)
			}
			if before.Mode().IsRegular() {
				if b, _ := os.ReadFile(p); !bytes.Equal(b, content) {
					t.Errorf("file now %q, was %q", b, content)
				}
			}
		})
	}
}

// IsLock: empty, or one holder line (the stale line of another host too).
func TestIsLock(t *testing.T) {
	for s, want := range map[string]bool{
		"":                  true,
		HolderLine() + "\n": true,
		"pid 7 started 2026-12-01T23:00:00Z on build-3.example\n": true,
		"pid 7 started 2026-12-01T23:00:00Z on a b\n":             false,
		"notes\n":       false,
		"pid x started": false,
		"\n\n":          false,
	} {
		if got := IsLock([]byte(s)); got != want {
			t.Errorf("IsLock(%q) = %v", s, got)
		}
	}
}

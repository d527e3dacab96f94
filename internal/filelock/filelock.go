package filelock

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// ErrHeld: another live process (or another open file in this one) holds
// the lock.
var ErrHeld = errors.New("held by another process")

// HeldError is TryLock's answer on contention.
type HeldError struct {
	Path string
	// Holder is the holder's line, or "another process" when it has not
	// written one (yet).
	Holder string
}

func (e *HeldError) Error() string { return fmt.Sprintf("%s is held by %s", e.Path, e.Holder) }
func (e *HeldError) Unwrap() error { return ErrHeld }

// Lock is a held lock.
type Lock struct {
	f    *os.File
	path string
}

// TryLock takes the lock at path (created if missing) without waiting and
// writes this process's holder line into it. On contention it returns a
// *HeldError.
func TryLock(path string) (*Lock, error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				b, _ := os.ReadFile(path)
				who := strings.TrimSpace(string(b))
				if who == "" {
					who = "another process"
				}
				return nil, &HeldError{Path: path, Holder: who}
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// Unlock removes the file before dropping the lock: a file opened
		// just before that removal is locked here on a dead inode, while
		// a third process may lock a new file at path. Only the lock of
		// the file at path counts.
		fst, err1 := f.Stat()
		pst, err2 := os.Stat(path)
		if err1 != nil || err2 != nil || !os.SameFile(fst, pst) {
			f.Close()
			continue
		}
		host, _ := os.Hostname()
		line := fmt.Sprintf("pid %d started %s on %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339), host)
		if err := f.Truncate(0); err == nil {
			f.WriteAt([]byte(line), 0)
		}
		return &Lock{f: f, path: path}, nil
	}
}

// Unlock removes the lock file and drops the lock. Nil-safe and idempotent.
func (l *Lock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	os.Remove(l.path)
	flock(l.f, syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

package filelock

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"time"

	"monomer/internal/sidefile"
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

// HolderLine is the line a lock's holder writes into it.
func HolderLine() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("pid %d started %s on %s", os.Getpid(), time.Now().UTC().Format(time.RFC3339), host)
}

// holderRE matches HolderLine's lines (a host name has no spaces).
var holderRE = regexp.MustCompile(`^pid [0-9]+ started [0-9TZ:+.-]+ on \S*$`)

// LockBytes is as much of a lock file as IsLock needs to read.
const LockBytes = 4096

// IsLock reports whether b, a lock file's content, is in the form monomer
// writes: empty, or one holder line. Any other file at a lock's name is
// someone else's.
func IsLock(b []byte) bool {
	s := strings.TrimSuffix(string(b), "\n")
	return s == "" || (len(b) < LockBytes && holderRE.MatchString(s))
}

// TryLock takes the lock at path (created if missing) without waiting and
// writes this process's holder line into it. On contention it returns a
// *HeldError. A symbolic link, a directory, a pipe or a file that is not
// a lock (IsLock) at path is a *sidefile.ForeignError, left as it is.
func TryLock(path string) (*Lock, error) {
	for {
		f, err := sidefile.Open(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			if errors.Is(err, syscall.EWOULDBLOCK) {
				who := strings.TrimSpace(string(readLock(f)))
				f.Close()
				if who == "" {
					who = "another process"
				}
				return nil, &HeldError{Path: path, Holder: who}
			}
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// Unlock removes the file before dropping the lock: a file opened
		// just before that removal is locked here on a dead inode, while
		// a third process may lock a new file at path. Only the lock of
		// the file at path counts.
		if !atPath(f, path) {
			f.Close()
			continue
		}
		if b := readLock(f); !IsLock(b) {
			flock(f, syscall.LOCK_UN)
			f.Close()
			return nil, sidefile.Foreign(path, fmt.Sprintf("a file that is not a lock (it starts %q)", head(b)))
		}
		if err := f.Truncate(0); err == nil {
			f.WriteAt([]byte(HolderLine()+"\n"), 0)
		}
		return &Lock{f: f, path: path}, nil
	}
}

// atPath reports whether f is the file now at path.
func atPath(f *os.File, path string) bool {
	fst, err1 := f.Stat()
	pst, err2 := os.Lstat(path)
	return err1 == nil && err2 == nil && os.SameFile(fst, pst)
}

func readLock(f *os.File) []byte {
	b := make([]byte, LockBytes)
	n, _ := f.ReadAt(b, 0)
	return b[:n]
}

// head is the start of b for a message.
func head(b []byte) string {
	s, _, _ := strings.Cut(string(b[:min(len(b), 40)]), "\n")
	return s
}

// Unlock removes the lock file and drops the lock. Nil-safe and idempotent.
func (l *Lock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	// Only the file locked: not whatever was put at its name since.
	if atPath(l.f, l.path) {
		os.Remove(l.path)
	}
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

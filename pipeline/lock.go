package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"monomer/internal/filelock"
	"monomer/internal/sidefile"
)

// LockName is the lock file at the root of a run directory (and of each
// experiment directory).
const LockName = ".lock"

// Locking is two-level so that a scheduler can run different experiments of
// one run directory at the same time (one Airflow task per experiment and
// stage) while a whole-job run, or a job-level stage reading every
// experiment, still excludes everything else:
//
//   - DIR/.lock: exclusive for a run that includes job-level stages or all
//     experiments, shared for a run restricted by --experiment;
//   - DIR/<experiment>/.lock: exclusive for every experiment the run may
//     touch.
//
// flock(2) locks vanish with their process, so a lock left by a killed run
// is taken over simply by acquiring it; its pid line is only for messages.
// flock is advisory and not reliable on some network file systems.
type lock struct {
	f         *os.File
	path      string
	exclusive bool
	// Previous is the holder line found in a lock file we took over from a
	// dead process ("" when the file was clean).
	previous string
}

// holderLine is written into a lock file by its exclusive holder.
func holderLine() string { return filelock.HolderLine() }

// acquire takes the lock at path without waiting. On contention it returns
// an error wrapping ErrLocked that names the holder. A link, a directory,
// a pipe or a file that is not a lock (filelock.IsLock) at path is not
// monomer's: ErrUsage naming it, the file left as it is.
func acquire(path string, exclusive bool) (*lock, error) {
	f, err := sidefile.Open(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, lockError(path, err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if err := flock(f, how|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("pipeline: %w: %s is held by %s", ErrLocked, filepath.Dir(path), holders(path))
		}
		return nil, fmt.Errorf("pipeline: lock %s: %w", path, err)
	}
	l := &lock{f: f, path: path, exclusive: exclusive}
	b := make([]byte, filelock.LockBytes)
	n, _ := f.ReadAt(b, 0)
	if !filelock.IsLock(b[:n]) {
		flock(f, syscall.LOCK_UN)
		f.Close()
		return nil, lockError(path, sidefile.Foreign(path, "a file that is not a lock"))
	}
	l.previous = strings.TrimSpace(string(b[:n]))
	// A line left in the file belongs to a dead exclusive holder (a live
	// one would have made us fail): erase it so messages never name it.
	// Shared holders may all do this at once; they never write a line.
	if l.previous != "" || exclusive {
		f.Truncate(0)
	}
	if exclusive {
		f.WriteAt([]byte(holderLine()+"\n"), 0)
		f.Sync()
	}
	return l, nil
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// holders describes who holds the lock at path: the exclusive holder's line,
// or, for a root lock held shared, the holders of the experiment locks.
func holders(path string) string {
	b, _ := sidefile.ReadFile(path, filelock.LockBytes)
	if s := strings.TrimSpace(string(b)); s != "" && filelock.IsLock(b) {
		return s
	}
	// Shared holders do not write the root file; they hold experiment locks.
	dir := filepath.Dir(path)
	entries, _ := os.ReadDir(dir)
	var who []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(dir, e.Name(), LockName)
		f, err := sidefile.Open(p, os.O_RDONLY, 0)
		if err != nil {
			continue
		}
		if flock(f, syscall.LOCK_SH|syscall.LOCK_NB) != nil {
			b, _ := sidefile.ReadFile(p, filelock.LockBytes)
			who = append(who, fmt.Sprintf("%s (experiment %s)", strings.TrimSpace(string(b)), e.Name()))
		} else {
			flock(f, syscall.LOCK_UN)
		}
		f.Close()
	}
	if len(who) == 0 {
		return "another run"
	}
	return strings.Join(who, "; ")
}

// release empties the holder line and drops the lock. The file stays: removing
// it would let a third run lock a new inode while a second holds the old.
func (l *lock) release() {
	if l == nil || l.f == nil {
		return
	}
	if l.exclusive {
		l.f.Truncate(0)
	}
	flock(l.f, syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}

// Holders lists the runs holding the run directory now (the root lock's
// holder line, then each experiment lock's, "(experiment NAME)" added),
// without taking any lock: a status probe must never make a starting run
// fail. A line is a live run's unless it names a pid of this host that no
// longer exists (a killed run's leftover; its lock is already gone). A run
// on another host (a shared file system) cannot be checked and is listed.
func Holders(runDir string) []string {
	var out []string
	if l := liveHolder(filepath.Join(runDir, LockName)); l != "" {
		out = append(out, l)
	}
	entries, _ := os.ReadDir(runDir)
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if l := liveHolder(filepath.Join(runDir, e.Name(), LockName)); l != "" {
			out = append(out, fmt.Sprintf("%s (experiment %s)", l, e.Name()))
		}
	}
	return out
}

// liveHolder returns the holder line of the lock file at path, or "" when
// there is none or its process is gone.
func liveHolder(path string) string {
	b, _ := sidefile.ReadFile(path, filelock.LockBytes)
	line := strings.TrimSpace(string(b))
	var pid int
	var started, host string
	if _, err := fmt.Sscanf(line, "pid %d started %s on %s", &pid, &started, &host); err != nil {
		return ""
	}
	if me, _ := os.Hostname(); host == me && pid > 0 {
		// Signal 0 checks existence; EPERM means it exists as another user's.
		if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
			return ""
		}
	}
	return line
}

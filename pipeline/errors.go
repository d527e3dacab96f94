package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"monomer/internal/sidefile"
	"monomer/pipeline/cache"
)

// Sentinels the CLI maps to exit codes (see cmd/monomer/main.go). Wrap them
// with %w and a message that names the file, field or place.
var (
	// ErrBadInput: malformed records above the reject threshold, or an
	// experiment with nothing in scope (exit 3).
	ErrBadInput = errors.New("bad input")
	// ErrLocked: the run directory is held by another live run (exit 4).
	ErrLocked = errors.New("run directory locked")
	// ErrUsage: a wrong command line (exit 2), like an invalid job file.
	// The job file's parser has sentinels of its own (package job), which
	// the CLI maps to the same exit code.
	ErrUsage = errors.New("usage")
	// ErrMissingInput: a raw input file the job names does not exist
	// (exit 5). Unlike bad input it may be there on a retry: data arriving
	// late is the commonest reason a scheduled run starts too early.
	ErrMissingInput = errors.New("does not exist")
	// ErrUnreadable: diff could not read a table or manifest of a run
	// directory (exit 2), as opposed to reading both and finding them
	// different (exit 1).
	ErrUnreadable = errors.New("cannot read")
)

func notExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// inputFileError explains why the raw input file f of node id cannot be
// hashed, classed by whether a retry can help: a missing file may arrive
// (ErrMissingInput); a path that can never be a data file, a directory, a
// device, a pipe or a path through a regular file, is the job's mistake
// (ErrUsage); a symbolic link loop is a data folder in need of repair
// (ErrBadInput). Anything else (an I/O error) stays a plain failure.
func inputFileError(id, f string, err error) error {
	var nr *cache.NotRegularError
	switch {
	case notExist(err):
		return fmt.Errorf("pipeline: %s: input file %s %w (check data_dir and data in the job file; a retry finds data that arrives late)", id, f, ErrMissingInput)
	case errors.As(err, &nr):
		return fmt.Errorf("%w: %s: input file %s is %s, not a data file (check data_dir and data in the job file)", ErrUsage, id, f, nr.What())
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ENAMETOOLONG):
		return fmt.Errorf("%w: %s: input file %s cannot be a file: %v (check data_dir and data in the job file)", ErrUsage, id, f, err)
	case errors.Is(err, syscall.ELOOP):
		return fmt.Errorf("%w: %s: input file %s is a symbolic link loop (fix the links in the data folder)", ErrBadInput, id, f)
	}
	return fmt.Errorf("pipeline: %s: input file: %w", id, err)
}

// runDirError explains why the run directory dir cannot be created. Where a
// retry cannot help (a path through a regular file, no permission, a
// read-only or virtual file system such as /proc) it is an ErrUsage, so a
// scheduler does not retry it forever; other causes (a full disk) stay
// plain failures, which a retry may get past.
func runDirError(dir string, err error) error {
	if permanentFSError(err) {
		return fmt.Errorf("%w: run directory %s cannot be created: %v", ErrUsage, dir, err)
	}
	return fmt.Errorf("pipeline: run directory: %w", err)
}

// lockError explains why the lock file at path cannot be opened. The lock
// is the first thing run and verify write in an existing run directory, so
// a directory on a read-only file system, or one without write permission,
// is found here; no retry gets past either, so both are an ErrUsage.
func lockError(path string, err error) error {
	dir := filepath.Dir(path)
	switch {
	case errors.Is(err, sidefile.ErrForeign):
		return fmt.Errorf("pipeline: %w: %w", ErrUsage, err)
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("%w: run directory %s is on a read-only file system: run and verify write its lock file (%s) and scratch files; give a writable --run-dir, or copy the run directory to one", ErrUsage, dir, LockName)
	case permanentFSError(err) && !notExist(err):
		return fmt.Errorf("%w: run directory %s cannot be written: %v", ErrUsage, dir, err)
	}
	return fmt.Errorf("pipeline: lock %s: %w", path, err)
}

// storeDirError is runDirError for the store's folder.
func storeDirError(dir string, err error) error {
	if permanentFSError(err) {
		return fmt.Errorf("%w: store %s cannot be made: %v", ErrUsage, dir, err)
	}
	return err
}

// permanentFSError reports whether err is one a retry cannot get past.
func permanentFSError(err error) bool {
	for _, permanent := range []error{fs.ErrNotExist, fs.ErrExist, fs.ErrPermission, syscall.ENOTDIR, syscall.EROFS, syscall.ENAMETOOLONG} {
		if errors.Is(err, permanent) {
			return true
		}
	}
	return false
}

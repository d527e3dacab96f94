package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
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

package pipeline

import (
	"errors"

	"monomer/job"
)

// Sentinels the CLI maps to exit codes (see cmd/monomer/main.go). Wrap them
// with %w and a message that names the file, field or place.
var (
	// ErrBadInput: malformed records above the reject threshold, or an
	// experiment with nothing in scope (exit 3).
	ErrBadInput = errors.New("bad input")
	// ErrLocked: the run directory is held by another live run (exit 4).
	ErrLocked = errors.New("run directory locked")
	// ErrUsage: a wrong command line (exit 2), like job.ErrConfig. It is
	// job.ErrUsage, which --set parsing returns, so one errors.Is serves both.
	ErrUsage = job.ErrUsage
	// ErrUnreadable: diff could not read a table or manifest of a run
	// directory (exit 2), as opposed to reading both and finding them
	// different (exit 1).
	ErrUnreadable = errors.New("cannot read")
)

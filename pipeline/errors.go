package pipeline

import "errors"

// Sentinels the CLI maps to exit codes (see cmd/monomer/main.go). Wrap them
// with %w and a message that names the file, field or place.
var (
	// ErrBadInput: malformed records above the reject threshold (exit 3).
	ErrBadInput = errors.New("bad input")
	// ErrLocked: the run directory is held by another live run (exit 4).
	ErrLocked = errors.New("run directory locked")
	// ErrUsage: a wrong command line (exit 2), like ErrConfig.
	ErrUsage = errors.New("usage")
)

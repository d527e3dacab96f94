// Package sidefile opens, creates and renames the files monomer keeps
// beside its data (locks, run logs, partial downloads, sums) without ever
// following a symbolic link at their names, waiting on a named pipe, or
// replacing what is already there: a file at such a name that monomer did
// not make is a *ForeignError, and is left as it is.
//
// Only the last element of a path is guarded; the folders above it may be
// links (a data folder on another disk is an ordinary setup).
package sidefile

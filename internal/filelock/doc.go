// Package filelock takes exclusive, non-blocking flock(2) locks on lock
// files that name their holder and are removed when released, so that a
// directory of data files is not littered with them.
//
// flock locks vanish with their process: a lock file left by a killed
// process is taken over by the next TryLock, its holder line overwritten.
// flock is advisory and unreliable on some network file systems. The
// holder line has pipeline/lock.go's format ("pid N started T on HOST"),
// and a file at a lock's name that is neither empty nor one such line, or
// is not a regular file, is someone else's: refused, never written.
package filelock

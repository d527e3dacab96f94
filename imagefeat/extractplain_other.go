//go:build !linux

package imagefeat

import "os"

// reserve does nothing where fallocate(2) is missing: a full disk then
// shows as a fault writing through the mapping, which Extract turns into
// an error.
func reserve(f *os.File, size int64) error { return nil }

// startWriteback does nothing where sync_file_range(2) is missing: the
// runner's fsync writes everything at the end.
func startWriteback(f *os.File, off, n int64) {}

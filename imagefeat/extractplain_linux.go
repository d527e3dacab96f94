package imagefeat

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// reserve allocates the blocks of f's first size bytes (its holes), so a
// full disk fails here; a file system without fallocate is let through.
func reserve(f *os.File, size int64) error {
	if err := unix.Fallocate(int(f.Fd()), 0, 0, size); err != nil && !errors.Is(err, unix.EOPNOTSUPP) {
		return err
	}
	return nil
}

// startWriteback asks the kernel to start writing n bytes of f from off
// to disk, without waiting: only a hint, an error shows again at the
// runner's fsync.
func startWriteback(f *os.File, off, n int64) {
	unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

package sidefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrForeign: the file at a side file's name is not one monomer made.
var ErrForeign = errors.New("not monomer's own file")

// ForeignError names the file and says what it is.
type ForeignError struct {
	Path string
	// Is says what is there: "a symbolic link", "a directory", "a named
	// pipe", or, for a regular file, what its content is.
	Is string
}

func (e *ForeignError) Error() string {
	return fmt.Sprintf("%s is %s: not a file monomer made, so it is left as it is (move it away, or use another folder)", e.Path, e.Is)
}

func (e *ForeignError) Unwrap() error { return ErrForeign }

// Foreign returns a *ForeignError for path, whose content (a regular file's)
// is described by is.
func Foreign(path, is string) error { return &ForeignError{Path: path, Is: is} }

// Kind describes a file mode that is not a regular file's.
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// Check returns a *ForeignError if something other than a regular file is
// at path, nil if a regular file is, and an error wrapping fs.ErrNotExist
// if nothing is.
func Check(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return Foreign(path, Kind(st.Mode()))
	}
	return nil
}

// Open opens the regular file at path as os.OpenFile does with flag and
// perm, but without following a symbolic link at path (O_NOFOLLOW) or
// waiting for a named pipe's other end (O_NONBLOCK, which regular files
// ignore). Anything but a regular file at path is a *ForeignError, and so
// is, when flag writes, a file with more than one name (a hard link).
// With os.O_CREATE|os.O_EXCL it creates the file or fails with
// fs.ErrExist, whatever is there.
func Open(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if err != nil {
		if flag&os.O_EXCL == 0 {
			// ELOOP (a link), EISDIR, ENXIO (a pipe with no reader):
			// say what is there rather than the errno.
			if st, lerr := os.Lstat(path); lerr == nil && !st.Mode().IsRegular() {
				return nil, Foreign(path, Kind(st.Mode()))
			}
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, Foreign(path, Kind(st.Mode()))
	}
	// A hard link is a regular file too: monomer makes none of its side
	// files with a second name, so one to be written is someone else's.
	if n := links(st); n > 1 && flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		f.Close()
		return nil, Foreign(path, fmt.Sprintf("a file with %d names (hard links)", n))
	}
	return f, nil
}

// links is the number of names of the file st describes, 1 if unknown.
func links(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink)
	}
	return 1
}

// ReadFile reads the regular file at path (Open's rules), at most max
// bytes of it (all if max <= 0).
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if max > 0 {
		r = io.LimitReader(f, max)
	}
	return io.ReadAll(r)
}

// Rename renames the regular file old to new, which must not exist: if
// anything is at new (a file, a link, a directory) it fails with an error
// wrapping fs.ErrExist and leaves both as they are.
func Rename(old, new string) error {
	err := renameNoReplace(old, new)
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.EEXIST) || errors.Is(err, fs.ErrExist) {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: fs.ErrExist}
	}
	if !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOSYS) && !errors.Is(err, syscall.ENOTSUP) {
		return err
	}
	// The file system has no rename without replace: a hard link is made
	// only where nothing is, then the old name goes.
	if err := os.Link(old, new); err == nil {
		return os.Remove(old)
	} else if errors.Is(err, fs.ErrExist) {
		return err
	}
	// Neither (a file system without hard links): look, then rename; the
	// lock each caller holds keeps other monomer processes out between.
	if _, err := os.Lstat(new); err == nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: fs.ErrExist}
	}
	return os.Rename(old, new)
}

// WriteAtomic writes b to path whole or not at all: through a new
// temporary file in path's folder (created exclusively, so never through a
// link), fsynced, then renamed over path. What is at path must be a
// regular file, or nothing: anything else is a *ForeignError.
func WriteAtomic(path string, b []byte, perm fs.FileMode) error {
	if err := Check(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

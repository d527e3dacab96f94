package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"monomer/internal/sidefile"
)

// HashCache remembers the sha256 of files by identity, so a 10 GB raw file
// is hashed once and not on every run. The identity is device, inode, size,
// mtime and ctime: touching a file (mtime) makes it miss, and then the
// rehash finds the same content, so the stage stays up to date; rewriting
// the content and restoring the mtime still changes ctime, which no user
// call can set back. Entries are keyed by absolute path.
type HashCache struct {
	path    string // file the cache persists to; "" means memory only
	mu      sync.Mutex
	entries map[string]hashEntry
	dirty   bool
	// foreign: the file at path is not a cache monomer wrote (a link, a
	// pipe, other content); Save leaves it as it is and says so.
	foreign error
}

type hashEntry struct {
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	Size    int64  `json:"size"`
	MtimeNs int64  `json:"mtime_ns"`
	CtimeNs int64  `json:"ctime_ns"`
	SHA256  string `json:"sha256"`
}

// OpenHashCache reads the cache file; a missing or unreadable one starts
// empty (it is only a cache). One that is not a regular file, or not the
// JSON Save writes, is someone else's: the cache starts empty and Save
// never replaces it.
func OpenHashCache(path string) *HashCache {
	c := &HashCache{path: path, entries: map[string]hashEntry{}}
	if path == "" {
		return c
	}
	b, err := sidefile.ReadFile(path, 0)
	if errors.Is(err, sidefile.ErrForeign) {
		c.foreign = err
	}
	if err != nil {
		return c
	}
	if json.Unmarshal(b, &c.entries) != nil {
		c.entries = map[string]hashEntry{}
		c.foreign = sidefile.Foreign(path, "a file that is not monomer's hash cache (not its JSON)")
	}
	return c
}

// ReadOnly makes Save write nothing: Plan and Verify read the cache, and
// write nothing to the run directory.
func (c *HashCache) ReadOnly() { c.path = "" }

func identity(fi os.FileInfo) hashEntry {
	e := hashEntry{Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.Dev = uint64(st.Dev)
		e.Ino = uint64(st.Ino)
		e.CtimeNs = ctimeNs(st) // the field's name differs by system
	}
	return e
}

// NotRegularError is File's error for a path that names something other
// than a regular file: a directory, a device, a named pipe or a socket,
// which have no content to hash (a pipe would block, /dev/zero never end).
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, e.What())
}

// What names the kind of file, with its article: "a directory".
func (e *NotRegularError) What() string {
	switch t := e.Mode.Type(); {
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	}
	return "an irregular file"
}

// File returns the hex sha256 and size of the file at path; a path that is
// not a regular file (after following links) is a *NotRegularError.
func (c *HashCache) File(path string) (string, int64, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", 0, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", 0, err
	}
	if !fi.Mode().IsRegular() {
		return "", 0, &NotRegularError{Path: abs, Mode: fi.Mode()}
	}
	id := identity(fi)
	c.mu.Lock()
	e, ok := c.entries[abs]
	c.mu.Unlock()
	if ok && e.Dev == id.Dev && e.Ino == id.Ino && e.Size == id.Size && e.MtimeNs == id.MtimeNs && e.CtimeNs == id.CtimeNs {
		return e.SHA256, e.Size, nil
	}
	sum, err := HashFile(abs)
	if err != nil {
		return "", 0, err
	}
	// Stat again: a file written while we hashed must not be cached under
	// the identity it had before.
	if fi2, err := os.Stat(abs); err == nil && identity(fi2) == id {
		id.SHA256 = sum
		c.mu.Lock()
		c.entries[abs] = id
		c.dirty = true
		c.mu.Unlock()
	}
	return sum, id.Size, nil
}

// Remember records sum for the file now at path (just written and hashed).
func (c *HashCache) Remember(path, sum string) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return
	}
	id := identity(fi)
	id.SHA256 = sum
	c.mu.Lock()
	c.entries[abs] = id
	c.dirty = true
	c.mu.Unlock()
}

// Forget drops entries under dir (stage directories that were replaced).
func (c *HashCache) Forget(dir string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for p := range c.entries {
		if p == abs || (len(p) > len(abs) && p[:len(abs)] == abs && p[len(abs)] == filepath.Separator) {
			delete(c.entries, p)
			c.dirty = true
		}
	}
}

// Save writes the cache atomically when it changed. Concurrent runs sharing
// the file may lose each other's entries, which only costs a rehash.
func (c *HashCache) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.path == "" || !c.dirty {
		return nil
	}
	if c.foreign != nil {
		c.dirty = false
		return c.foreign
	}
	// Drop entries of files that no longer exist so the cache does not
	// grow without bound over many run ids.
	for _, p := range slices.Sorted(maps.Keys(c.entries)) {
		if _, err := os.Stat(p); err != nil {
			delete(c.entries, p)
		}
	}
	b, err := json.MarshalIndent(c.entries, "", " ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(c.path, b); err != nil {
		return err
	}
	c.dirty = false
	return nil
}

// HashFile is the hex sha256 of the file at path.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, f, make([]byte, 1<<20)); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeFileAtomic writes b to path through a temporary file, fsync and
// rename, so readers see the old or the new content, never a mix.
func writeFileAtomic(path string, b []byte) error {
	if err := sidefile.WriteAtomic(path, b, 0o644); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs directory dir, so the entries renamed into it last.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Package sidefiletest holds what the side-file tests of several packages
// share: the things other than monomer's own file that may stand at a
// side file's name, and a snapshot of a path to show that none of them
// was changed.
package sidefiletest

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// An Intruder is something other than monomer's own file at a side file's
// name. Put makes it at path; victim is a file outside the directory that
// a link may point at.
type Intruder struct {
	Name string
	Put  func(t testing.TB, path, victim string)
}

// Intruders are a link to the victim, a dangling link, a directory with a
// file in it, a named pipe, a regular file holding foreign (a user's
// notes), and a hard link of the victim.
func Intruders(foreign []byte) []Intruder {
	return []Intruder{
		{"symlink", func(t testing.TB, p, v string) { must(t, os.Symlink(v, p)) }},
		{"dangling symlink", func(t testing.TB, p, v string) { must(t, os.Symlink(v+".none", p)) }},
		{"directory", func(t testing.TB, p, _ string) {
			must(t, os.Mkdir(p, 0o755))
			must(t, os.WriteFile(filepath.Join(p, "inside"), []byte("x"), 0o644))
		}},
		{"fifo", func(t testing.TB, p, _ string) { must(t, syscall.Mkfifo(p, 0o644)) }},
		{"foreign file", func(t testing.TB, p, _ string) { must(t, os.WriteFile(p, foreign, 0o644)) }},
		{"hard link", func(t testing.TB, p, v string) { must(t, os.Link(v, p)) }},
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Snapshot is what is at p: its type, a link's target, a file's sha256, a
// directory's entries and their sha256s. Equal snapshots before and after
// mean nothing at p was written, moved or deleted.
func Snapshot(t testing.TB, p string) string {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		return "missing: " + err.Error()
	}
	hash := func(p string) string {
		b, _ := os.ReadFile(p)
		h := sha256.Sum256(b)
		return hex.EncodeToString(h[:])
	}
	switch m := st.Mode(); {
	case m&fs.ModeSymlink != 0:
		dst, _ := os.Readlink(p)
		return "link to " + dst
	case m.IsDir():
		ents, _ := os.ReadDir(p)
		s := "dir"
		for _, e := range ents {
			s += " " + e.Name() + "=" + hash(filepath.Join(p, e.Name()))
		}
		return s
	case m.IsRegular():
		return "file " + hash(p)
	}
	return st.Mode().String()
}

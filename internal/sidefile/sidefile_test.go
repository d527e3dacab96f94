package sidefile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// intruder puts something other than monomer's file at path; victim is a
// file outside the folder that a link points at.
type intruder struct {
	name string
	put  func(t *testing.T, path, victim string)
	is   string // what the error says is there
}

var intruders = []intruder{
	{"symlink", func(t *testing.T, p, v string) { must(t, os.Symlink(v, p)) }, "a symbolic link"},
	{"dangling symlink", func(t *testing.T, p, v string) { must(t, os.Symlink(v+".none", p)) }, "a symbolic link"},
	{"directory", func(t *testing.T, p, _ string) {
		must(t, os.Mkdir(p, 0o755))
		must(t, os.WriteFile(filepath.Join(p, "inside"), []byte("x"), 0o644))
	}, "a directory"},
	{"fifo", func(t *testing.T, p, _ string) { must(t, syscall.Mkfifo(p, 0o644)) }, "a named pipe"},
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// setup makes a folder and a victim outside it.
func setup(t *testing.T) (dir, victim string, content []byte) {
	dir, out := t.TempDir(), t.TempDir()
	victim = filepath.Join(out, "victim")
	content = []byte("the victim's bytes\n")
	must(t, os.WriteFile(victim, content, 0o644))
	return dir, victim, content
}

// unchanged fails unless the victim holds its bytes and path is still what
// the intruder put there.
func unchanged(t *testing.T, path, victim string, content []byte, in intruder) {
	t.Helper()
	if b, err := os.ReadFile(victim); err != nil || !bytes.Equal(b, content) {
		t.Errorf("victim now %q, %v", b, err)
	}
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("%s is gone: %v", in.name, err)
	}
	if got := Kind(st.Mode()); got != in.is {
		t.Errorf("%s is now %s", in.name, got)
	}
	if in.name == "directory" {
		if b, err := os.ReadFile(filepath.Join(path, "inside")); err != nil || string(b) != "x" {
			t.Errorf("directory's file: %q %v", b, err)
		}
	}
}

// Open refuses whatever is not a regular file at the name, for every flag
// set monomer uses, without blocking on a pipe or writing through a link.
func TestOpenRefuses(t *testing.T) {
	flags := map[string]int{
		"read":   os.O_RDONLY,
		"write":  os.O_WRONLY | os.O_CREATE,
		"lock":   os.O_RDWR | os.O_CREATE,
		"append": os.O_RDWR | os.O_APPEND | os.O_CREATE,
	}
	for _, in := range intruders {
		for fname, flag := range flags {
			t.Run(in.name+"/"+fname, func(t *testing.T) {
				dir, victim, content := setup(t)
				p := filepath.Join(dir, "side")
				in.put(t, p, victim)
				f, err := Open(p, flag, 0o644)
				var fe *ForeignError
				if !errors.As(err, &fe) || !errors.Is(err, ErrForeign) || fe.Path != p || fe.Is != in.is {
					if f != nil {
						f.Close()
					}
					t.Fatalf("Open: %v, want a ForeignError saying %s is %s", err, p, in.is)
				}
				unchanged(t, p, victim, content, in)
			})
		}
	}
	// A hard link to a file elsewhere may be read, not written.
	dir, victim, content := setup(t)
	hard := filepath.Join(dir, "side")
	must(t, os.Link(victim, hard))
	if f, err := Open(hard, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644); !errors.Is(err, ErrForeign) {
		if f != nil {
			f.Close()
		}
		t.Errorf("a hard link opened to write: %v", err)
	}
	if b, err := ReadFile(hard, 0); err != nil || !bytes.Equal(b, content) {
		t.Errorf("a hard link read: %q %v", b, err)
	}
	// A regular file opens; O_EXCL refuses one that is there.
	dir, _, _ = setup(t)
	p := filepath.Join(dir, "side")
	f, err := Open(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	must(t, err)
	f.Close()
	if _, err := Open(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644); !errors.Is(err, fs.ErrExist) {
		t.Errorf("O_EXCL over a file: %v", err)
	}
	if b, err := ReadFile(p, 0); err != nil || len(b) != 0 {
		t.Errorf("ReadFile: %q %v", b, err)
	}
}

// Rename never replaces anything at the new name; WriteAtomic replaces a
// regular file only, and never through a link.
func TestRenameAndWriteAtomic(t *testing.T) {
	for _, in := range intruders {
		t.Run(in.name, func(t *testing.T) {
			dir, victim, content := setup(t)
			src, p := filepath.Join(dir, "src"), filepath.Join(dir, "side")
			must(t, os.WriteFile(src, []byte("new"), 0o644))
			in.put(t, p, victim)
			if err := Rename(src, p); !errors.Is(err, fs.ErrExist) {
				t.Errorf("Rename: %v, want ErrExist", err)
			}
			if b, err := os.ReadFile(src); err != nil || string(b) != "new" {
				t.Errorf("source after a refused rename: %q %v", b, err)
			}
			if err := WriteAtomic(p, []byte("new"), 0o644); !errors.Is(err, ErrForeign) {
				t.Errorf("WriteAtomic: %v, want ErrForeign", err)
			}
			unchanged(t, p, victim, content, in)
			if ents, _ := os.ReadDir(dir); len(ents) != 2 {
				t.Errorf("left behind: %v", ents)
			}
		})
	}
	dir, _, _ := setup(t)
	src, p := filepath.Join(dir, "src"), filepath.Join(dir, "side")
	must(t, os.WriteFile(src, []byte("new"), 0o644))
	must(t, Rename(src, p))
	must(t, WriteAtomic(p, []byte("newer"), 0o644))
	if b, err := os.ReadFile(p); err != nil || string(b) != "newer" {
		t.Errorf("after WriteAtomic: %q %v", b, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}

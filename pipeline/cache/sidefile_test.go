package cache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"monomer/internal/sidefile"
)

// intruders put something other than monomer's own file at path.
var intruders = map[string]func(path, victim string) error{
	"symlink":      func(p, v string) error { return os.Symlink(v, p) },
	"directory":    func(p, _ string) error { return os.Mkdir(p, 0o755) },
	"fifo":         func(p, _ string) error { return syscall.Mkfifo(p, 0o644) },
	"foreign file": func(p, _ string) error { return os.WriteFile(p, []byte("my notes\n"), 0o644) },
}

func victimFile(t *testing.T) (path string, check func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "victim")
	must(t, os.WriteFile(path, []byte("victim\n"), 0o644))
	return path, func() {
		t.Helper()
		if b, err := os.ReadFile(path); err != nil || string(b) != "victim\n" {
			t.Errorf("victim now %q, %v", b, err)
		}
	}
}

// A hash cache file that is not monomer's is read as an empty cache and
// never replaced: Save says so, and the file (a link and its target) is as
// it was.
func TestHashCacheForeign(t *testing.T) {
	for name, put := range intruders {
		t.Run(name, func(t *testing.T) {
			victim, check := victimFile(t)
			dir := t.TempDir()
			p := filepath.Join(dir, ".hashcache.json")
			must(t, put(p, victim))
			before, _ := os.Lstat(p)
			c := OpenHashCache(p)
			data := filepath.Join(dir, "data")
			must(t, os.WriteFile(data, []byte("data"), 0o644))
			if _, _, err := c.File(data); err != nil {
				t.Fatal(err)
			}
			if err := c.Save(); !errors.Is(err, sidefile.ErrForeign) {
				t.Errorf("Save: %v, want ErrForeign", err)
			}
			after, err := os.Lstat(p)
			if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
				t.Errorf("%s replaced: %v %v", name, after, err)
			}
			check()
			if ents, _ := os.ReadDir(dir); len(ents) != 2 {
				t.Errorf("left behind: %v", ents)
			}
		})
	}
}

// The store's tag is written through a file it creates: a link at the
// temporary name (a pid's) is not written through, and a link at the
// tag's name makes the folder not a store.
func TestStoreTagForeign(t *testing.T) {
	victim, check := victimFile(t)
	dir := t.TempDir()
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.tmp-%d", StoreTagName, os.Getpid()))
	must(t, os.Symlink(victim, tmp))
	if _, err := OpenStore(dir, 0); !errors.Is(err, sidefile.ErrForeign) {
		t.Errorf("OpenStore: %v, want ErrForeign naming %s", err, tmp)
	}
	check()
	if dst, err := os.Readlink(tmp); err != nil || dst != victim {
		t.Errorf("the link: %q %v", dst, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, StoreTagName)); err == nil {
		t.Error("tagged through a link in the way")
	}

	for name, put := range intruders {
		dir := t.TempDir()
		tag := filepath.Join(dir, StoreTagName)
		must(t, put(tag, victim))
		if _, err := OpenStore(dir, 0); !errors.Is(err, ErrNotStore) {
			t.Errorf("%s at the tag: %v, want ErrNotStore", name, err)
		}
		check()
	}
}

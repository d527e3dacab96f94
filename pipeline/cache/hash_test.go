package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestHashCache(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "raw.bin")
	must(t, os.WriteFile(p, []byte("abc"), 0o644))
	cachePath := filepath.Join(dir, "cache.json")
	c := OpenHashCache(cachePath)
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	steps := []struct {
		name    string
		change  func()
		want    string
		rehash  bool
		persist bool
	}{
		{name: "first", want: abc, rehash: true},
		{name: "cached", want: abc},
		{name: "reloaded from disk", want: abc, persist: true},
		{name: "touched", want: abc, rehash: true, change: func() {
			later := time.Now().Add(time.Hour)
			must(t, os.Chtimes(p, later, later))
		}},
		{name: "same size, old mtime", rehash: true, change: func() {
			fi, _ := os.Stat(p)
			must(t, os.WriteFile(p, []byte("abd"), 0o644))
			must(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
		}, want: "a52d159f262b2c6ddb724a61840befc36eb30c88877a4030b65cbe86298449c9"},
	}
	for _, s := range steps {
		if s.change != nil {
			s.change()
		}
		if s.persist {
			c.dirty = true
			must(t, c.Save())
			c = OpenHashCache(cachePath)
		}
		before := len(c.entries)
		c.dirty = false
		sum, size, err := c.File(p)
		must(t, err)
		if sum != s.want || size != 3 {
			t.Errorf("%s: %s %d", s.name, sum, size)
		}
		if c.dirty != s.rehash || len(c.entries) != max(before, 1) {
			t.Errorf("%s: rehashed %v, want %v", s.name, c.dirty, s.rehash)
		}
	}
	if _, _, err := c.File(filepath.Join(dir, "missing")); !notExist(err) {
		t.Errorf("missing file: %v", err)
	}
}

// BenchmarkHash measures hashing raw inputs: cold (sha256 of the content)
// and warm (a stat against the side cache).
func BenchmarkHash(b *testing.B) {
	for _, size := range []int{1 << 20, 64 << 20} {
		p := filepath.Join(b.TempDir(), "raw")
		must(b, os.WriteFile(p, make([]byte, size), 0o644))
		b.Run(fmt.Sprintf("cold/%dMiB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				c := OpenHashCache("")
				if _, _, err := c.File(p); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("warm/%dMiB", size>>20), func(b *testing.B) {
			c := OpenHashCache("")
			c.File(p)
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, _, err := c.File(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package cache

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// The cache file: what Save writes is what the next OpenHashCache reads;
// entries of deleted files are dropped; Forget drops a directory's entries
// and no one else's; a read-only cache and an unchanged one write nothing;
// a damaged file starts empty.
func TestHashCacheFile(t *testing.T) {
	dir := t.TempDir()
	stage, sibling := filepath.Join(dir, "a", "train"), filepath.Join(dir, "a", "train2")
	must(t, os.MkdirAll(stage, 0o755))
	must(t, os.MkdirAll(sibling, 0o755))
	fits, other, gone := filepath.Join(stage, "fits.parquet"), filepath.Join(sibling, "fits.parquet"), filepath.Join(dir, "gone")
	for _, p := range []string{fits, other, gone} {
		must(t, os.WriteFile(p, []byte(p), 0o644))
	}
	cachePath := filepath.Join(dir, "hashes.json")
	c := OpenHashCache(cachePath)
	c.Remember(fits, "f")
	c.Remember(other, "o")
	c.Remember(gone, "g")
	must(t, os.Remove(gone))
	must(t, c.Save())
	if c.dirty {
		t.Error("dirty after Save")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("in %s after Save: %v, want a and hashes.json (a temporary file left?)", dir, ents)
	}
	c = OpenHashCache(cachePath)
	if len(c.entries) != 2 || c.entries[fits].SHA256 != "f" || c.entries[other].SHA256 != "o" {
		t.Fatalf("reloaded %+v, want fits and train2's file (gone dropped)", c.entries)
	}
	// Remembered sums are served without reading the file.
	if sum, size, err := c.File(fits); err != nil || sum != "f" || size != int64(len(fits)) {
		t.Errorf("File of a remembered file: %q %d %v", sum, size, err)
	}
	// Forget(train) must not take train2 along (a shared prefix).
	c.Forget(stage)
	if _, ok := c.entries[fits]; ok || len(c.entries) != 1 || !c.dirty {
		t.Errorf("after Forget(%s): %+v", stage, c.entries)
	}
	c.Forget(sibling)
	if len(c.entries) != 0 {
		t.Errorf("after Forget(%s): %+v", sibling, c.entries)
	}

	must(t, os.WriteFile(cachePath, []byte("{}"), 0o644))
	c = OpenHashCache(cachePath)
	c.Remember(fits, "f")
	c.ReadOnly()
	must(t, c.Save())
	if b, _ := os.ReadFile(cachePath); string(b) != "{}" {
		t.Errorf("a read-only cache wrote %s", b)
	}
	c = OpenHashCache(cachePath)
	must(t, os.Remove(cachePath))
	must(t, c.Save())
	if _, err := os.Stat(cachePath); !notExist(err) {
		t.Errorf("an unchanged cache wrote its file: %v", err)
	}

	must(t, os.WriteFile(cachePath, []byte(`{"x": 1`), 0o644))
	if c := OpenHashCache(cachePath); c.entries == nil || len(c.entries) != 0 {
		t.Errorf("damaged cache file: entries %v", c.entries)
	}
	if _, _, err := c.File(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("File of a directory: %v", err)
	}
	if sum, err := HashFile(fits); err != nil || sum != fmt.Sprintf("%x", sha256.Sum256([]byte(fits))) {
		t.Errorf("HashFile %q %v", sum, err)
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

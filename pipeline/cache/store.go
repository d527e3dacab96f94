package cache

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// The store keeps the outputs of finished stages by cache key, like Go's
// build cache: switching a setting back to a value run before restores the
// stage's outputs from the store instead of recomputing them (hours of
// training at the paper's scale).
//
//	STORE/<key[:2]>/<key>/           one stage's outputs and its manifest.json
//	STORE/<key[:2]>/.<key>.tmp-<pid> an entry being written
//
// Files enter the store as hard links to the committed stage directories
// where the file system allows (so the store costs no space while a run
// directory holds the same outputs), copies otherwise. They leave it as
// copies: two run directories never share a file, so an edit in one cannot
// show up in the other and `monomer diff` compares two real files. Every
// file is checked against the manifest's sha256 before it is restored, so
// an output edited in place in a run directory (which edits its link in
// the store too) is never restored. An entry's
// modification time is its last use; Trim removes the least recently used
// entries down to a size.

// DefaultStoreMax is the store's size cap when none is given.
const DefaultStoreMax = 20 << 30

// Store is the store in a directory, with its size cap. A nil *Store is
// no store: it holds nothing and restores nothing.
type Store struct {
	dir string
	max int64
}

// NewStore is the store in dir, trimmed to max bytes (DefaultStoreMax if
// 0); nil if dir is "".
func NewStore(dir string, max int64) *Store {
	if dir == "" {
		return nil
	}
	if max == 0 {
		max = DefaultStoreMax
	}
	return &Store{dir: dir, max: max}
}

// Trim trims the store to its cap (see Trim).
func (s *Store) Trim() (*TrimResult, error) { return Trim(s.dir, s.max) }

// tmpMark marks an entry being written, as the runner marks a stage
// directory being written.
const tmpMark = ".tmp-"

// Entry is the directory of key's entry.
func (s *Store) Entry(key string) string {
	return filepath.Join(s.dir, key[:2], key)
}

// has reports whether the store holds an entry for key.
func (s *Store) Has(key string) bool {
	if s == nil {
		return false
	}
	_, err := os.Stat(filepath.Join(s.Entry(key), ManifestName))
	return err == nil
}

// put adds the committed stage directory dir, whose manifest is m, to the
// store. An entry already there is kept.
func (s *Store) Put(dir string, m *Manifest) error {
	final := s.Entry(m.Key)
	if _, err := os.Stat(final); err == nil {
		return touch(final)
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(final), fmt.Sprintf(".%s%s%d", m.Key, tmpMark, os.Getpid()))
	os.RemoveAll(tmp)
	defer os.RemoveAll(tmp)
	for _, o := range append(slices.Clone(m.Outputs), Output{Name: ManifestName}) {
		dst := filepath.Join(tmp, filepath.FromSlash(o.Name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := linkOrCopy(filepath.Join(dir, filepath.FromSlash(o.Name)), dst); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, final); err != nil && !errors.Is(err, fs.ErrExist) {
		if _, serr := os.Stat(final); serr != nil { // not another process's entry
			return err
		}
	}
	return nil
}

// restore copies the entry for key into the empty directory tmp after
// checking every file against the stored manifest, and returns the
// manifest. ok is false when there is no usable entry.
func (s *Store) Restore(key, tmp string) (*Manifest, bool) {
	if s == nil {
		return nil, false
	}
	entry := s.Entry(key)
	m, err := ReadManifest(entry)
	if err != nil || m.Key != key || m.Format != ManifestFormat {
		return nil, false
	}
	for _, o := range m.Outputs {
		src := filepath.Join(entry, filepath.FromSlash(o.Name))
		sum, err := HashFile(src)
		if err != nil || sum != o.SHA256 {
			os.RemoveAll(entry) // edited or damaged: never use it again
			return nil, false
		}
		dst := filepath.Join(tmp, filepath.FromSlash(o.Name))
		if os.MkdirAll(filepath.Dir(dst), 0o755) != nil || CopyFile(src, dst) != nil {
			return nil, false
		}
	}
	touch(entry)
	return m, true
}

func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	return CopyFile(src, dst)
}

// CopyFile copies src to dst and fsyncs it.
func CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

func touch(dir string) error {
	now := time.Now()
	return os.Chtimes(dir, now, now)
}

// TrimResult is what Trim removed and what is left.
type TrimResult struct {
	Removed, Kept           int
	RemovedBytes, KeptBytes int64
}

// Trim removes the least recently used entries of the store in dir until
// the rest hold at most max bytes, and every partial entry a killed run
// left. A file hard-linked into a run directory counts with its full size.
func Trim(dir string, max int64) (*TrimResult, error) {
	type ent struct {
		path string
		used time.Time
		size int64
	}
	var ents []ent
	prefixes, err := os.ReadDir(dir)
	if err != nil {
		if notExist(err) {
			return &TrimResult{}, nil
		}
		return nil, fmt.Errorf("pipeline: store: %w", err)
	}
	res := &TrimResult{}
	for _, p := range prefixes {
		if !p.IsDir() {
			continue
		}
		sub := filepath.Join(dir, p.Name())
		entries, err := os.ReadDir(sub)
		if err != nil {
			return nil, fmt.Errorf("pipeline: store: %w", err)
		}
		for _, e := range entries {
			path := filepath.Join(sub, e.Name())
			if strings.HasPrefix(e.Name(), ".") {
				// A partial entry; one being written now is younger than a minute.
				if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Minute {
					os.RemoveAll(path)
				}
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue
			}
			var size int64
			filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if i, err := d.Info(); err == nil {
						size += i.Size()
					}
				}
				return nil
			})
			ents = append(ents, ent{path, fi.ModTime(), size})
		}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].used.After(ents[j].used) })
	for _, e := range ents {
		if res.KeptBytes+e.size <= max {
			res.Kept++
			res.KeptBytes += e.size
			continue
		}
		if err := os.RemoveAll(e.path); err != nil {
			return res, fmt.Errorf("pipeline: store: %w", err)
		}
		res.Removed++
		res.RemovedBytes += e.size
	}
	return res, nil
}

// StoredManifest is the manifest a restored stage gets: the stored one,
// which records how the outputs were made, with the restore noted.
func StoredManifest(m *Manifest) *Manifest {
	c := *m
	c.Stats = maps.Clone(m.Stats)
	if c.Stats == nil {
		c.Stats = map[string]any{}
	}
	c.Stats["restored_from_store"] = true
	return &c
}

package cache

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"monomer/internal/sidefile"
)

// The store keeps the outputs of finished stages by cache key, like Go's
// build cache: switching a setting back to a value run before restores the
// stage's outputs from the store instead of recomputing them (hours of
// training at the paper's scale).
//
//	STORE/CACHEDIR.TAG               the tag that makes STORE a monomer store
//	STORE/<key[:2]>/<key>/           one stage's outputs and its manifest.json
//	STORE/<key[:2]>/.<key>.tmp-<pid> an entry being written
//
// A store deletes files, so it must never mistake someone else's folder for
// itself (issue 37: a store pointed at a project deleted its .git). Hence
// the tag, written when monomer makes the store (a CACHEDIR.TAG, which
// backup tools honouring https://bford.info/cachedir/ skip, naming
// monomer); OpenStore refuses a non-empty folder without it, except a
// store made before the tag, whose every entry has the layout above and
// which it tags. Inside a store only names of the layout above are
// touched, an entry only when its manifest names its own key, and then only
// the files the manifest lists: anything else is left where it is.
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

// StoreTagName is the file that marks a folder as a monomer store.
const StoreTagName = "CACHEDIR.TAG"

// storeTagID begins every store tag: the Cache Directory Tagging
// signature, then monomer's own line (another program's CACHEDIR.TAG, as
// in a cargo target folder, does not make a monomer store).
const storeTagID = "Signature: 8a477f597d28d172789f06886806bc55\n# monomer store, format 1:"

const storeTag = storeTagID + ` stage outputs by cache key, made by monomer.
# monomer deletes only the entries it wrote here (<key[:2]>/<key>/ holding
# a manifest.json that names <key>). Backup tools that honour CACHEDIR.TAG
# skip this folder: a run recomputes whatever it held.
`

// ErrNotStore: the store's folder is not a monomer store (exit 2): a
// retry cannot help, pointing the store elsewhere can.
var ErrNotStore = errors.New("not a monomer store")

var (
	prefixName  = regexp.MustCompile(`^[0-9a-f]{2}$`)
	keyName     = regexp.MustCompile(`^[0-9a-f]{64}$`)
	partialName = regexp.MustCompile(`^\.([0-9a-f]{64})\.tmp-[0-9]+$`)
	tagTmpName  = regexp.MustCompile(`^\.CACHEDIR\.TAG\.tmp-[0-9]+$`)
)

// Store is the store in a directory, with its size cap. A nil *Store is
// no store: it holds nothing and restores nothing.
type Store struct {
	dir string
	max int64
}

// NewStore is the store in dir, trimmed to max bytes (DefaultStoreMax if
// 0); nil if dir is "". It checks nothing and is for lookups (Has); a
// store that Put, Restore or Trim change is opened with OpenStore.
func NewStore(dir string, max int64) *Store {
	if dir == "" {
		return nil
	}
	if max == 0 {
		max = DefaultStoreMax
	}
	return &Store{dir: dir, max: max}
}

// OpenStore is the store in dir (nil if dir is ""), which it makes, with
// its tag, if dir does not exist or is empty. A folder without the tag
// whose every entry has the store's layout (a store made before the tag)
// is adopted: tagged and used. Any other folder is refused with an error
// wrapping ErrNotStore that names the folder and the first file that is
// not the store's.
func OpenStore(dir string, max int64) (*Store, error) {
	s := NewStore(dir, max)
	if s == nil {
		return nil, nil
	}
	state, why, err := inspectStore(dir)
	switch {
	case err != nil:
		return nil, err
	case state == storeForeign:
		return nil, notStore(dir, why)
	case state == storeMissing:
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("pipeline: store: %w", err)
		}
		fallthrough
	case state == storeUntagged:
		if err := writeTag(dir); err != nil {
			return nil, fmt.Errorf("pipeline: store: %w", err)
		}
	}
	return s, nil
}

// LookupStore is the store in dir for lookups (Has) without writing
// anything: nil when dir is "", does not exist or is not a store.
func LookupStore(dir string) *Store {
	if dir == "" {
		return nil
	}
	if state, _, err := inspectStore(dir); err != nil || state == storeForeign || state == storeMissing {
		return nil
	}
	return NewStore(dir, 0)
}

type storeState int

const (
	storeMissing  storeState = iota // no such folder
	storeTagged                     // monomer's tag
	storeUntagged                   // empty, or every entry of the store's layout
	storeForeign                    // anything else
)

// inspectStore says what dir is; for a foreign folder, why names the
// first file in it that is not the store's.
func inspectStore(dir string) (state storeState, why string, err error) {
	fi, err := os.Stat(dir)
	if notExist(err) {
		return storeMissing, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("pipeline: store: %w", err)
	}
	if !fi.IsDir() {
		return storeForeign, "it is not a folder", nil
	}
	// Read as a side file: a link or a pipe at the tag's name is not
	// monomer's tag (and a pipe would block the read).
	tag, err := sidefile.ReadFile(filepath.Join(dir, StoreTagName), 1<<16)
	switch {
	case err == nil && strings.HasPrefix(string(tag), storeTagID):
		return storeTagged, "", nil
	case err == nil || !notExist(err):
		return storeForeign, "its " + StoreTagName + " is not monomer's", nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, "", fmt.Errorf("pipeline: store: %w", err)
	}
	for _, e := range ents {
		if tagTmpName.MatchString(e.Name()) {
			continue
		}
		if !prefixName.MatchString(e.Name()) || !e.IsDir() {
			return storeForeign, "it holds " + e.Name(), nil
		}
		subs, err := os.ReadDir(filepath.Join(dir, e.Name()))
		if err != nil {
			return 0, "", fmt.Errorf("pipeline: store: %w", err)
		}
		for _, sub := range subs {
			name := path.Join(e.Name(), sub.Name())
			if isPartial(e.Name(), sub) {
				continue
			}
			if !isKeyDir(e.Name(), sub) {
				return storeForeign, "it holds " + name, nil
			}
			if fi, err := os.Lstat(filepath.Join(dir, e.Name(), sub.Name(), ManifestName)); err != nil || !fi.Mode().IsRegular() {
				return storeForeign, "it holds " + name + " without a " + ManifestName, nil
			}
		}
	}
	return storeUntagged, "", nil
}

func notStore(dir, why string) error {
	return fmt.Errorf("pipeline: %w: %s (%s, and it has no %s naming monomer); point the store (MONOMER_STORE) at a new or empty folder, or turn it off (MONOMER_STORE=off)",
		ErrNotStore, dir, why, StoreTagName)
}

// writeTag writes dir's tag whole or not at all: a run opening the store
// at the same moment sees no tag or the whole one. The temporary file is
// created, never opened, and the tag is renamed to a name that is free
// (a tag another run wrote meanwhile is kept).
func writeTag(dir string) error {
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.tmp-%d", StoreTagName, os.Getpid()))
	f, err := sidefile.Open(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		// Left by a killed process of this pid if it holds a tag.
		if b, rerr := sidefile.ReadFile(tmp, 1<<16); rerr == nil && strings.HasPrefix(string(b), storeTagID) {
			os.Remove(tmp)
			f, err = sidefile.Open(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		} else {
			err = sidefile.Foreign(tmp, "in the way of the store's tag")
		}
	}
	if err != nil {
		return err // nothing of ours to remove
	}
	_, err = f.WriteString(storeTag)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = sidefile.Rename(tmp, filepath.Join(dir, StoreTagName))
		if errors.Is(err, fs.ErrExist) {
			err = nil
		}
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// isKeyDir reports whether sub, in the prefix folder prefix, is named and
// typed as an entry.
func isKeyDir(prefix string, sub fs.DirEntry) bool {
	return sub.IsDir() && keyName.MatchString(sub.Name()) && sub.Name()[:2] == prefix
}

// isPartial reports whether sub, in the prefix folder prefix, is named
// and typed as an entry being written (Put's temporary name).
func isPartial(prefix string, sub fs.DirEntry) bool {
	m := partialName.FindStringSubmatch(sub.Name())
	return m != nil && sub.IsDir() && m[1][:2] == prefix
}

// Trim trims the store to its cap (see Trim).
func (s *Store) Trim() (*TrimResult, error) { return s.trim() }

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
			dropEntry(entry, m) // edited or damaged: never use it again
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
	// Foreign counts the entry-named folders Trim left alone because their
	// manifest does not prove monomer wrote them (none, unreadable, another
	// key, or an output named outside the entry).
	Foreign int
}

// Trim trims the store in dir (see Store.Trim). A dir that does not exist
// is an empty store; one without the tag is treated as OpenStore treats it.
func Trim(dir string, max int64) (*TrimResult, error) {
	if _, err := os.Stat(dir); notExist(err) {
		return &TrimResult{}, nil
	}
	if _, err := OpenStore(dir, 0); err != nil {
		return nil, err
	}
	return (&Store{dir: dir, max: max}).trim() // max 0 empties the store
}

// trim removes the least recently used entries until the rest hold at
// most the cap, and every partial entry a killed run left. An entry's size
// is what its manifest records (a file hard-linked into a run directory
// counts in full). It touches only what the store's comment says it may,
// and refuses a folder whose tag has gone.
func (s *Store) trim() (*TrimResult, error) {
	if state, why, err := inspectStore(s.dir); err != nil {
		return nil, err
	} else if state == storeMissing {
		return &TrimResult{}, nil
	} else if state != storeTagged {
		if why == "" {
			why = "its " + StoreTagName + " is gone"
		}
		return nil, notStore(s.dir, why)
	}
	type ent struct {
		path string
		used time.Time
		size int64
		m    *Manifest
	}
	var ents []ent
	prefixes, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("pipeline: store: %w", err)
	}
	res := &TrimResult{}
	for _, p := range prefixes {
		if !p.IsDir() || !prefixName.MatchString(p.Name()) {
			continue
		}
		sub := filepath.Join(s.dir, p.Name())
		entries, err := os.ReadDir(sub)
		if err != nil {
			return nil, fmt.Errorf("pipeline: store: %w", err)
		}
		for _, e := range entries {
			at := filepath.Join(sub, e.Name())
			if isPartial(p.Name(), e) {
				// Left by a killed run; one being written now is younger than a minute.
				if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Minute {
					os.RemoveAll(at)
				}
				continue
			}
			if !isKeyDir(p.Name(), e) {
				continue
			}
			m, size, ok := ownEntry(at, e.Name())
			fi, err := e.Info()
			if !ok || err != nil {
				res.Foreign++
				continue
			}
			ents = append(ents, ent{at, fi.ModTime(), size, m})
		}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].used.After(ents[j].used) })
	for _, e := range ents {
		if res.KeptBytes+e.size <= s.max {
			res.Kept++
			res.KeptBytes += e.size
			continue
		}
		if err := dropEntry(e.path, e.m); err != nil {
			return res, fmt.Errorf("pipeline: store: %w", err)
		}
		res.Removed++
		res.RemovedBytes += e.size
	}
	return res, nil
}

// ownEntry reads the manifest of the entry folder dir named key and
// reports whether it proves the store wrote the entry: a regular
// manifest.json naming key, whose outputs are all named inside the entry.
// size is the bytes the manifest records, the manifest's own included.
func ownEntry(dir, key string) (m *Manifest, size int64, ok bool) {
	fi, err := os.Lstat(filepath.Join(dir, ManifestName))
	if err != nil || !fi.Mode().IsRegular() {
		return nil, 0, false
	}
	m, err = ReadManifest(dir)
	if err != nil || m.Key != key {
		return nil, 0, false
	}
	size = fi.Size()
	for _, o := range m.Outputs {
		if !filepath.IsLocal(filepath.FromSlash(o.Name)) || o.Name == ManifestName || o.Bytes < 0 {
			return nil, 0, false
		}
		size += o.Bytes
	}
	return m, size, true
}

// dropEntry removes the entry folder dir: its manifest first (from then on
// no lookup uses it), then the outputs m lists, then their folders once
// empty, all through an os.Root so that no link leads outside dir. A file
// m does not list stays, and so does the folder holding it.
func dropEntry(dir string, m *Manifest) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.Remove(ManifestName); err != nil && !notExist(err) {
		return err
	}
	var dirs []string
	for _, o := range m.Outputs {
		name := filepath.FromSlash(o.Name)
		if !filepath.IsLocal(name) {
			continue
		}
		if err := root.Remove(name); err != nil && !notExist(err) {
			return err
		}
		for d := filepath.Dir(name); d != "."; d = filepath.Dir(d) {
			dirs = append(dirs, d)
		}
	}
	// Deepest first; a folder something else still holds stays.
	slices.SortFunc(dirs, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	for _, d := range slices.Compact(dirs) {
		root.Remove(d)
	}
	root.Close()
	os.Remove(dir)
	return nil
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

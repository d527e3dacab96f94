package cache

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stageDir writes a finished stage directory (outputs, then the manifest)
// and returns its manifest, whose key depends on the directory's name.
func stageDir(t *testing.T, dir string, outputs map[string]string) *Manifest {
	t.Helper()
	params := []byte(`{"dir":"` + filepath.Base(dir) + `"}`)
	m := &Manifest{Format: ManifestFormat, Inputs: KeyInputs{Stage: "train", Code: "v1", Params: params}}
	for _, name := range UnionKeys(outputs, nil) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(outputs[name]), 0o644))
		sum, err := HashFile(p)
		must(t, err)
		m.Outputs = append(m.Outputs, Output{Name: name, SHA256: sum, Bytes: int64(len(outputs[name]))})
	}
	m.Key = m.Inputs.Key()
	must(t, WriteManifest(dir, m))
	return m
}

// An entry put is restored file for file; one whose key, format or
// content does not match is not (and a damaged one is dropped).
func TestStorePutRestore(t *testing.T) {
	if NewStore("", 1) != nil {
		t.Error("NewStore(\"\") is a store")
	}
	var none *Store
	if none.Has("ab") {
		t.Error("the nil store has an entry")
	}
	if _, ok := none.Restore("ab", t.TempDir()); ok {
		t.Error("the nil store restored an entry")
	}
	dir := t.TempDir()
	s := NewStore(filepath.Join(dir, "store"), 0)
	if s.max != DefaultStoreMax {
		t.Errorf("default cap %d", s.max)
	}
	stage := filepath.Join(dir, "run", "train")
	outputs := map[string]string{"fits.parquet": "fits", "plots/a.txt": "plot"}
	m := stageDir(t, stage, outputs)
	if s.Has(m.Key) {
		t.Fatal("empty store has the entry")
	}
	must(t, s.Put(stage, m))
	if !s.Has(m.Key) || s.Entry(m.Key) != filepath.Join(dir, "store", m.Key[:2], m.Key) {
		t.Fatalf("after Put: has %v, entry %s", s.Has(m.Key), s.Entry(m.Key))
	}
	// A second Put keeps the entry and marks it used.
	old := time.Now().Add(-time.Hour)
	must(t, os.Chtimes(s.Entry(m.Key), old, old))
	must(t, s.Put(stage, m))
	if fi, err := os.Stat(s.Entry(m.Key)); err != nil || !fi.ModTime().After(old.Add(time.Minute)) {
		t.Errorf("second Put: entry not marked used (%v)", err)
	}

	restore := func() (*Manifest, string, bool) {
		tmp := filepath.Join(t.TempDir(), "train.tmp")
		must(t, os.Mkdir(tmp, 0o755))
		got, ok := s.Restore(m.Key, tmp)
		return got, tmp, ok
	}
	got, tmp, ok := restore()
	if !ok || got.Key != m.Key || len(got.Outputs) != 2 {
		t.Fatalf("Restore: %v %+v", ok, got)
	}
	for name, content := range outputs {
		if b, err := os.ReadFile(filepath.Join(tmp, filepath.FromSlash(name))); err != nil || string(b) != content {
			t.Errorf("restored %s: %q %v", name, b, err)
		}
	}
	// Restored files are copies: writing one leaves the entry intact.
	must(t, os.WriteFile(filepath.Join(tmp, "fits.parquet"), []byte("edited"), 0o644))
	if _, _, ok := restore(); !ok {
		t.Error("an edit of a restored copy spoilt the entry")
	}
	if _, ok := s.Restore(strings.Repeat("0", 64), t.TempDir()); ok {
		t.Error("restored a key never put")
	}

	// A manifest under the wrong key or of another format is not used.
	entry := s.Entry(m.Key)
	mpath := filepath.Join(entry, ManifestName)
	orig, err := os.ReadFile(mpath)
	must(t, err)
	for bad, repl := range map[string]string{m.Key: strings.Repeat("0", 64), `"format": 1`: `"format": 2`} {
		must(t, os.Remove(mpath)) // a hard link to the stage's manifest: do not write through it
		must(t, os.WriteFile(mpath, []byte(strings.Replace(string(orig), bad, repl, 1)), 0o644))
		if _, _, ok := restore(); ok {
			t.Errorf("restored with %s replaced by %s", bad, repl)
		}
	}
	must(t, os.Remove(mpath))
	must(t, os.WriteFile(mpath, orig, 0o644))
	// An output changed in the entry: not restored, and the entry is gone.
	plot := filepath.Join(entry, "plots", "a.txt")
	must(t, os.Remove(plot))
	must(t, os.WriteFile(plot, []byte("PLOT"), 0o644))
	if _, _, ok := restore(); ok {
		t.Error("restored an entry whose output changed")
	}
	if s.Has(m.Key) {
		t.Error("a damaged entry was kept")
	}
	if b, _ := os.ReadFile(filepath.Join(stage, "plots", "a.txt")); string(b) != "plot" {
		t.Errorf("the stage's own file changed: %q", b)
	}
}

// Trim keeps the most recently used entries that fit the cap, counting
// the sizes their manifests record, removes partial entries (by the
// store's temporary name) older than a minute, and leaves everything that
// is not provably an entry it wrote.
func TestTrim(t *testing.T) {
	dir := t.TempDir()
	if res, err := Trim(filepath.Join(dir, "none"), 10); err != nil || *res != (TrimResult{}) {
		t.Errorf("missing store: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "none")); !os.IsNotExist(err) {
		t.Errorf("Trim made a missing store: %v", err)
	}
	store := filepath.Join(dir, "store")
	s, err := OpenStore(store, 0)
	must(t, err)
	now := time.Now()
	age := func(p string, d time.Duration) {
		must(t, os.Chtimes(p, now.Add(-d), now.Add(-d)))
	}
	entry := func(name string, size int, used time.Duration) (string, int64) {
		stage := filepath.Join(dir, "run", name)
		m := stageDir(t, stage, map[string]string{"sub/f": strings.Repeat(name, size)})
		must(t, s.Put(stage, m))
		age(s.Entry(m.Key), used)
		_, n, ok := ownEntry(s.Entry(m.Key), m.Key)
		if !ok {
			t.Fatalf("entry %s not recognised", name)
		}
		return s.Entry(m.Key), n
	}
	newest, n1 := entry("a", 4000, time.Second)
	middle, n2 := entry("b", 3000, time.Hour)
	oldest, _ := entry("c", 2000, 2*time.Hour)
	small, n4 := entry("d", 10, 3*time.Hour)
	partial := func(key string, used time.Duration) string {
		p := filepath.Join(store, key[:2], "."+key+".tmp-12")
		must(t, os.MkdirAll(filepath.Join(p, "sub"), 0o755))
		must(t, os.WriteFile(filepath.Join(p, "sub", "f"), []byte("x"), 0o644))
		age(p, used)
		return p
	}
	partialOld := partial(strings.Repeat("d5", 32), 2*time.Minute)
	partialNew := partial(strings.Repeat("d6", 32), 0)
	// Not the store's, though inside it: kept whatever their age and size.
	foreign := map[string]string{
		"README":                               "notes",
		"ab/notes.txt":                         "notes",
		"ab/.hidden/old":                       "hidden",
		"dd/.dd55.tmp-1/f":                     "not a key",
		"zz/" + strings.Repeat("0", 64) + "/f": "wrong prefix",
		strings.Repeat("ee", 32)[:2] + "/" + strings.Repeat("ee", 32) + "/f": "no manifest",
	}
	for name, content := range foreign {
		p := filepath.Join(store, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
		age(p, 2*time.Hour)
		age(filepath.Dir(p), 2*time.Hour)
	}
	// An entry whose manifest names another key: not provably the store's.
	other := filepath.Join(store, "ff", strings.Repeat("f", 64))
	must(t, os.MkdirAll(other, 0o755))
	orig, err := os.ReadFile(filepath.Join(newest, ManifestName))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(other, ManifestName), orig, 0o644))
	age(other, 5*time.Hour)

	capBytes := n1 + n2 + n4
	res, err := Trim(store, capBytes)
	must(t, err)
	// a and b fit; c would not; the small d still fits.
	if want := (TrimResult{Removed: 1, Kept: 3, RemovedBytes: res.RemovedBytes, KeptBytes: capBytes, Foreign: 2}); *res != want || res.RemovedBytes < 2000 {
		t.Errorf("Trim to %d: %+v, want %+v", capBytes, *res, want)
	}
	for p, kept := range map[string]bool{newest: true, middle: true, oldest: false, small: true, partialOld: false, partialNew: true,
		filepath.Join(other, ManifestName): true, filepath.Join(store, StoreTagName): true} {
		if _, err := os.Stat(p); (err == nil) != kept {
			t.Errorf("%s: kept %v, want %v", filepath.Base(p), err == nil, kept)
		}
	}
	if res, err := Trim(store, capBytes); err != nil || res.Removed != 0 || res.KeptBytes != capBytes {
		t.Errorf("second Trim: %+v %v", res, err)
	}
	if res, err := Trim(store, 0); err != nil || res.Kept != 0 || res.Removed != 3 {
		t.Errorf("Trim to 0: %+v %v", res, err)
	}
	for name, content := range foreign {
		if b, err := os.ReadFile(filepath.Join(store, filepath.FromSlash(name))); err != nil || string(b) != content {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
}

// hostileFolder is a folder a store may wrongly be pointed at: a .git
// folder and a .env file aged two hours, a two-letter folder of notes and a
// sparse 21 GiB file. check reports anything gone or changed.
func hostileFolder(t *testing.T, dir string) (check func(when string)) {
	t.Helper()
	files := map[string]string{".git/config": "[core]\n", ".git/HEAD": "ref: refs/heads/main\n", ".env": "secret\n",
		"ab/notes.txt": "notes\n", "me/todo.txt": "todo\n", "proj/.git/HEAD": "ref: refs/heads/main\n", "proj/.env": "secret\n"}
	old := time.Now().Add(-2 * time.Hour)
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
		must(t, os.Chtimes(p, old, old))
	}
	for _, d := range []string{".git", "ab", "me", "proj/.git"} {
		must(t, os.Chtimes(filepath.Join(dir, d), old, old))
	}
	const sparse = 21 << 30
	f, err := os.Create(filepath.Join(dir, "disk.img"))
	must(t, err)
	must(t, f.Truncate(sparse))
	must(t, f.Close())
	return func(when string) {
		t.Helper()
		for name, content := range files {
			if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name))); err != nil || string(b) != content {
				t.Errorf("%s: %s: %q %v", when, name, b, err)
			}
		}
		if fi, err := os.Stat(filepath.Join(dir, "disk.img")); err != nil || fi.Size() != sparse {
			t.Errorf("%s: disk.img: %v", when, err)
		}
	}
}

// Issue 37: a store pointed at a folder that is not one is refused (by
// OpenStore and Trim, at any cap), and deletes nothing; the same files
// inside a real store are left alone by a trim to 0 and not counted.
func TestStoreNotAStore(t *testing.T) {
	dir := t.TempDir()
	check := hostileFolder(t, dir)
	if _, err := OpenStore(dir, 0); !errors.Is(err, ErrNotStore) || !strings.Contains(err.Error(), dir) {
		t.Errorf("OpenStore on a project folder: %v", err)
	}
	for _, max := range []int64{0, DefaultStoreMax} {
		if res, err := Trim(dir, max); !errors.Is(err, ErrNotStore) {
			t.Errorf("Trim(%d) on a project folder: %+v %v", max, res, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, StoreTagName)); !os.IsNotExist(err) {
		t.Errorf("a refused folder was tagged: %v", err)
	}
	if LookupStore(dir) != nil {
		t.Error("LookupStore found a store in a project folder")
	}
	check("refused folder")

	// Another program's CACHEDIR.TAG does not make a monomer store.
	cargo := t.TempDir()
	must(t, os.WriteFile(filepath.Join(cargo, StoreTagName), []byte("Signature: 8a477f597d28d172789f06886806bc55\n# cargo\n"), 0o644))
	if _, err := OpenStore(cargo, 0); !errors.Is(err, ErrNotStore) {
		t.Errorf("OpenStore on another program's cache: %v", err)
	}
	// A file is not a store either.
	if _, err := OpenStore(filepath.Join(dir, ".env"), 0); !errors.Is(err, ErrNotStore) {
		t.Errorf("OpenStore on a file: %v", err)
	}

	store := filepath.Join(t.TempDir(), "store")
	s, err := OpenStore(store, 0)
	must(t, err)
	stage := filepath.Join(t.TempDir(), "train")
	m := stageDir(t, stage, map[string]string{"fits.parquet": "fits"})
	must(t, s.Put(stage, m))
	check = hostileFolder(t, store)
	res, err := Trim(store, 0)
	must(t, err)
	if res.Removed != 1 || res.Kept != 0 || res.KeptBytes != 0 || s.Has(m.Key) {
		t.Errorf("Trim to 0 of a store holding foreign files: %+v", res)
	}
	check("inside a store")
	if b, err := os.ReadFile(filepath.Join(stage, "fits.parquet")); err != nil || string(b) != "fits" {
		t.Errorf("the stage's own file: %q %v", b, err)
	}
	// A store whose tag is gone is refused by a trim, not emptied.
	must(t, os.Remove(filepath.Join(store, StoreTagName)))
	if _, err := s.Trim(); !errors.Is(err, ErrNotStore) {
		t.Errorf("Trim of a store whose tag is gone: %v", err)
	}
	check("untagged")
}

// A store made before the tag (every entry of the store's layout) is
// adopted: tagged and used; an empty folder becomes a store; a store
// with one stray file is refused naming it.
func TestStoreAdopt(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(dir, 0) // empty: made a store
	must(t, err)
	if LookupStore(dir) == nil {
		t.Fatal("LookupStore: no store in a tagged folder")
	}
	stage := filepath.Join(t.TempDir(), "train")
	m := stageDir(t, stage, map[string]string{"fits.parquet": "fits"})
	must(t, s.Put(stage, m))
	partial := filepath.Join(dir, m.Key[:2], "."+m.Key+".tmp-7")
	must(t, os.Mkdir(partial, 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "0a"), 0o755)) // an empty prefix folder
	must(t, os.Remove(filepath.Join(dir, StoreTagName)))  // as an older monomer left it
	if LookupStore(dir) == nil {
		t.Error("LookupStore: an older store not found")
	}
	if _, err := OpenStore(dir, 0); err != nil {
		t.Fatalf("an older store refused: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, StoreTagName)); err != nil || !strings.HasPrefix(string(b), storeTagID) {
		t.Errorf("an adopted store's tag: %q %v", b, err)
	}
	if !s.Has(m.Key) {
		t.Error("adopting lost the entry")
	}
	must(t, os.Remove(filepath.Join(dir, StoreTagName)))
	must(t, os.WriteFile(filepath.Join(dir, m.Key[:2], "notes.txt"), nil, 0o644))
	_, err = OpenStore(dir, 0)
	if want := filepath.Join(m.Key[:2], "notes.txt"); !errors.Is(err, ErrNotStore) || !strings.Contains(err.Error(), "it holds "+want) {
		t.Errorf("a store with a stray file: %v", err)
	}
}

func TestStoredManifest(t *testing.T) {
	m := &Manifest{Key: "k", Stats: map[string]any{"rows": 3}}
	c := StoredManifest(m)
	if c.Key != "k" || c.Stats["rows"] != 3 || c.Stats["restored_from_store"] != true {
		t.Errorf("stored manifest %+v", c)
	}
	if _, ok := m.Stats["restored_from_store"]; ok {
		t.Error("StoredManifest changed the stored manifest's stats")
	}
	if c := StoredManifest(&Manifest{}); c.Stats["restored_from_store"] != true {
		t.Errorf("without stats: %+v", c.Stats)
	}
}

package cache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stageDir writes a finished stage directory (outputs, then the manifest)
// and returns its manifest.
func stageDir(t *testing.T, dir string, outputs map[string]string) *Manifest {
	t.Helper()
	m := &Manifest{Format: ManifestFormat, Inputs: KeyInputs{Stage: "train", Code: "v1", Params: []byte(`{}`)}}
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

// Trim keeps the most recently used entries that fit the cap, and removes
// partial entries older than a minute.
func TestTrim(t *testing.T) {
	dir := t.TempDir()
	if res, err := Trim(filepath.Join(dir, "none"), 10); err != nil || *res != (TrimResult{}) {
		t.Errorf("missing store: %+v %v", res, err)
	}
	now := time.Now()
	entry := func(name string, size int, age time.Duration) string {
		p := filepath.Join(dir, strings.TrimPrefix(name, ".")[:2], name)
		must(t, os.MkdirAll(filepath.Join(p, "sub"), 0o755))
		must(t, os.WriteFile(filepath.Join(p, "sub", "f"), make([]byte, size), 0o644))
		must(t, os.Chtimes(p, now.Add(-age), now.Add(-age)))
		return p
	}
	newest := entry("aa1", 40, time.Second)
	middle := entry("aa2", 30, time.Hour)
	oldest := entry("bb3", 20, 2*time.Hour)
	small := entry("cc4", 5, 3*time.Hour)
	partialOld := entry(".dd5.tmp-1", 1, 2*time.Minute)
	partialNew := entry(".dd6.tmp-2", 1, 0)
	must(t, os.WriteFile(filepath.Join(dir, "README"), nil, 0o644)) // not an entry directory
	res, err := Trim(dir, 75)
	must(t, err)
	// 40 + 30 fit; 20 more would not; the 5 of the oldest still fits.
	if want := (TrimResult{Removed: 1, Kept: 3, RemovedBytes: 20, KeptBytes: 75}); *res != want {
		t.Errorf("Trim to 75: %+v, want %+v", *res, want)
	}
	for p, kept := range map[string]bool{newest: true, middle: true, oldest: false, small: true, partialOld: false, partialNew: true} {
		if _, err := os.Stat(p); (err == nil) != kept {
			t.Errorf("%s: kept %v, want %v", filepath.Base(p), err == nil, kept)
		}
	}
	if res, err := Trim(dir, 75); err != nil || res.Removed != 0 || res.KeptBytes != 75 {
		t.Errorf("second Trim: %+v %v", res, err)
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

package pipeline

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"monomer/pipeline/cache"
)

// TestStoreRestores: switching k away and back restores train's (and
// evaluate's and report's) first outputs from the store without running
// them; an output edited in place is never restored; Trim keeps the most
// recently used entries within the cap.
func TestStoreRestores(t *testing.T) {
	f := newFixture(t)
	opts := Options{Store: filepath.Join(f.dir, "store")}
	_, ran, err := f.run(t, opts)
	must(t, err)
	if len(ran) != 13 {
		t.Fatalf("first run ran %v", ran)
	}
	first := files(t, f.runDir)
	_, ran, err = f.run(t, opts, "settings.k=7")
	must(t, err)
	if !slices.Equal(ran, []string{"a/evaluate", "a/train", "b/evaluate", "b/train", "report"}) {
		t.Fatalf("k=7 ran %v", ran)
	}
	steps, err := planJob(f.load(t), f.exp, f.jobSt, Options{RunDir: f.runDir, Store: opts.Store})
	must(t, err)
	for _, s := range steps {
		if s.ID == "a/train" && !strings.HasSuffix(s.Why, "(restored from the store)") {
			t.Errorf("plan: %s %s", s.ID, s.Why)
		}
	}
	sum, ran, err := f.run(t, opts)
	must(t, err)
	if len(ran) != 0 || sum.Restored != 5 {
		t.Fatalf("back to k=100: ran %v, %+v", ran, sum)
	}
	if back := files(t, f.runDir); !maps.Equal(first, back) {
		t.Error("restored outputs differ from the first run's")
	}
	m, err := cache.ReadManifest(filepath.Join(f.runDir, "a", "train"))
	must(t, err)
	if m.Stats["restored_from_store"] != true {
		t.Errorf("manifest stats %v", m.Stats)
	}
	// The plan marks restored stages (status shows "restored"), only them.
	steps, err = planJob(f.load(t), f.exp, f.jobSt, Options{RunDir: f.runDir, Store: opts.Store})
	must(t, err)
	for _, s := range steps {
		if want, ok := map[string]bool{"a/train": true, "a/ingest": false}[s.ID]; ok && (s.State != UpToDate || s.Restored != want) {
			t.Errorf("plan after the restore: %s %v restored %v, want up to date, restored %v", s.ID, s.State, s.Restored, want)
		}
	}
	if _, _, err := f.run(t, opts); err != nil {
		t.Fatal(err)
	}

	// A restored stage holds copies: editing one in place leaves the store's
	// entry intact, so switching away and back restores it again.
	out := filepath.Join(f.runDir, "a", "train", "out.txt")
	must(t, os.WriteFile(out, []byte("edited\n"), 0o644)) // truncates the same inode
	_, _, err = f.run(t, opts, "settings.k=7")
	must(t, err)
	_, ran, err = f.run(t, opts)
	must(t, err)
	if len(ran) != 0 {
		t.Errorf("after editing a restored copy ran %v", ran)
	}

	// An entry edited in place (as an edit through the hard link of a
	// freshly run stage would) is dropped, and the stage runs.
	stored := filepath.Join(cache.NewStore(opts.Store, 0).Entry(m.Key), "out.txt")
	must(t, os.WriteFile(stored, []byte("edited\n"), 0o644))
	_, _, err = f.run(t, opts, "settings.k=7")
	must(t, err)
	_, ran, err = f.run(t, opts)
	must(t, err)
	if !slices.Contains(ran, "a/train") || slices.Contains(ran, "b/train") {
		t.Errorf("after an in-place edit of the entry ran %v", ran)
	}

	res, err := cache.Trim(opts.Store, 0)
	must(t, err)
	if res.Kept != 0 || res.Removed < 13 {
		t.Errorf("trim to 0: %+v", res)
	}
	if _, _, err := f.run(t, opts, "settings.k=7"); err != nil {
		t.Fatal(err)
	}
	if _, ran, _ := f.run(t, opts); len(ran) != 5 {
		t.Errorf("after trimming everything ran %v", ran)
	}
}

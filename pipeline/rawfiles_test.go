package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"monomer/job"
)

// TestRawFilesFirst: a raw file of a stage below ingest (features'
// image_features or embeddings) missing, or a named pipe, fails the run
// before any stage runs, with the code hashing it gives; the dry run's
// pre-flight says the same. Before, ingest ran first and the run failed
// at features.
func TestRawFilesFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(p string) error
		want error
	}{
		{"missing", func(string) error { return nil }, ErrMissingInput},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }, ErrUsage},
	} {
		f := newFixture(t)
		f.exp[1].(*fakeStage).files = func(e *job.Resolved) []string { return []string{e.Data.ImageFeatures} }
		must(t, tc.make(filepath.Join(f.dir, "img.b")))
		_, ran, err := f.run(t, Options{})
		if !errors.Is(err, tc.want) || len(ran) != 0 {
			t.Errorf("%s: err %v, ran %v; want %v before any stage", tc.name, err, ran, tc.want)
		}
		if _, err := os.Stat(f.runDir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the run directory was made: %v", tc.name, err)
		}
		g, err := expand(f.load(t), f.exp, f.jobSt)
		must(t, err)
		if err := Preflight(g, Options{RunDir: f.runDir}); !errors.Is(err, tc.want) {
			t.Errorf("%s: Preflight: %v", tc.name, err)
		}
		// With the file there, the run goes through.
		os.Remove(filepath.Join(f.dir, "img.b"))
		must(t, os.WriteFile(filepath.Join(f.dir, "img.b"), []byte("x"), 0o644))
		if _, ran, err := f.run(t, Options{}); err != nil || len(ran) == 0 {
			t.Errorf("%s: with the file: %v, ran %v", tc.name, err, ran)
		}
	}
}

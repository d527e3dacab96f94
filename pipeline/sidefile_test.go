package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"monomer/internal/sidefile"
	"monomer/internal/sidefile/sidefiletest"
)

// intruders stand at a side file's name in place of monomer's own.
var intruders = sidefiletest.Intruders([]byte("my notes\n"))

// snapshot is sidefiletest.Snapshot.
func snapshot(t *testing.T, p string) string {
	t.Helper()
	return sidefiletest.Snapshot(t, p)
}

// A link (to a file outside the run directory), a directory, a pipe or a
// file of another form at the root lock, an experiment's lock or the run
// log: the run fails with ErrUsage (exit 2) naming it before any stage
// runs, and the victim and the intruder are as they were.
func TestRunRefusesForeignSideFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		exps []string
	}{{LockName, nil}, {"a/" + LockName, []string{"a"}}, {RunLogName, nil}} {
		for _, in := range intruders {
			t.Run(strings.ReplaceAll(tc.name, "/", "_")+"/"+in.Name, func(t *testing.T) {
				f := newFixture(t)
				victim := filepath.Join(t.TempDir(), "victim")
				must(t, os.WriteFile(victim, []byte("pid 1 started 2020-01-01T00:00:00Z on x\n"), 0o644))
				p := filepath.Join(f.runDir, tc.name)
				must(t, os.MkdirAll(filepath.Dir(p), 0o755))
				in.Put(t, p, victim)
				before, victimBefore := snapshot(t, p), snapshot(t, victim)
				_, ran, err := f.run(t, Options{Experiments: tc.exps})
				if !errors.Is(err, ErrUsage) || !errors.Is(err, sidefile.ErrForeign) || !strings.Contains(err.Error(), p) {
					t.Fatalf("err %v: want ErrUsage naming %s", err, p)
				}
				if len(ran) != 0 {
					t.Errorf("stages ran: %v", ran)
				}
				if got := snapshot(t, p); got != before {
					t.Errorf("intruder: %s, was %s", got, before)
				}
				if got := snapshot(t, victim); got != victimBefore {
					t.Errorf("victim: %s, was %s", got, victimBefore)
				}
			})
		}
	}
}

// What a status probe reads (the holders of the locks, the run log) is
// read without following a link or waiting on a pipe.
func TestProbesReadOnlySideFiles(t *testing.T) {
	for _, in := range intruders {
		if in.Name == "hard link" {
			continue // reading one is harmless: only writes are refused
		}
		t.Run(in.Name, func(t *testing.T) {
			dir := t.TempDir()
			victim := filepath.Join(t.TempDir(), "victim")
			host, _ := os.Hostname()
			must(t, os.WriteFile(victim, []byte("pid 1 started 2020-01-01T00:00:00Z on "+host+"x\n"), 0o644))
			must(t, os.MkdirAll(filepath.Join(dir, "a"), 0o755))
			in.Put(t, filepath.Join(dir, LockName), victim)
			in.Put(t, filepath.Join(dir, "a", LockName), victim)
			in.Put(t, filepath.Join(dir, RunLogName), victim)
			if h := Holders(dir); len(h) != 0 {
				t.Errorf("holders %q", h)
			}
			if got := holders(filepath.Join(dir, LockName)); got != "another run" {
				t.Errorf("holders: %q", got)
			}
			_, _, err := ReadRunLog(dir)
			if in.Name == "foreign file" {
				return // a file: read, its lines skipped
			}
			if !errors.Is(err, sidefile.ErrForeign) {
				t.Errorf("ReadRunLog: %v, want ErrForeign", err)
			}
		})
	}
}

// A run directory left by an earlier monomer (a released lock, empty; a
// dead run's holder line; a run log with a torn last line) is monomer's:
// the run passes and appends its records.
func TestRunOverOldSideFiles(t *testing.T) {
	f := newFixture(t)
	must(t, os.MkdirAll(filepath.Join(f.runDir, "a"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.runDir, LockName), []byte("pid 999999 started 2026-01-01T00:00:00Z on gone\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.runDir, "a", LockName), nil, 0o644))
	must(t, os.WriteFile(filepath.Join(f.runDir, RunLogName), []byte(`{"event":"start","run_id":"old"}`+"\n"+`{"event":"end","ru`), 0o644))
	_, _, err := f.run(t, Options{RunID: "new"})
	must(t, err)
	recs, skipped, err := ReadRunLog(f.runDir)
	must(t, err)
	if len(recs) != 3 || skipped != 1 || recs[2].RunID != "new" {
		t.Errorf("%d records, %d skipped: %+v", len(recs), skipped, recs)
	}
}

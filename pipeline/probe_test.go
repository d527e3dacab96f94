package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMachineMemory reads MemAvailable, falls back to MemTotal, converts
// kB, and names the file when neither is there.
func TestMachineMemory(t *testing.T) {
	defer func(p string) { meminfoPath = p }(meminfoPath)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, meminfo string
		want          int64
		err           string
	}{
		{name: "available", meminfo: "MemTotal:       2048 kB\nMemFree: 10 kB\nMemAvailable:   1000 kB\n", want: 1000 << 10},
		{name: "old kernel", meminfo: "MemTotal:       2048 kB\nMemFree:        10 kB\n", want: 2048 << 10},
		{name: "zero available", meminfo: "MemAvailable: 0 kB\nMemTotal: 3 kB\n", want: 3 << 10},
		{name: "bytes", meminfo: "garbage line\nEmpty:\nBad: x kB\nMemAvailable: 512\n", want: 512},
		{name: "neither", meminfo: "MemFree: 10 kB\n", err: "no MemAvailable or MemTotal in " + filepath.Join(dir, "neither")},
		{name: "missing", err: "pipeline: machine memory: open"},
	} {
		meminfoPath = filepath.Join(dir, tc.name)
		if tc.meminfo != "" {
			must(t, os.WriteFile(meminfoPath, []byte(tc.meminfo), 0o644))
		}
		got, err := MachineMemory()
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: err %v, want it to say %q", tc.name, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
}

// TestHolders lists the live holders of a run directory's locks: this
// process's, another host's (it cannot be checked), not a gone pid's, not a
// malformed line's, not a hidden directory's.
func TestHolders(t *testing.T) {
	dir := t.TempDir()
	host, err := os.Hostname()
	must(t, err)
	lock := func(sub, line string) {
		t.Helper()
		must(t, os.MkdirAll(filepath.Join(dir, sub), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, sub, LockName), []byte(line+"\n"), 0o644))
	}
	if h := Holders(dir); len(h) != 0 {
		t.Fatalf("no locks: %q", h)
	}
	me := fmt.Sprintf("pid %d started 2026-01-02T03:04:05Z on %s", os.Getpid(), host)
	lock("", me)
	lock("a", fmt.Sprintf("pid %d started 2026-01-02T03:04:05Z on %s", os.Getpid(), host))
	lock("b", "pid 12 started 2026-01-02T03:04:05Z on another-host")
	lock("c", fmt.Sprintf("pid %d started 2026-01-02T03:04:05Z on %s", 1<<30, host)) // no such pid
	lock("d", "not a holder line")
	lock(".hidden", me)
	want := []string{me, me + " (experiment a)", "pid 12 started 2026-01-02T03:04:05Z on another-host (experiment b)"}
	if got := Holders(dir); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Holders:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

type countTracker struct {
	label string
	total int64
	added int64
	done  bool
}

func (c *countTracker) Add(n int64) { c.added += n }
func (c *countTracker) Done()       { c.done = true }

// TestEnvTrack: without a Tracker, Track's tracker does nothing; with one,
// it is the Tracker's for the label and total.
func TestEnvTrack(t *testing.T) {
	var e Env
	tr := e.Track("x", 3)
	tr.Add(1) // must not panic
	tr.Done()
	var got *countTracker
	e.Tracker = func(label string, total int64) Tracker {
		got = &countTracker{label: label, total: total}
		return got
	}
	tr = e.Track("train", 7)
	tr.Add(2)
	tr.Add(3)
	tr.Done()
	if got == nil || got.label != "train" || got.total != 7 || got.added != 5 || !got.done {
		t.Errorf("tracker %+v", got)
	}
}

// TestVerifyFileOnDisk: verify names an output deleted from, or changed
// in, the run directory after its stage ran, though the rerun reproduces
// the recorded hash.
func TestVerifyFileOnDisk(t *testing.T) {
	f := newFixture(t)
	if _, _, err := f.run(t, Options{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(f.runDir, "b", "evaluate", "out.txt")
	must(t, os.WriteFile(out, []byte("edited by hand\n"), 0o644))
	res, err := verifyJob(context.Background(), f.load(t), f.exp, f.jobSt, Options{RunDir: f.runDir, Experiments: []string{"b"}})
	must(t, err)
	first := res.First()
	if first == nil || first.ID != "b/evaluate" || first.Table != "out.txt" {
		t.Fatalf("edited: %+v", first)
	}
	// The rerun agrees with the record, the disk does not.
	var rec, disk, rerun string
	if _, err := fmt.Sscanf(first.Diff, "sha256 %s recorded, %s on disk, %s rerun", &rec, &disk, &rerun); err != nil || rec != rerun || rec == disk {
		t.Errorf("edited: %q (%v)", first.Diff, err)
	}
	must(t, os.Remove(out))
	res, err = verifyJob(context.Background(), f.load(t), f.exp, f.jobSt, Options{RunDir: f.runDir, Experiments: []string{"b"}})
	must(t, err)
	if first := res.First(); first == nil || first.ID != "b/evaluate" || first.Diff != "recorded, but missing from the run directory" {
		t.Errorf("deleted: %+v", first)
	}
}

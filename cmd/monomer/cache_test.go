package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"monomer/pipeline"
)

// TestCacheRestoreAndTrim: k from 10 to 20 and back restores the first
// outputs from the store without running train; cache trim empties it.
func TestCacheRestoreAndTrim(t *testing.T) {
	dir := jobDir(t)
	run := func(k string) result {
		t.Helper()
		r := monomer(t, dir, "fake", nil, "run", "job.yaml", "--set", "settings.k="+k)
		if r.code != 0 {
			t.Fatalf("k=%s: exit %d\n%s", k, r.code, r.stderr)
		}
		return r
	}
	run("10")
	first, err := os.ReadFile(filepath.Join(dir, "runs", "cmdtest", "a", "train", "out.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if s := started(t, run("20").stderr); strings.Join(s, ",") != "a/train,b/train,report" {
		t.Errorf("k=20 started %v", s)
	}
	r := run("10")
	if s := started(t, r.stderr); len(s) != 0 || strings.Count(r.stderr, `"msg":"stage restore"`) != 3 {
		t.Errorf("back to k=10 started %v\n%s", s, r.stderr)
	}
	if back, _ := os.ReadFile(filepath.Join(dir, "runs", "cmdtest", "a", "train", "out.parquet")); string(back) != string(first) {
		t.Error("restored train outputs differ from the first")
	}
	r = monomer(t, dir, "fake", nil, "cache", "trim", "job.yaml", "--max", "0")
	if r.code != 0 || !strings.Contains(r.stdout, "removed 8 entries") || !strings.Contains(r.stdout, "kept 0 (0 bytes)") {
		t.Errorf("trim: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := monomer(t, dir, "fake", nil, "cache", "trim", "job.yaml", "--max", "lots"); r.code != 2 {
		t.Errorf("bad --max: exit %d", r.code)
	}
	for _, tc := range []struct {
		in   string
		want int64
	}{{"0", 0}, {"512", 512}, {"10K", 10 << 10}, {"3G", 3 << 30}, {"1tb", 1 << 40},
		{"20GiB", 20 << 30}, {"20 GiB", 20 << 30}, {" 20 gb ", 20 << 30}, {"5 KiB", 5 << 10}, {"7 B", 7}} {
		if got, err := parseSize(tc.in); err != nil || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v", tc.in, got, err)
		}
	}
}

// Issue 37: every way of writing the README's "20 GiB" is accepted, and
// nonsense is still refused.
func TestParseSizeUnits(t *testing.T) {
	for _, in := range []string{"20GiB", "20 GiB", "20gib", "20 G", "20G", "20GB"} {
		if got, err := parseSize(in); err != nil || got != 20<<30 {
			t.Errorf("parseSize(%q) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"20IB", "GiB", "20 XiB", "-1G", "20 Gi B", "1e3", ""} {
		if got, err := parseSize(in); !errors.Is(err, pipeline.ErrUsage) {
			t.Errorf("parseSize(%q) = %d, %v; want a usage error", in, got, err)
		}
	}
}

// Issue 37: MONOMER_STORE naming a project folder (a .git and a .env aged
// two hours, a two-letter folder of notes, a sparse 21 GiB file): run and
// cache trim --max 0 exit 2 naming the folder, and every file is intact.
// Inside a real store, the same files survive a run's trim and a trim to 0.
func TestStoreNotAStoreCLI(t *testing.T) {
	dir := jobDir(t)
	project := filepath.Join(t.TempDir(), "proj")
	// At the top and one level down (proj/.git as in the report,
	// which the old trim took for partial entries).
	files := map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".env": "secret\n", "ab/notes.txt": "notes\n",
		"proj/.git/HEAD": "ref: refs/heads/main\n", "proj/.env": "secret\n"}
	plant := func(root string) {
		old := time.Now().Add(-2 * time.Hour)
		for name, content := range files {
			p := filepath.Join(root, filepath.FromSlash(name))
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(t, os.WriteFile(p, []byte(content), 0o644))
			must(t, os.Chtimes(p, old, old))
			must(t, os.Chtimes(filepath.Dir(p), old, old))
		}
		f, err := os.Create(filepath.Join(root, "disk.img"))
		must(t, err)
		must(t, f.Truncate(21<<30))
		must(t, f.Close())
	}
	intact := func(root, when string) {
		t.Helper()
		for name, content := range files {
			if b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name))); err != nil || string(b) != content {
				t.Errorf("%s: %s: %q %v", when, name, b, err)
			}
		}
		if fi, err := os.Stat(filepath.Join(root, "disk.img")); err != nil || fi.Size() != 21<<30 {
			t.Errorf("%s: disk.img: %v", when, err)
		}
	}
	plant(project)
	env := []string{"MONOMER_STORE=" + project}
	for _, args := range [][]string{
		{"run", "job.yaml", "--only", "ingest"},
		{"cache", "trim", "job.yaml", "--max", "0"},
	} {
		r := monomer(t, dir, "fake", env, args...)
		if r.code != 2 || !strings.Contains(r.stderr, project) || !strings.Contains(r.stderr, "not a monomer store") ||
			!strings.Contains(r.stderr, "MONOMER_STORE") {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
		intact(project, strings.Join(args, " "))
	}
	if _, err := os.Stat(filepath.Join(dir, "runs", "cmdtest", "runlog.jsonl")); err == nil {
		t.Error("run started before refusing the store")
	}

	store := filepath.Join(t.TempDir(), "store")
	env = []string{"MONOMER_STORE=" + store}
	if r := monomer(t, dir, "fake", env, "run", "job.yaml", "--only", "ingest"); r.code != 0 {
		t.Fatalf("run with a new store: exit %d\n%s", r.code, r.stderr)
	}
	plant(store)
	if r := monomer(t, dir, "fake", env, "run", "job.yaml", "--force"); r.code != 0 {
		t.Fatalf("run with a store holding foreign files: exit %d\n%s", r.code, r.stderr)
	}
	intact(store, "run")
	r := monomer(t, dir, "fake", env, "cache", "trim", "job.yaml", "--max", "0")
	if r.code != 0 || !strings.Contains(r.stdout, "kept 0 (0 bytes)") {
		t.Errorf("trim of a store holding foreign files: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	intact(store, "trim --max 0")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestStoreNearlyOff: a MONOMER_STORE value meant to turn the store off
// but not "off" exits 2 before anything is made (it made a store folder
// ./of in the working directory); "off" in any case is off; a folder of
// such a name is reached as ./NAME.
func TestStoreNearlyOff(t *testing.T) {
	for _, v := range []string{"of", "offf", "0ff", "none", "0", "False"} {
		dir := jobDir(t)
		r := monomer(t, dir, "fake", []string{"MONOMER_STORE=" + v}, "run", "job.yaml")
		if r.code != exitUsage || !strings.Contains(r.stderr, "MONOMER_STORE="+v+" is not off") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("MONOMER_STORE=%s: exit %d, stderr %q", v, r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, v)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("MONOMER_STORE=%s: a folder %s was made (%v)", v, v, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "runs")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("MONOMER_STORE=%s: the run directory was made (%v)", v, err)
		}
	}
	dir := jobDir(t)
	if r := monomer(t, dir, "fake", []string{"MONOMER_STORE=OFF"}, "run", "job.yaml"); r.code != 0 {
		t.Fatalf("MONOMER_STORE=OFF: exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs", "cmdtest", ".store")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("MONOMER_STORE=OFF: a store was made (%v)", err)
	}
	if r := monomer(t, dir, "fake", []string{"MONOMER_STORE=./none"}, "run", "job.yaml", "--force"); r.code != 0 {
		t.Fatalf("MONOMER_STORE=./none: exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "none", "CACHEDIR.TAG")); err != nil {
		t.Errorf("MONOMER_STORE=./none: no store there: %v", err)
	}
}

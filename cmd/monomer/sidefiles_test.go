package main

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fileSum is the sha256 of the file at p, "" if it cannot be read.
func fileSum(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// The hostile report's cases of files outside monomer's own, through the
// binary: a link at NAME.part and at NAME.part.lock exit 2 naming it with
// the victim's bytes unchanged; the user's NAME.bad is kept; a user's
// SHA256SUMS in --out is never appended to, and a second run passes.
func TestDownloadSideFilesExitCodes(t *testing.T) {
	good, corrupt := gzBytes(t, 3000), gzBytes(t, 3000)
	corrupt = corrupt[:len(corrupt)-40]
	m := &mirror{files: map[string][]byte{
		"/ok/categoryFiles/meta_Baby.json.gz":  good,
		"/bad/categoryFiles/meta_Baby.json.gz": corrupt,
	}}
	ts := httptest.NewServer(m)
	defer ts.Close()
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim.txt")
	write(t, victim, "twenty-one bytes ok!\n")
	want := fileSum(t, victim)
	run := func(out, mirror string) result {
		t.Helper()
		return monomer(t, dir, "fake", nil, "download", "--release", "2014", "--category", "Baby", "--what", "meta",
			"--mirror", ts.URL+"/"+mirror, "--out", out, "--retries", "0")
	}

	for _, side := range []string{"meta_Baby.json.gz.part", "meta_Baby.json.gz.part.lock"} {
		out := filepath.Join(dir, "link-"+side)
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(out, side)
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}
		r := run(out, "ok")
		if r.code != exitUsage || !strings.Contains(r.stderr, link) || !strings.Contains(r.stderr, "symbolic link") {
			t.Errorf("link at %s: exit %d, want 2 naming it:\n%s", side, r.code, r.stderr)
		}
		if got := fileSum(t, victim); got != want {
			t.Errorf("link at %s: the victim changed", side)
		}
		if dst, err := os.Readlink(link); err != nil || dst != victim {
			t.Errorf("link at %s: now %q %v", side, dst, err)
		}
	}

	// A corrupt download beside the user's notes at NAME.bad: exit 3, the
	// notes kept, the bytes in NAME.bad.1.
	out := filepath.Join(dir, "bad")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(out, "meta_Baby.json.gz.bad")
	write(t, notes, "notes\n")
	r := run(out, "bad")
	if r.code != exitBadInput || !strings.Contains(r.stderr, notes+".1") {
		t.Errorf("corrupt: exit %d, want 3 naming %s.1:\n%s", r.code, notes, r.stderr)
	}
	if b, _ := os.ReadFile(notes); string(b) != "notes\n" {
		t.Errorf("the notes now %d bytes, want their 6", len(b))
	}

	// The user's BSD-style SHA256SUMS: exit 0 twice, never appended to.
	out = filepath.Join(dir, "sums")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	sums := filepath.Join(out, "SHA256SUMS")
	write(t, sums, "SHA256 (notes.txt) = "+strings.Repeat("0", 64)+"\n")
	before := fileSum(t, sums)
	for i := range 2 {
		if r := run(out, "ok"); r.code != 0 {
			t.Errorf("run %d over a user's SHA256SUMS: exit %d:\n%s", i+1, r.code, r.stderr)
		}
	}
	if fileSum(t, sums) != before {
		t.Error("the user's SHA256SUMS changed")
	}
	if b, _ := os.ReadFile(filepath.Join(out, "MONOMER.SHA256SUMS")); string(b) != hexSum(good)+"  meta_Baby.json.gz\n" {
		t.Errorf("MONOMER.SHA256SUMS = %q", b)
	}
}

// run with a link at the run directory's .lock or runlog.jsonl: exit 2
// naming it, the victim unchanged.
func TestRunSideFilesExitCodes(t *testing.T) {
	for _, side := range []string{".lock", "runlog.jsonl"} {
		dir := jobDir(t)
		victim := filepath.Join(t.TempDir(), "victim.txt")
		write(t, victim, "the victim\n")
		want := fileSum(t, victim)
		runDir := filepath.Join(dir, "runs", "cmdtest")
		if err := os.MkdirAll(runDir, 0o755); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(runDir, side)
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}
		r := monomer(t, dir, "fake", nil, "run", "job.yaml")
		if r.code != exitUsage || !strings.Contains(r.stderr, filepath.Join("runs", "cmdtest", side)) {
			t.Errorf("link at %s: exit %d, want 2 naming it:\n%s", side, r.code, r.stderr)
		}
		if fileSum(t, victim) != want {
			t.Errorf("link at %s: the victim changed", side)
		}
	}
}

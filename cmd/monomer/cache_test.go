package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	}{{"0", 0}, {"512", 512}, {"10K", 10 << 10}, {"3G", 3 << 30}, {"1tb", 1 << 40}} {
		if got, err := parseSize(tc.in); err != nil || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v", tc.in, got, err)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestGenTextScale: a text scale writes its category's 2014 file names and
// no image file; --fraction outside (0, 1] is a usage error.
func TestGenTextScale(t *testing.T) {
	out := t.TempDir()
	gen := func(args ...string) error {
		root := newRootCommand()
		root.SetOut(&bytes.Buffer{})
		return execute(context.Background(), root, append([]string{"gen", "--out", out, "--seed", "1"}, args...))
	}
	if err := gen("--scale", "games", "--fraction", "0.02"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"meta_Video_Games.json.gz", "reviews_Video_Games.json.gz"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "image_features_Video_Games.b")); err == nil {
		t.Error("a text scale wrote an image feature file")
	}
	for _, f := range []string{"0", "1.5"} {
		if err := gen("--scale", "games", "--fraction", f); exitCode(err) != exitUsage {
			t.Errorf("--fraction %s: %v (exit %d)", f, err, exitCode(err))
		}
	}
}

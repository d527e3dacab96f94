package repocheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxBenchmarksLines bounds BENCHMARKS.md, the page of current figures:
// each issue adds figures, and a page that only grows buries the current
// ones. Older sections go to a dated note under docs/notes/ and leave a
// one-line pointer (docs/notes/README.md).
const maxBenchmarksLines = 600

// TestBenchmarksLength fails when BENCHMARKS.md is over maxBenchmarksLines.
func TestBenchmarksLength(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), "\n"); n > maxBenchmarksLines {
		t.Errorf("BENCHMARKS.md has %d lines, over %d: move its oldest sections to a dated note under docs/notes/, with a one-line pointer each", n, maxBenchmarksLines)
	}
}

package report

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"testing"
)

// fileRank orders a report's files as Write starts them within an
// experiment: the λ plot, the training curves, the maps by index, the gate.
var fileRank = regexp.MustCompile(`^e(\d+)-(lambda|trace-.*|map-(\d+)|gate)\.png$`)

// TestWriteOrderAnyProcs: the plots render on goroutines of their own, yet
// Write's files and skips come in the order the plots were started, and
// every file's bytes are the same, at GOMAXPROCS 1, 2, 3, 7 and 16.
func TestWriteOrderAnyProcs(t *testing.T) {
	if testing.Short() {
		t.Skip("five reports")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first *Written
	var firstDir string
	for _, p := range []int{1, 2, 3, 7, 16} {
		runtime.GOMAXPROCS(p)
		dir := t.TempDir()
		w, err := Write(context.Background(), dir, testPage(), Options{Seed: 1, TSNE: TSNEOptions{Iterations: 60}})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first, firstDir = w, dir
			rank := func(f string) [3]int {
				m := fileRank.FindStringSubmatch(f)
				if m == nil {
					return [3]int{1 << 30} // index.html, last
				}
				e, _ := strconv.Atoi(m[1])
				kind := map[byte]int{'l': 0, 't': 1, 'm': 2, 'g': 4}[m[2][0]]
				i, _ := strconv.Atoi(m[3])
				return [3]int{e, kind, i}
			}
			if !slices.IsSortedFunc(w.Files, func(a, b string) int {
				ra, rb := rank(a), rank(b)
				return slices.Compare(ra[:], rb[:])
			}) {
				t.Errorf("files out of order: %v", w.Files)
			}
			continue
		}
		if !slices.Equal(w.Files, first.Files) || !slices.Equal(w.Skipped, first.Skipped) {
			t.Errorf("GOMAXPROCS %d: files %v, skipped %v; at 1: %v, %v", p, w.Files, w.Skipped, first.Files, first.Skipped)
		}
		for _, f := range first.Files {
			a, err1 := os.ReadFile(filepath.Join(firstDir, f))
			b, err2 := os.ReadFile(filepath.Join(dir, f))
			if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
				t.Errorf("GOMAXPROCS %d: %s differs from GOMAXPROCS 1's (%v, %v)", p, f, err1, err2)
			}
		}
	}
	t.Logf("files %v, skipped %v", first.Files, first.Skipped)
}

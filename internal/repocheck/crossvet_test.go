package repocheck

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCrossVetCovers: `make lint` vets linux/amd64 and, for every other
// system, darwin/arm64 alone (one build of every dependency instead of
// two). That checks every file that darwin/amd64 or linux/arm64 would
// compile only while no file needs an OS and an architecture other than
// linux/amd64 at once (`linux && arm64`, `darwin && amd64`, _linux_arm64.go):
// this test fails on the first such file, so lint is widened with it.
func TestCrossVetCovers(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\s+GOOS=darwin GOARCH=arm64 \$\(CROSS_VET\)$`).Match(mk) {
		t.Fatal("Makefile: lint no longer vets GOOS=darwin GOARCH=arm64; this test's premise changed")
	}
	ctx := func(goos, goarch string) build.Context {
		c := build.Default
		c.GOOS, c.GOARCH, c.CgoEnabled = goos, goarch, false
		c.BuildTags = nil
		return c
	}
	vetted := []build.Context{ctx("linux", "amd64"), ctx("darwin", "arm64")}
	wanted := []build.Context{ctx("darwin", "amd64"), ctx("linux", "arm64")}
	root := filepath.Join("..", "..")
	files := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "runs" || n == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		files++
		dir, name := filepath.Split(p)
		match := func(cs []build.Context) (string, bool) {
			for _, c := range cs {
				c := c
				if ok, err := c.MatchFile(dir, name); err != nil {
					t.Fatalf("%s: %v", p, err)
				} else if ok {
					return c.GOOS + "/" + c.GOARCH, true
				}
			}
			return "", false
		}
		if on, ok := match(wanted); ok {
			if _, ok := match(vetted); !ok {
				t.Errorf("%s builds on %s but neither linux/amd64 nor darwin/arm64: add its platform to make lint's vets", p, on)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("walked %d Go files: the walk starts in the wrong place", files)
	}
}

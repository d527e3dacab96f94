package docs

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the module's root, where BENCHMARKS.md and docs/ are.
const root = ".."

// docPath matches a path under docs/ ending in .md, as comments cite the
// notebook's entries and the manual's pages, with the word before it.
var docPath = regexp.MustCompile(`(\S*)\s*\b(docs/[A-Za-z0-9_/.-]*\.md)`)

// otherRepo matches an owner/name word: a path right after one is that
// GitHub repository's file, not ours (download/release.go cites one).
var otherRepo = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// benchTitle matches a citation of a BENCHMARKS.md section by its title.
var benchTitle = regexp.MustCompile(`BENCHMARKS\.md, "([^"]+)"`)

// sources calls f with the path (relative to root) and the text of every
// .go and .s file of the module, leaving out hidden directories and testdata.
func sources(t *testing.T, f func(path string, text []byte)) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, ".s") {
			return nil
		}
		text, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		f(filepath.ToSlash(rel), text)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNotesCited fails when a Go or assembly file names a docs/….md path
// that does not exist, so that a moved or renamed page, or a mistyped
// notebook entry, is caught where it is cited.
func TestNotesCited(t *testing.T) {
	n := 0
	sources(t, func(path string, text []byte) {
		for _, line := range strings.Split(string(text), "\n") {
			for _, m := range docPath.FindAllStringSubmatch(line, -1) {
				p := m[2]
				if otherRepo.MatchString(m[1]) {
					continue
				}
				n++
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
					t.Errorf("%s cites %s, which does not exist", path, p)
				}
			}
		}
	})
	if n == 0 {
		t.Fatal("no docs/ path cited anywhere: the walk found no sources")
	}
}

// TestBenchmarksTitlesCited fails when a Go comment cites a section of
// BENCHMARKS.md by a title that no heading of the page starts with.
// Comments are read whole, so a title broken over two lines is one title.
func TestBenchmarksTitlesCited(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(root, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	var headings []string
	for _, line := range strings.Split(string(page), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			headings = append(headings, h)
		}
	}
	fset := token.NewFileSet()
	sources(t, func(path string, text []byte) {
		if !strings.HasSuffix(path, ".go") {
			return
		}
		f, err := parser.ParseFile(fset, path, text, parser.ParseComments)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return
		}
		for _, g := range f.Comments {
			joined := strings.Join(strings.Fields(g.Text()), " ")
			for _, m := range benchTitle.FindAllStringSubmatch(joined, -1) {
				if !startsAny(headings, m[1]) {
					t.Errorf("%s: the comment at line %d cites BENCHMARKS.md, %q, not a heading of it (the older sections are in docs/notes/)",
						path, fset.Position(g.Pos()).Line, m[1])
				}
			}
		}
	})
}

func startsAny(headings []string, title string) bool {
	for _, h := range headings {
		if strings.HasPrefix(h, title) {
			return true
		}
	}
	return false
}

package repocheck

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository's root, from this package's directory.
const root = "../.."

// TestDocLinks: every relative link of README.md, BENCHMARKS.md (whose
// moved sections are links into the notebook) and the pages under docs/
// names a file or directory of the repository, and a #fragment names a
// heading of the Markdown page it points into (GitHub's anchors). Links to
// the web are not fetched.
func TestDocLinks(t *testing.T) {
	pages := []string{"README.md", "BENCHMARKS.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			pages = append(pages, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{}
	for _, page := range pages {
		src, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(string(src)) {
			if err := checkLink(page, l.target, anchors); err != nil {
				t.Errorf("%s:%d: link %q: %v", page, l.line, l.target, err)
			}
		}
	}
}

type link struct {
	line   int
	target string
}

var (
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s*\[[^\]]+\]:\s+(\S+)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
)

// links returns the link targets of a Markdown page outside code blocks
// and code spans: inline links and images, and reference definitions.
func links(src string) []link {
	var out []link
	fenced := false
	for i, line := range strings.Split(src, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced || strings.HasPrefix(line, "    ") && !strings.HasPrefix(strings.TrimSpace(line), "-") {
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, link{i + 1, m[1]})
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			out = append(out, link{i + 1, m[1]})
		}
	}
	return out
}

// checkLink resolves target from page (a path from the root).
func checkLink(page, target string, anchors map[string]map[string]bool) error {
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	if u.Scheme != "" || u.Host != "" {
		return nil // the web, or mailto:
	}
	file := page
	if u.Path != "" {
		if strings.HasPrefix(u.Path, "/") {
			return fmt.Errorf("absolute path: links are relative to the page")
		}
		file = filepath.Join(filepath.Dir(page), filepath.FromSlash(u.Path))
		if _, err := os.Stat(filepath.Join(root, file)); err != nil {
			return fmt.Errorf("no file %s", filepath.ToSlash(file))
		}
	}
	if u.Fragment == "" {
		return nil
	}
	if !strings.HasSuffix(file, ".md") {
		return fmt.Errorf("a fragment into %s, which is not a Markdown page", file)
	}
	a, ok := anchors[file]
	if !ok {
		src, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return err
		}
		a = headingAnchors(string(src))
		anchors[file] = a
	}
	if !a[u.Fragment] {
		return fmt.Errorf("no heading of %s has the anchor #%s", filepath.ToSlash(file), u.Fragment)
	}
	return nil
}

// headingAnchors are the anchors GitHub gives a page's ATX headings:
// lower case, punctuation but - and _ dropped, spaces as -, and -1, -2, ...
// after a repeated one.
func headingAnchors(src string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(src, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		text, ok := strings.CutPrefix(line, "#")
		if fenced || !ok {
			continue
		}
		text = strings.TrimLeft(text, "#")
		if text != "" && text[0] != ' ' {
			continue // #hashtag, not a heading
		}
		a := Anchor(strings.TrimSpace(text))
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestHeadingAnchors pins the anchor rules on headings like the docs'.
func TestHeadingAnchors(t *testing.T) {
	got := headingAnchors("# monomer\n## `features: embeddings`: vectors you bring\n### Exit codes\n```\n# not a heading\n```\n## Exit codes\n#### co_review_window\n#tag\n")
	for _, want := range []string{"monomer", "features-embeddings-vectors-you-bring", "exit-codes", "exit-codes-1", "co_review_window"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] || got["tag"] {
		t.Errorf("anchors of a code block or a hashtag: %v", got)
	}
}

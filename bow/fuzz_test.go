package bow

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzTokenize: tokens are non-empty pieces of the text without white
// space, in order, and tagging them never fails.
func FuzzTokenize(f *testing.F) {
	for _, d := range handDocs {
		f.Add(d.Text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		clean := curlyQuotes.Replace(text)
		pos := 0
		for _, tok := range tokenize(nil, text) {
			if tok == "" || strings.ContainsFunc(tok, unicode.IsSpace) {
				t.Fatalf("bad token %q from %q", tok, text)
			}
			i := strings.Index(clean[pos:], tok)
			if i < 0 {
				t.Fatalf("token %q not found in order in %q", tok, clean)
			}
			pos += i
		}
		toks, tags, err := Tag(text)
		if err != nil || len(toks) != len(tags) {
			t.Fatalf("Tag(%q): %v, %d tokens, %d tags", text, err, len(toks), len(tags))
		}
		for i, tg := range tags {
			if tg == "" {
				t.Fatalf("token %q has no tag", toks[i])
			}
		}
	})
}

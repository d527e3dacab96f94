package repocheck

import (
	"strings"
	"unicode"
)

// Anchor is the fragment GitHub gives a Markdown heading: lower case,
// spaces to hyphens, every character but letters, digits, '-' and '_'
// dropped (a repeated heading gets -1, -2, ... after it, which the caller
// counts). The docs generator names its sections' links with it and the
// link check resolves them with it, so the two cannot disagree.
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

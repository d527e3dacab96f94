package bow

import (
	"html"
	"strings"
	"testing"
	"unicode"

	"github.com/jdkato/prose/v2"
)

// proseView rewrites our tags the way prose reports them. prose's tokeniser
// caches the tokens of each distinct white-space-delimited piece by pointer,
// so all occurrences of a piece (except a final one at the very end of the
// text) share one Token, and the tag written last wins for all of them.
func proseView(text string, tags []string) []string {
	text = curlyQuotes.Replace(text)
	pieces := strings.FieldsFunc(text, unicode.IsSpace)
	type ref struct {
		piece string
		k     int
	}
	var refs []ref
	for _, p := range pieces {
		for k := range splitPiece(nil, p) {
			refs = append(refs, ref{p, k})
		}
	}
	last := map[ref]string{}
	lastPiece := len(refs) // tokens of the uncached final piece start here
	if len(pieces) > 0 && !unicode.IsSpace(lastRune(text)) {
		lastPiece = len(refs) - len(splitPiece(nil, pieces[len(pieces)-1]))
	}
	for i, r := range refs[:lastPiece] {
		last[r] = tags[i]
	}
	out := append([]string(nil), tags...)
	for i, r := range refs[:lastPiece] {
		out[i] = last[r]
	}
	return out
}

func lastRune(s string) rune {
	r := []rune(s)
	return r[len(r)-1]
}

// TestMatchesProse: tokens and tags equal prose's own pipeline on real
// reviews (allowing for prose's shared tokens, see proseView), except at
// score ties, where prose's choice is not deterministic.
func TestMatchesProse(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: runs prose itself")
	}
	var texts []string
	for _, f := range []string{"Gift_Cards_5.json.gz", "Magazine_Subscriptions_5.json.gz"} {
		for _, r := range readRealReviews(t, f) {
			texts = append(texts, r.ReviewText)
		}
	}
	pm := prose.ModelFromData("bow-test")
	var ntok, tokDiff, tagDiff int
	for _, text := range texts {
		toks, tags, err := Tag(text)
		if err != nil {
			t.Fatal(err)
		}
		clean := html.UnescapeString(text)
		doc, err := prose.NewDocument(clean, prose.UsingModel(pm),
			prose.WithSegmentation(false), prose.WithExtraction(false))
		if err != nil {
			t.Fatal(err)
		}
		pt := doc.Tokens()
		ntok += len(pt)
		if len(pt) != len(toks) {
			tokDiff++
			t.Errorf("%d tokens, prose %d, in %q", len(toks), len(pt), text)
			continue
		}
		want := proseView(clean, tags)
		for i := range pt {
			if pt[i].Text != toks[i] {
				tokDiff++
				t.Errorf("token %d is %q, prose %q, in %q", i, toks[i], pt[i].Text, text)
				break
			}
			if pt[i].Tag != want[i] {
				tagDiff++
				t.Logf("tag of %q (#%d): ours %s, prose %s in %q", toks[i], i, want[i], pt[i].Tag, text)
			}
		}
	}
	t.Logf("%d reviews, %d tokens, %d token mismatches, %d tag mismatches", len(texts), ntok, tokDiff, tagDiff)
	if tokDiff > 0 || tagDiff > 5 {
		t.Errorf("too many differences from prose")
	}
}

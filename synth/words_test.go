package synth

import (
	"strings"
	"testing"

	"github.com/jdkato/prose/v2"
)

// TestTopicWordsTag checks that the tagger the bow stage uses reads every
// topic and filler word as a noun or adjective in template positions, both
// at the start of a document and after other sentences.
func TestTopicWordsTag(t *testing.T) {
	type probe struct {
		sentence string
		at       int // token index of the word in the sentence
		word     string
		adj      bool
	}
	var probes []probe
	seen := map[string]bool{}
	for _, tp := range append(topics, topic{fillerNouns, fillerAdjs}) {
		for _, n := range tp.nouns {
			if seen["n"+n] {
				continue
			}
			seen["n"+n] = true
			be := "is"
			if plurals[n] {
				be = "are"
			}
			probes = append(probes,
				probe{"The soft " + n + " fits well.", 2, n, false},
				probe{"The " + n + " " + be + " very warm.", 1, n, false},
				probe{"I love this great " + n + ".", 4, n, false},
				probe{"My wife loves the " + n + ".", 4, n, false})
		}
		for _, a := range tp.adjs {
			if seen["a"+a] {
				continue
			}
			seen["a"+a] = true
			probes = append(probes,
				probe{"The " + a + " jacket fits well.", 1, a, true},
				probe{"The jacket is very " + a + ".", 4, a, true},
				probe{"I love this " + a + " shirt.", 3, a, true},
				probe{"It has a " + a + " zipper and a " + a + " collar.", 3, a, true})
		}
	}
	opts := []prose.DocOpt{prose.WithSegmentation(false), prose.WithExtraction(false)}
	var all strings.Builder
	for _, p := range probes {
		all.WriteString(p.sentence + " ")
	}
	doc, err := prose.NewDocument(all.String(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	joined := doc.Tokens()
	opts = append(opts, prose.UsingModel(doc.Model)) // loading the model costs ~0.1 s
	ok := func(p probe, tag string) bool {
		if p.adj {
			return strings.HasPrefix(tag, "JJ")
		}
		return strings.HasPrefix(tag, "NN")
	}
	offset := 0
	for _, p := range probes {
		d, err := prose.NewDocument(p.sentence, opts...)
		if err != nil {
			t.Fatal(err)
		}
		toks := d.Tokens()
		if toks[p.at].Text != p.word || joined[offset+p.at].Text != p.word {
			t.Fatalf("%q: token %d is %q", p.sentence, p.at, toks[p.at].Text)
		}
		if tag := toks[p.at].Tag; !ok(p, tag) {
			t.Errorf("%q alone: %s tagged %s", p.sentence, p.word, tag)
		}
		if tag := joined[offset+p.at].Tag; !ok(p, tag) {
			t.Errorf("%q after others: %s tagged %s", p.sentence, p.word, tag)
		}
		offset += len(toks)
	}
}

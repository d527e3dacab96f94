package amazon

import (
	"encoding/json"
	"fmt"
	"html"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// pyRepr writes s the way Python 2's repr writes a unicode string, with the
// ampersand HTML-escaped when the field is unescaped on reading.
func pyRepr(s string, htmlField bool) string {
	if htmlField {
		s = strings.ReplaceAll(s, "&", "&amp;")
	}
	var b strings.Builder
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			b.WriteByte('u')
			break
		}
	}
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\' || r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r >= 0x7f && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// pyList writes a list of strings.
func pyList(l []string, htmlField bool) string {
	parts := make([]string, len(l))
	for i, s := range l {
		parts[i] = pyRepr(s, htmlField)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// encodeLiteral writes p as a 2014 meta line.
func encodeLiteral(p *Product) string {
	fields := []string{"'asin': " + pyRepr(p.ASIN, false)}
	add := func(k, v string) { fields = append(fields, "'"+k+"': "+v) }
	if p.Title != "" {
		add("title", pyRepr(p.Title, true))
	}
	if p.Brand != "" {
		add("brand", pyRepr(p.Brand, true))
	}
	if p.MainCat != "" {
		add("main_cat", pyRepr(p.MainCat, true))
	}
	if p.ImURL != "" {
		add("imUrl", pyRepr(p.ImURL, false))
	}
	if p.HasPrice {
		add("price", strconv.FormatFloat(p.Price, 'g', -1, 64))
	}
	if len(p.SalesRank) > 0 {
		var rs []string
		for _, r := range p.SalesRank {
			rs = append(rs, pyRepr(r.Category, true)+": "+strconv.FormatInt(r.Rank, 10))
		}
		add("salesRank", "{"+strings.Join(rs, ", ")+"}")
	}
	if len(p.Categories) > 0 {
		var ps []string
		for _, path := range p.Categories {
			ps = append(ps, pyList(path, true))
		}
		add("categories", "["+strings.Join(ps, ", ")+"]")
	}
	add("related", "{'also_bought': "+pyList(p.AlsoBought, false)+
		", 'also_viewed': "+pyList(p.AlsoViewed, false)+
		", 'bought_together': "+pyList(p.BoughtTogether, false)+"}")
	return "{" + strings.Join(fields, ", ") + "}"
}

// checkMessage asserts what every reject reason must be: one line of
// valid UTF-8.
func checkMessage(t *testing.T, line []byte, err error) {
	msg := err.Error()
	if msg == "" || strings.ContainsAny(msg, "\n\r") || !utf8.ValidString(msg) {
		t.Fatalf("line %q: bad error message %q", line, msg)
	}
}

func productStrings(p *Product) []string {
	all := []string{p.ASIN, p.Title, p.Brand, p.ImURL, p.MainCat}
	all = append(all, p.AlsoBought...)
	all = append(all, p.AlsoViewed...)
	all = append(all, p.BoughtTogether...)
	for _, r := range p.SalesRank {
		all = append(all, r.Category)
	}
	for _, path := range p.Categories {
		all = append(all, path...)
	}
	return all
}

// FuzzParseMeta: the meta line parser never panics, rejects with one-line
// messages, yields valid UTF-8, and what it reads survives being written
// back as a Python 2 literal.
func FuzzParseMeta(f *testing.F) {
	f.Fuzz(func(t *testing.T, line []byte) {
		p, err := parseMetaLine(string(line))
		if err != nil {
			checkMessage(t, line, err)
			return
		}
		for _, s := range productStrings(p) {
			if !utf8.ValidString(s) {
				t.Fatalf("line %q: invalid UTF-8 %q", line, s)
			}
		}
		again := encodeLiteral(p)
		q, err := parseMetaLine(again)
		if err != nil {
			t.Fatalf("line %q\nre-encoded %q\ndoes not parse: %v", line, again, err)
		}
		if g, w := normalized(q), normalized(p); !reflect.DeepEqual(g, w) {
			t.Fatalf("line %q\nre-encoded %q\ngives %#v\nwant %#v", line, again, g, w)
		}
	})
}

// FuzzReadReviewLine: the review line parser never panics, rejects with
// one-line messages, and what it reads survives a trip through
// encoding/json.
func FuzzReadReviewLine(f *testing.F) {
	// Lines cut inside a surrogate pair's escapes: the lookahead for the
	// second half must stop at the end of the line.
	for _, cut := range []string{`\ud83d\`, `\ud83d\u`, `\ud83d\ude0`} {
		f.Add([]byte(`{"asin": "B1", "reviewText": "a ` + cut))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		v, err := parseReviewLine(string(line))
		if err != nil {
			checkMessage(t, line, err)
			return
		}
		for _, s := range []string{v.ASIN, v.ReviewerID, v.ReviewText, v.Summary} {
			if !utf8.ValidString(s) {
				t.Fatalf("line %q: invalid UTF-8 %q", line, s)
			}
		}
		again, err := json.Marshal(map[string]any{
			"asin": v.ASIN, "reviewerID": v.ReviewerID, "reviewText": v.ReviewText,
			"summary": v.Summary, "overall": v.Overall, "unixReviewTime": v.UnixReviewTime,
		})
		if err != nil {
			t.Fatal(err)
		}
		w, err := parseReviewLine(string(again))
		if err != nil || *w != *v {
			t.Fatalf("line %q\nre-encoded %s\ngives %+v, %v\nwant %+v", line, again, w, err, v)
		}
	})
}

// FuzzUnescapeHTML: the in-place fast path agrees with html.UnescapeString.
func FuzzUnescapeHTML(f *testing.F) {
	// Seeds at the edges of the fast path (each was a surviving mutant):
	// names the fast path does not know, starting with a letter at either
	// end of a range (they must go to html.UnescapeString, not stay
	// literal), and numeric entities that run to the end of the text.
	for _, s := range []string{"x &zwj;", "&Alpha;", "&Zeta;", "&#65", "a &#x41", "&#x9F"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var s scanner
		s.arena = append(s.arena, text...)
		sp := s.unescapeHTML(span{0, int32(len(text))})
		if got, want := string(s.arena[sp.off:sp.end]), html.UnescapeString(text); got != want {
			t.Fatalf("%q: got %q, want %q", text, got, want)
		}
	})
}

// TestPyRepr pins the encoder the fuzz targets rely on.
func TestPyRepr(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"plain", `'plain'`},
		{"Levi's", `"Levi's"`},
		{`it's "x"`, `'it\'s "x"'`},
		{"a\\b\n\t\x01", `'a\\b\n\t\x01'`},
		{"café – 😀", `u'caf\xe9 \u2013 \U0001f600'`},
	}
	for _, tt := range tests {
		if got := pyRepr(tt.in, false); got != tt.want {
			t.Errorf("pyRepr(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

package synth

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"
)

// escMode is how a line writes non-ASCII characters. Python 2 wrote byte
// strings (UTF-8) as \xNN per byte and unicode strings as \xNN below U+0100
// and \uNNNN above; real files mix lines of both kinds and raw UTF-8.
type escMode uint8

const (
	escRaw     escMode = iota // raw UTF-8
	escUnicode                // \xNN for U+0080-U+00FF, \uNNNN, \UNNNNNNNN (unicode repr)
	escBytes                  // \xNN for every UTF-8 byte (byte-string repr)
)

// lineEncoder writes one metadata line the way the 2014 files were written:
// Python 2's repr of a dict, keys in arbitrary order.
type lineEncoder struct {
	b    []byte
	r    *rand.Rand
	mode escMode // decided per line
}

// appendPyString appends s as a Python 2 repr string literal (without a u
// prefix): single quotes, or double quotes when s contains ' but no ";
// backslash escapes for \\, the quote, \n, \r, \t, and \xNN for other
// control characters; non-ASCII as mode says. A reader tells \xNN bytes
// from \xNN code points by whether the bytes form valid UTF-8, which is
// unambiguous for the text generated here (no Latin-1 character 0xC2-0xF4
// is followed by one of 0x80-0xBF).
func appendPyString(b []byte, s string, mode escMode) []byte {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	const hex = "0123456789abcdef"
	x := func(b []byte, c byte) []byte { return append(b, '\\', 'x', hex[c>>4], hex[c&15]) }
	b = append(b, quote)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\\':
				b = append(b, '\\', '\\')
			case c == quote:
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = x(b, c)
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			// Invalid UTF-8 never comes from the generator; write U+FFFD.
			b = append(b, "\uFFFD"...)
		case mode == escRaw:
			b = append(b, s[i:i+size]...)
		case mode == escBytes:
			for k := range size {
				b = x(b, s[i+k])
			}
		case r < 0x100:
			b = x(b, byte(r))
		case r < 0x10000:
			b = append(b, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
		default:
			b = append(b, '\\', 'U', '0', '0', hex[r>>20&15], hex[r>>16&15], hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
		}
		i += size
	}
	return append(b, quote)
}

// htmlText writes some characters of a text field as HTML entities, the way
// they appear in the 2014 files; a reader's unescaping restores s. The bogus
// entity "&B;" is left as is (unescaping leaves it too).
func htmlText(r *rand.Rand, s string, p float64) string {
	if !strings.ContainsAny(s, "&\"\u2019\u00e9\u00a0") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "&B;") {
			b.WriteString("&B;")
			i += 3
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		i += size
		var ent string
		switch c {
		case '&':
			ent = "&amp;"
		case '"':
			ent = "&quot;"
		case '\u2019':
			ent = "&#x92;" // cp1252's apostrophe, as real files have it
		case '\u00e9':
			ent = "&eacute;"
		case '\u00a0':
			ent = "&nbsp;"
		}
		if ent != "" && chance(r, p) {
			b.WriteString(ent)
		} else {
			b.WriteRune(c)
		}
	}
	return b.String()
}

func (e *lineEncoder) str(s string) { e.b = appendPyString(e.b, s, e.mode) }

func (e *lineEncoder) text(s string) { e.str(htmlText(e.r, s, 0.5)) }

// seq writes n items between open and close, separated as Python's repr
// separates them.
func (e *lineEncoder) seq(open, close byte, n int, item func(k int)) {
	e.b = append(e.b, open)
	for k := range n {
		if k > 0 {
			e.b = append(e.b, ", "...)
		}
		item(k)
	}
	e.b = append(e.b, close)
}

func (e *lineEncoder) list(xs []string, html bool) {
	e.seq('[', ']', len(xs), func(k int) {
		if html {
			e.text(xs[k])
		} else {
			e.str(xs[k])
		}
	})
}

// pyFloat is Python's repr of a float in the range of prices.
func pyFloat(b []byte, v float64) []byte {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	b = append(b, s...)
	if !strings.ContainsAny(s, ".eE") {
		b = append(b, ".0"...)
	}
	return b
}

// appendMetaLine appends m as one 2014 metadata line with a newline.
func appendMetaLine(b []byte, m *Meta, r *rand.Rand) []byte {
	e := lineEncoder{b: b, r: r, mode: escMode(draw(r, []float64{0.4, 0.3, 0.3}))}
	type field struct {
		key   string
		value func()
	}
	dict := func(fs []field) {
		e.seq('{', '}', len(fs), func(k int) {
			e.str(fs[k].key)
			e.b = append(e.b, ": "...)
			fs[k].value()
		})
	}
	fields := []field{{"asin", func() { e.str(m.ASIN) }}}
	if m.Title != "" {
		fields = append(fields, field{"title", func() { e.text(m.Title) }})
	}
	if m.Brand != "" {
		fields = append(fields, field{"brand", func() { e.text(m.Brand) }})
	}
	if m.HasPrice {
		fields = append(fields, field{"price", func() { e.b = pyFloat(e.b, m.Price) }})
	}
	if m.ImURL != "" {
		fields = append(fields, field{"imUrl", func() { e.str(m.ImURL) }})
	}
	if len(m.SalesRank) > 0 {
		fields = append(fields, field{"salesRank", func() {
			e.seq('{', '}', len(m.SalesRank), func(k int) {
				e.str(m.SalesRank[k].Category)
				e.b = append(e.b, ": "...)
				e.b = strconv.AppendInt(e.b, m.SalesRank[k].Rank, 10)
			})
		}})
	}
	if m.Description != "" {
		fields = append(fields, field{"description", func() { e.str(m.Description) }})
	}
	if len(m.Categories) > 0 {
		fields = append(fields, field{"categories", func() {
			e.seq('[', ']', len(m.Categories), func(k int) { e.list(m.Categories[k], true) })
		}})
	}
	if len(m.AlsoBought)+len(m.AlsoViewed)+len(m.BoughtTogether) > 0 {
		fields = append(fields, field{"related", func() {
			var rel []field
			for _, l := range []struct {
				key string
				xs  []string
			}{{"also_bought", m.AlsoBought}, {"also_viewed", m.AlsoViewed}, {"bought_together", m.BoughtTogether}} {
				if len(l.xs) > 0 {
					rel = append(rel, field{l.key, func() { e.list(l.xs, false) }})
				}
			}
			r.Shuffle(len(rel), func(a, b int) { rel[a], rel[b] = rel[b], rel[a] })
			dict(rel)
		}})
	}
	r.Shuffle(len(fields), func(a, b int) { fields[a], fields[b] = fields[b], fields[a] })
	dict(fields)
	return append(e.b, '\n')
}

// appendJSONString appends s as a JSON string the way Python's json.dumps
// writes it (ensure_ascii): \uNNNN for everything outside printable ASCII,
// surrogate pairs beyond the BMP.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	u4 := func(b []byte, r rune) []byte {
		return append(b, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
	}
	b = append(b, '"')
	for _, c := range s {
		switch {
		case c == '"':
			b = append(b, '\\', '"')
		case c == '\\':
			b = append(b, '\\', '\\')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c >= 0x20 && c < 0x7f:
			b = append(b, byte(c))
		case c < 0x10000:
			b = u4(b, c)
		default:
			c -= 0x10000
			b = u4(b, 0xd800+(c>>10))
			b = u4(b, 0xdc00+(c&0x3ff))
		}
	}
	return append(b, '"')
}

// appendReviewLine appends rv as one strict-JSON review line, with the field
// order of the 2014 files.
func appendReviewLine(b []byte, rv *Review) []byte {
	b = append(b, `{"reviewerID": `...)
	b = appendJSONString(b, rv.ReviewerID)
	b = append(b, `, "asin": `...)
	b = appendJSONString(b, rv.ASIN)
	if rv.ReviewerName != "" {
		b = append(b, `, "reviewerName": `...)
		b = appendJSONString(b, rv.ReviewerName)
	}
	b = append(b, `, "helpful": [`...)
	b = strconv.AppendInt(b, int64(rv.Helpful[0]), 10)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, int64(rv.Helpful[1]), 10)
	b = append(b, `], "reviewText": `...)
	b = appendJSONString(b, rv.ReviewText)
	b = append(b, `, "overall": `...)
	b = pyFloat(b, rv.Overall)
	b = append(b, `, "summary": `...)
	b = appendJSONString(b, rv.Summary)
	b = append(b, `, "unixReviewTime": `...)
	b = strconv.AppendInt(b, rv.UnixReviewTime, 10)
	b = append(b, `, "reviewTime": `...)
	b = appendJSONString(b, rv.ReviewTime)
	return append(b, '}', '\n')
}

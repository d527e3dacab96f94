package amazon

import (
	"bytes"
	"html"
	"unicode/utf8"
)

// unescapeHTML replaces HTML entities in arena[sp] in place. The text may
// move to the end of arena, so sp must be the last span appended.
//
// The result is always that of html.UnescapeString, which maps numeric
// entities in 0x80-0x9F through Windows-1252 as HTML5 prescribes (&#x92; is
// U+2019) and leaves unknown names such as &B; as they are. The common cases
// (numeric entities, &amp; &quot; &lt; &gt; &apos; &nbsp;) are done here
// without allocating; any other name sends the string to html.UnescapeString.
func (s *scanner) unescapeHTML(sp span) span {
	t := s.arena[sp.off:sp.end]
	i := bytes.IndexByte(t, '&')
	if i < 0 {
		return sp
	}
	if n, ok := unescapeInPlace(t, i); ok {
		s.arena = s.arena[:int(sp.off)+n]
		return span{sp.off, sp.off + int32(n)}
	}
	u := html.UnescapeString(string(t))
	s.arena = append(s.arena[:sp.off], u...)
	return span{sp.off, int32(len(s.arena))}
}

// unescapeInPlace rewrites b from its first '&' at i and returns the new
// length; ok is false, with b untouched, when b holds a named entity this
// fast path does not know. Output never outgrows input: every entity handled
// here is at least as long as its UTF-8 encoding.
func unescapeInPlace(b []byte, i int) (n int, ok bool) {
	for j := i; j >= 0; {
		if j+1 < len(b) && isAlnum(b[j+1]) {
			if _, adv := namedEntity(b[j:]); adv == 0 {
				return 0, false
			}
		}
		k := bytes.IndexByte(b[j+1:], '&')
		if k < 0 {
			break
		}
		j += 1 + k
	}
	dst := i
	for src := i; src < len(b); {
		c := b[src]
		if c != '&' {
			b[dst] = c
			dst++
			src++
			continue
		}
		var adv int
		var r rune
		switch {
		case src+1 < len(b) && b[src+1] == '#':
			r, adv = numericEntity(b[src:])
		case src+1 < len(b) && isAlnum(b[src+1]):
			r, adv = namedEntity(b[src:])
			if adv == 0 {
				return 0, false
			}
		}
		if adv == 0 { // a lone '&'
			b[dst] = '&'
			dst++
			src++
			continue
		}
		dst += utf8.EncodeRune(b[dst:], r)
		src += adv
	}
	return dst, true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// cp1252 maps 0x80-0x9F, as numeric entities, to what Windows-1252 meant by
// them (HTML5's table, which html.UnescapeString also uses).
var cp1252 = [32]rune{
	'\u20AC', '\u0081', '\u201A', '\u0192', '\u201E', '\u2026', '\u2020', '\u2021',
	'\u02C6', '\u2030', '\u0160', '\u2039', '\u0152', '\u008D', '\u017D', '\u008F',
	'\u0090', '\u2018', '\u2019', '\u201C', '\u201D', '\u2022', '\u2013', '\u2014',
	'\u02DC', '\u2122', '\u0161', '\u203A', '\u0153', '\u009D', '\u017E', '\u0178',
}

// numericEntity decodes "&#NNN;" or "&#xHH;" (the semicolon optional) at
// the start of s, following html.UnescapeString step for step, overflow
// and odd cases such as "&#x;" included. adv is 0 when the '&' is literal.
func numericEntity(s []byte) (r rune, adv int) {
	if len(s) <= 3 {
		return 0, 0
	}
	i := 2
	hex := s[i] == 'x' || s[i] == 'X'
	if hex {
		i++
	}
	var x rune
	for i < len(s) {
		c := s[i]
		i++
		switch {
		case '0' <= c && c <= '9':
			if hex {
				x = 16*x + rune(c) - '0'
			} else {
				x = 10*x + rune(c) - '0'
			}
			continue
		case hex && 'a' <= c && c <= 'f':
			x = 16*x + rune(c) - 'a' + 10
			continue
		case hex && 'A' <= c && c <= 'F':
			x = 16*x + rune(c) - 'A' + 10
			continue
		}
		if c != ';' {
			i--
		}
		break
	}
	if i <= 3 {
		return 0, 0
	}
	switch {
	case 0x80 <= x && x <= 0x9F:
		x = cp1252[x-0x80]
	case x == 0 || 0xD800 <= x && x <= 0xDFFF || x > utf8.MaxRune:
		x = utf8.RuneError
	}
	return x, i
}

// namedEntity decodes the few names common in Amazon text, when followed
// by ';'. adv is 0 for anything else.
func namedEntity(s []byte) (r rune, adv int) {
	j := 1
	for j < len(s) && isAlnum(s[j]) {
		j++
	}
	if j >= len(s) || s[j] != ';' {
		return 0, 0
	}
	switch string(s[1:j]) {
	case "amp":
		r = '&'
	case "quot":
		r = '"'
	case "lt":
		r = '<'
	case "gt":
		r = '>'
	case "apos":
		r = '\''
	case "nbsp":
		r = '\u00A0'
	default:
		return 0, 0
	}
	return r, j + 1
}

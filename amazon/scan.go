package amazon

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The line grammar is the union of Python 2 dict literals (what `print
// dict` wrote into the 2014 meta files, read back by the official loader with
// eval) and JSON (the 2018 meta and every review file):
//
//	value   = string | number | keyword | list | tuple | dict
//	string  = ["u"|"U"|"b"|"B"] ( "'" chars "'" | '"' chars '"' )
//	escape  = \' \" \\ \/ \n \r \t \b \f \a \v \xHH \uHHHH \UHHHHHHHH
//	number  = ["-"] digits ["." digits*] [("e"|"E") ["+"|"-"] digits] ["L"]
//	keyword = True | False | None | true | false | null
//	list    = "[" [value {"," value} [","]] "]"   (tuple: the same in "(" ")")
//	dict    = "{" [value ":" value {"," value ":" value} [","]] "}"
//
// The two grammars do not conflict: JSON's \/ is not something repr writes,
// and Python keeps unknown escapes literally only where repr never emits them,
// so an escape outside the list above is an error rather than a guess.

// maxDepth bounds nesting so that a hostile line cannot exhaust the stack.
const maxDepth = 256

// span locates decoded text in scanner.arena.
type span struct{ off, end int32 }

// syntaxError is a parse failure at a byte position within the line (counted
// from 0, so Reject.Offset plus the position is the offset in the stream).
type syntaxError struct {
	msg  string
	pos  int
	tail string // after the position: ", expected ..."
}

func (e *syntaxError) Error() string {
	if e.pos < 0 { // about the record, not a place in it
		return e.msg
	}
	return e.msg + " at byte " + strconv.Itoa(e.pos) + e.tail
}

// scanner walks one line. Decoded text of the fields a record keeps is
// appended to arena, so that one string conversion per record serves them all.
type scanner struct {
	b      []byte
	i      int
	depth  int
	arena  []byte
	keybuf []byte
}

func (s *scanner) reset(line []byte) {
	s.b, s.i, s.depth = line, 0, 0
	s.arena = s.arena[:0]
}

func (s *scanner) fail(pos int, format string, args ...any) error {
	return &syntaxError{msg: fmt.Sprintf(format, args...), pos: pos}
}

// unexpected reports the byte at s.i (or the end of the line) where want was
// expected.
func (s *scanner) unexpected(want string) error {
	what := "end of line"
	if s.i < len(s.b) {
		what = showByte(s.b, s.i)
	}
	return &syntaxError{msg: "unexpected " + what, pos: s.i, tail: ", expected " + want}
}

// showByte renders the character at b[i] for an error message on one line.
func showByte(b []byte, i int) string {
	c := b[i]
	if c >= 0x21 && c < 0x7f && c != '`' {
		return "`" + string(c) + "`"
	}
	if c == ' ' {
		return "space"
	}
	if c < utf8.RuneSelf {
		return fmt.Sprintf("byte 0x%02x", c)
	}
	r, _ := utf8.DecodeRune(b[i:])
	if r == utf8.RuneError {
		return fmt.Sprintf("byte 0x%02x", c)
	}
	return strconv.QuoteRuneToASCII(r)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// expect consumes c after optional white space.
func (s *scanner) expect(c byte) error {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return nil
	}
	return s.unexpected("`" + string(c) + "`")
}

// next reports whether the list or dict being read continues: it consumes a
// comma (and a closing bracket right after it, as Python allows) or the
// closing bracket itself.
func (s *scanner) next(closer byte) (more bool, err error) {
	s.ws()
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == closer {
				s.i++
				return false, nil
			}
			return true, nil
		case closer:
			s.i++
			return false, nil
		}
	}
	return false, s.unexpected("`,` or `" + string(closer) + "`")
}

// open consumes an opening bracket; it returns false (and consumes nothing
// more) when the container is empty.
func (s *scanner) open(closer byte) (nonEmpty bool, err error) {
	s.i++
	if s.depth++; s.depth > maxDepth {
		return false, s.fail(s.i-1, "nesting deeper than %d", maxDepth)
	}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == closer {
		s.i++
		return false, nil
	}
	return true, nil
}

// isStringStart reports whether a string (with an optional prefix) starts at
// s.i.
func (s *scanner) isStringStart() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '\'', '"':
		return true
	case 'u', 'U', 'b', 'B':
		return s.i+1 < len(s.b) && (s.b[s.i+1] == '\'' || s.b[s.i+1] == '"')
	}
	return false
}

// isNull consumes None or null if it is next.
func (s *scanner) isNull() bool {
	if s.i+4 <= len(s.b) {
		if w := s.b[s.i : s.i+4]; string(w) == "None" || string(w) == "null" {
			s.i += 4
			return true
		}
	}
	return false
}

// plainEnd returns the index of the first quote q or backslash at or after
// i, or len(b). Short strings (ASINs) are the common case and a byte loop
// beats the call overhead of bytes.IndexByte there; long ones (titles,
// descriptions, review text) go to the vectorised search.
func plainEnd(b []byte, i int, q byte) int {
	stop := min(i+24, len(b))
	for ; i < stop; i++ {
		if c := b[i]; c == q || c == '\\' {
			return i
		}
	}
	if i == len(b) {
		return i
	}
	rest := b[i:]
	j := bytes.IndexByte(rest, q)
	if j < 0 {
		j = len(rest)
	}
	if k := bytes.IndexByte(rest[:j], '\\'); k >= 0 {
		j = k
	}
	return i + j
}

// str decodes the string at s.i and appends it to arena as valid UTF-8.
//
// Python 2 byte strings hold \xNN bytes: when they form valid UTF-8 the
// text was UTF-8, otherwise it is read as Latin-1 (every byte is then a code
// point). In a u-prefixed string \xNN is the code point U+00NN. Invalid
// UTF-8 that came in raw, not through escapes, becomes U+FFFD (one per run).
func (s *scanner) str() (span, error) {
	start := len(s.arena)
	open := s.i
	uni := s.b[s.i] == 'u' || s.b[s.i] == 'U'
	if s.b[s.i] != '\'' && s.b[s.i] != '"' {
		s.i++
	}
	bodyStart := s.i + 1
	end, highX, err := s.decode(bodyStart, uni, open)
	if err != nil {
		return span{}, err
	}
	if !utf8.Valid(s.arena[start:]) {
		if highX {
			s.arena = s.arena[:start]
			s.decode(bodyStart, true, open) // same bytes: cannot fail now
		}
		if !utf8.Valid(s.arena[start:]) {
			fixed := bytes.ToValidUTF8(s.arena[start:], []byte("\uFFFD"))
			s.arena = append(s.arena[:start], fixed...)
		}
	}
	s.i = end
	return span{int32(start), int32(len(s.arena))}, nil
}

// decode appends the body of the string whose opening quote is b[i-1] to
// arena; latin1 makes \xNN a code point. It returns the index after the
// closing quote and whether a \xNN of 0x80 or more was appended as a byte.
func (s *scanner) decode(i int, latin1 bool, open int) (end int, highX bool, err error) {
	b := s.b
	q := b[i-1]
	for {
		j := plainEnd(b, i, q)
		s.arena = append(s.arena, b[i:j]...)
		if j >= len(b) {
			return 0, false, s.fail(open, "unterminated string")
		}
		if b[j] == q {
			return j + 1, highX, nil
		}
		r, n, byteVal, err := s.escape(j, open)
		if err != nil {
			return 0, false, err
		}
		switch {
		case byteVal && !latin1:
			s.arena = append(s.arena, byte(r))
			highX = highX || r >= 0x80
		case r < utf8.RuneSelf:
			s.arena = append(s.arena, byte(r))
		default:
			s.arena = utf8.AppendRune(s.arena, r)
		}
		i = j + n
	}
}

// escape decodes the escape sequence at b[j] (a backslash). byteVal marks
// \xNN, whose meaning depends on the kind of string.
func (s *scanner) escape(j, open int) (r rune, n int, byteVal bool, err error) {
	b := s.b
	if j+1 >= len(b) {
		return 0, 0, false, s.fail(open, "unterminated string")
	}
	switch c := b[j+1]; c {
	case '\'', '"', '\\', '/':
		return rune(c), 2, false, nil
	case 'n':
		return '\n', 2, false, nil
	case 'r':
		return '\r', 2, false, nil
	case 't':
		return '\t', 2, false, nil
	case 'b':
		return '\b', 2, false, nil
	case 'f':
		return '\f', 2, false, nil
	case 'a':
		return '\a', 2, false, nil
	case 'v':
		return '\v', 2, false, nil
	case 'x':
		v, ok := hexDigits(b, j+2, 2)
		if !ok {
			return 0, 0, false, s.badEscape(j, 4)
		}
		return rune(v), 4, true, nil
	case 'u':
		v, ok := hexDigits(b, j+2, 4)
		if !ok {
			return 0, 0, false, s.badEscape(j, 6)
		}
		r := rune(v)
		if utf16.IsSurrogate(r) {
			// JSON, and Python's narrow builds, write astral characters as
			// a pair of \u escapes; a lone half becomes U+FFFD.
			if r < 0xDC00 && j+7 < len(b) && b[j+6] == '\\' && b[j+7] == 'u' {
				if lo, ok := hexDigits(b, j+8, 4); ok {
					if p := utf16.DecodeRune(r, rune(lo)); p != utf8.RuneError {
						return p, 12, false, nil
					}
				}
			}
			return utf8.RuneError, 6, false, nil
		}
		return r, 6, false, nil
	case 'U':
		v, ok := hexDigits(b, j+2, 8)
		if !ok || v > utf8.MaxRune {
			return 0, 0, false, s.badEscape(j, 10)
		}
		r := rune(v)
		if utf16.IsSurrogate(r) {
			r = utf8.RuneError
		}
		return r, 10, false, nil
	}
	return 0, 0, false, s.badEscape(j, 2)
}

func (s *scanner) badEscape(j, n int) error {
	seq := s.b[j:min(j+n, len(s.b))]
	return s.fail(j, "invalid escape %s", showText(seq))
}

// showText renders a short piece of the line for an error message: in
// backquotes when it is printable ASCII, Go-quoted otherwise.
func showText(b []byte) string {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f || c == '`' {
			return strconv.QuoteToASCII(string(b))
		}
	}
	return "`" + string(b) + "`"
}

func hexDigits(b []byte, i, n int) (uint32, bool) {
	if i+n > len(b) {
		return 0, false
	}
	var v uint32
	for _, c := range b[i : i+n] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint32(c)
	}
	return v, true
}

// skipString moves past the string at s.i, checking its escapes.
func (s *scanner) skipString() error {
	open := s.i
	if s.b[s.i] != '\'' && s.b[s.i] != '"' {
		s.i++
	}
	b := s.b
	q := b[s.i]
	i := s.i + 1
	for {
		j := plainEnd(b, i, q)
		if j >= len(b) {
			return s.fail(open, "unterminated string")
		}
		if b[j] == q {
			s.i = j + 1
			return nil
		}
		_, n, _, err := s.escape(j, open)
		if err != nil {
			return err
		}
		i = j + n
	}
}

// key returns a dict key for comparison with field names: a view of the line
// when it has no escapes, else decoded into keybuf. ok is false when the key
// is not a string (Python allows any value); it has then been skipped.
func (s *scanner) key() (k []byte, ok bool, err error) {
	if !s.isStringStart() {
		return nil, false, s.skip()
	}
	b := s.b
	q := b[s.i]
	if q != '\'' && q != '"' {
		save := s.arena
		s.arena = s.keybuf[:0]
		_, err := s.str()
		s.keybuf, s.arena = s.arena, save
		return s.keybuf, true, err
	}
	j := plainEnd(b, s.i+1, q)
	if j < len(b) && b[j] == q {
		k = b[s.i+1 : j]
		s.i = j + 1
		return k, true, nil
	}
	save := s.arena
	s.arena = s.keybuf[:0]
	_, err = s.str()
	s.keybuf, s.arena = s.arena, save
	return s.keybuf, true, err
}

// number scans a number token and reports whether it has a fraction or an
// exponent. A Python 2 long suffix L is consumed but not part of the token.
func (s *scanner) number() (tok []byte, float bool, err error) {
	b := s.b
	start := s.i
	i := s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	d := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == d {
		return nil, false, s.fail(start, "invalid number")
	}
	if i < len(b) && b[i] == '.' {
		float = true
		i++
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		float = true
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		e := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == e {
			return nil, false, s.fail(start, "invalid number")
		}
	}
	tok = b[start:i]
	if !float && i < len(b) && (b[i] == 'L' || b[i] == 'l') {
		i++
	}
	s.i = i
	return tok, float, nil
}

// readFloat reads a number (integer or not) as a float.
func (s *scanner) readFloat() (float64, error) {
	start := s.i
	tok, float, err := s.number()
	if err != nil {
		return 0, err
	}
	if !float {
		if v, ok := atoi(tok); ok && v > -1<<53 && v < 1<<53 {
			return float64(v), nil
		}
	}
	v, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return 0, s.fail(start, "number out of range")
	}
	return v, nil
}

// readInt reads an integer; ok is false for a number with a fraction (a
// float with an integral value, 3.0, is accepted).
func (s *scanner) readInt() (int64, bool, error) {
	start := s.i
	tok, float, err := s.number()
	if err != nil {
		return 0, false, err
	}
	if !float {
		v, ok := atoi(tok)
		if !ok {
			return 0, false, s.fail(start, "integer out of range")
		}
		return v, true, nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil || f != float64(int64(f)) {
		return 0, false, nil
	}
	return int64(f), true, nil
}

// atoi parses an optionally negative run of decimal digits.
func atoi(tok []byte) (int64, bool) {
	neg := tok[0] == '-'
	if neg {
		tok = tok[1:]
	}
	if len(tok) > 18 {
		v, err := strconv.ParseInt(string(tok), 10, 64)
		if neg {
			v = -v
		}
		return v, err == nil
	}
	var v int64
	for _, c := range tok {
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// skip moves past one value of any kind.
func (s *scanner) skip() error {
	if s.i >= len(s.b) {
		return s.unexpected("a value")
	}
	switch c := s.b[s.i]; c {
	case '\'', '"':
		return s.skipString()
	case '{':
		return s.skipDict()
	case '[':
		return s.skipSeq(']')
	case '(':
		return s.skipSeq(')')
	case 'u', 'U', 'b', 'B':
		if s.isStringStart() {
			return s.skipString()
		}
	case 'T', 'F', 'N', 't', 'f', 'n':
		for _, w := range keywords {
			if bytes.HasPrefix(s.b[s.i:], w) {
				s.i += len(w)
				return nil
			}
		}
	default:
		if c == '-' || c >= '0' && c <= '9' {
			_, _, err := s.number()
			return err
		}
	}
	return s.unexpected("a value")
}

var keywords = [][]byte{
	[]byte("True"), []byte("False"), []byte("None"),
	[]byte("true"), []byte("false"), []byte("null"),
}

func (s *scanner) skipSeq(closer byte) error {
	more, err := s.open(closer)
	for err == nil && more {
		s.ws()
		if err = s.skip(); err == nil {
			more, err = s.next(closer)
		}
	}
	s.depth--
	return err
}

func (s *scanner) skipDict() error {
	more, err := s.open('}')
	for err == nil && more {
		s.ws()
		if err = s.skip(); err != nil {
			break
		}
		if err = s.expect(':'); err != nil {
			break
		}
		s.ws()
		if err = s.skip(); err == nil {
			more, err = s.next('}')
		}
	}
	s.depth--
	return err
}

// fielder receives the values of a top-level dict: value is called with s
// positioned at the value (after white space) and must consume it.
type fielder interface {
	value(s *scanner, key []byte) error
}

// record parses the line as one dict, handing each string-keyed value to f.
func (s *scanner) record(f fielder) error {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return s.unexpected("`{`")
	}
	if err := s.dict(f); err != nil {
		return err
	}
	s.ws()
	if s.i < len(s.b) {
		return s.fail(s.i, "trailing garbage")
	}
	return nil
}

// dict parses the dict starting at s.i ('{'), handing each string-keyed
// value to f and skipping values of other keys.
func (s *scanner) dict(f fielder) error {
	more, err := s.open('}')
	for err == nil && more {
		s.ws()
		var k []byte
		var isStr bool
		if k, isStr, err = s.key(); err != nil {
			break
		}
		if err = s.expect(':'); err != nil {
			break
		}
		s.ws()
		if isStr {
			err = f.value(s, k)
		} else {
			err = s.skip()
		}
		if err == nil {
			more, err = s.next('}')
		}
	}
	s.depth--
	return err
}

// text decodes a string value into arena; a null gives an empty span and ok
// false. field names the field in the error when the value is not a string.
func (s *scanner) text(field string) (sp span, ok bool, err error) {
	if s.isStringStart() {
		sp, err = s.str()
		return sp, err == nil, err
	}
	if s.isNull() {
		return span{}, false, nil
	}
	return span{}, false, s.typeError(field, "a string")
}

// typeError reports a value of the wrong kind for a field the record keeps.
func (s *scanner) typeError(field, want string) error {
	if s.i >= len(s.b) {
		return s.unexpected("a value")
	}
	return s.fail(s.i, "field %s: expected %s, found %s", field, want, s.kind())
}

// kind names the value starting at s.i.
func (s *scanner) kind() string {
	switch c := s.b[s.i]; {
	case c == '{':
		return "a dict"
	case c == '[':
		return "a list"
	case c == '(':
		return "a tuple"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	case s.isStringStart():
		return "a string"
	case c == 'T' || c == 'F' || c == 't' || c == 'f':
		return "a boolean"
	}
	return showByte(s.b, s.i)
}

// seq iterates over a list or tuple value, calling elem with s positioned
// at each element. A null is an empty sequence.
func (s *scanner) seq(field string, elem func() error) error {
	if s.i < len(s.b) && (s.b[s.i] == '[' || s.b[s.i] == '(') {
		closer := byte(']')
		if s.b[s.i] == '(' {
			closer = ')'
		}
		more, err := s.open(closer)
		for err == nil && more {
			s.ws()
			if err = elem(); err == nil {
				more, err = s.next(closer)
			}
		}
		s.depth--
		return err
	}
	if s.isNull() {
		return nil
	}
	return s.typeError(field, "a list")
}

// strings appends the decoded elements of a list of strings to dst.
func (s *scanner) strings(field string, dst []span, html bool) ([]span, error) {
	err := s.seq(field, func() error {
		if !s.isStringStart() {
			return s.typeError(field, "a string")
		}
		sp, err := s.str()
		if err != nil {
			return err
		}
		if html {
			sp = s.unescapeHTML(sp)
		}
		dst = append(dst, sp)
		return nil
	})
	return dst, err
}

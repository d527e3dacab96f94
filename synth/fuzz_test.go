package synth

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// pyUnquote is a reference decoder of the Python 2 string literals
// appendPyString writes; bytes says whether \xNN is a byte (byte-string
// repr) or a code point (unicode repr).
func pyUnquote(lit string, bytes bool) (string, error) {
	if len(lit) < 2 || (lit[0] != '\'' && lit[0] != '"') || lit[len(lit)-1] != lit[0] {
		return "", fmt.Errorf("not quoted: %q", lit)
	}
	q, body := lit[0], lit[1:len(lit)-1]
	var out []byte
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == q {
			return "", fmt.Errorf("raw quote at %d", i)
		}
		if c < 0x20 || c == 0x7f {
			return "", fmt.Errorf("raw control byte %#x at %d", c, i)
		}
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+1 >= len(body) {
			return "", fmt.Errorf("dangling backslash")
		}
		i++
		hexRune := func(n int) (rune, error) {
			if i+n >= len(body) {
				return 0, fmt.Errorf("short \\%c escape", body[i])
			}
			v, err := strconv.ParseUint(body[i+1:i+1+n], 16, 32)
			i += n
			return rune(v), err
		}
		switch body[i] {
		case '\\', '\'', '"':
			out = append(out, body[i])
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'x':
			r, err := hexRune(2)
			if err != nil {
				return "", err
			}
			if bytes || r < 0x80 {
				out = append(out, byte(r))
			} else {
				out = utf8.AppendRune(out, r)
			}
		case 'u':
			r, err := hexRune(4)
			if err != nil {
				return "", err
			}
			out = utf8.AppendRune(out, r)
		case 'U':
			r, err := hexRune(8)
			if err != nil {
				return "", err
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", fmt.Errorf("unknown escape \\%c", body[i])
		}
	}
	return string(out), nil
}

// FuzzPyString: every valid UTF-8 string survives appendPyString in each
// escape mode, with Python 2's choice of quotes.
func FuzzPyString(f *testing.F) {
	for _, s := range []string{"", "plain", "Men's", `18" chain`, `Men's 18" chain`, "a\\b", "tab\there\nnew\rline",
		"\x0b\x7f", "Café Crème", "L\u2019Atelier", "Size\u00a0M", "\U0001F600", "&B; &amp;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip()
		}
		wantQuote := byte('\'')
		if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
			wantQuote = '"'
		}
		for _, mode := range []escMode{escRaw, escUnicode, escBytes} {
			lit := string(appendPyString(nil, s, mode))
			if lit[0] != wantQuote {
				t.Fatalf("mode %d: %q quoted with %c", mode, lit, lit[0])
			}
			if mode != escRaw {
				for i := 0; i < len(lit); i++ {
					if lit[i] >= 0x80 {
						t.Fatalf("mode %d: non-ASCII byte in %q", mode, lit)
					}
				}
			}
			got, err := pyUnquote(lit, mode == escBytes)
			if err != nil {
				t.Fatalf("mode %d: %q: %v", mode, lit, err)
			}
			if got != s {
				t.Fatalf("mode %d: %q decodes to %q, want %q", mode, lit, got, s)
			}
		}
	})
}

// FuzzJSONString: appendJSONString writes ASCII-only JSON that decodes to
// the input.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "It's \"great\"", "a\\b\n\t\r\b\f", "\x00\x1f\x7f", "Renée", "Returned it\u2026", "\U0001F600", "&quot;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip()
		}
		b := appendJSONString(nil, s)
		for _, c := range b {
			if c >= 0x80 || c < 0x20 {
				t.Fatalf("%q: byte %#x in output", b, c)
			}
		}
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		if got != s {
			t.Fatalf("%q decodes to %q, want %q", b, got, s)
		}
	})
}

package bow

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The tokeniser follows the rules of prose's word tokeniser, whose output
// the embedded tagger model was used with: split on white space, then peel
// one leading $ ( " [ or one trailing , ) " ] ! ; . ? : ' at a time, split
// before the clitics 'll 's 're 'm and n't, and keep emoticons and
// abbreviations (U.S., Mr.) whole. Its quirks are kept on purpose (a piece
// that starts with a clitic and has more after it, like "'s," in "it's,", is
// dropped), so that a review gets the same tags as through prose itself;
// tokenize_test checks that against prose.NewDocument.

// curlyQuotes maps typographic quotes to the ASCII ones the model knows.
var curlyQuotes = strings.NewReplacer("\u201c", `"`, "\u201d", `"`, "\u2018", "'", "\u2019", "'", "&rsquo;", "'")

// emoticons are tokens kept whole and tagged SYM.
var emoticons = func() map[string]bool {
	m := map[string]bool{}
	for _, e := range strings.Fields(`(-8 (-; (-_-) (._.) (: (= (o: (¬_¬) (ಠ_ಠ) (╯°□°）╯︵┻━┻
		-__- 8-) 8-D 8D :( :(( :((( :() :))) :-) :-)) :-))) :-* :-/ :-X :-] :-o :-p :-x
		:-| :-} :0 :3 :P :] :` + "`( :`) :`-(" + ` :o :o) =( =) =D =| @_@ O.o O_o V_V XDD
		[-: ^___^ o_0 o_O o_o v_v xD xDD ¯\(ツ)/¯`) {
		m[e] = true
	}
	return m
}()

// tokenize appends the tokens of text to dst. Tokens are substrings of text.
func tokenize(dst []string, text string) []string {
	if strings.Contains(text, "\xe2\x80") || strings.Contains(text, "&rsquo;") {
		text = curlyQuotes.Replace(text) // all four quotes start with these two bytes
	}
	start := -1
	for i, r := range text {
		if unicode.IsSpace(r) {
			if start >= 0 {
				dst = splitPiece(dst, text[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		dst = splitPiece(dst, text[start:])
	}
	return dst
}

// splitPiece splits one white-space-free piece into tokens.
func splitPiece(dst []string, tok string) []string {
	var suffixes [8]string // peeled trailing characters, innermost first
	suffs := suffixes[:0]
	last := -1
	for tok != "" {
		n := utf8.RuneCountInString(tok)
		if n == last {
			break // nothing peeled in the previous round
		}
		if isSpecialToken(tok) {
			dst = append(dst, tok)
			break
		}
		last = n
		if len(tok) > 1 && strings.IndexByte(`$("[`, tok[0]) >= 0 {
			dst = append(dst, tok[:1])
			tok = tok[1:]
		} else if i := cliticIndex(tok); i >= 0 {
			if i > 0 {
				dst = append(dst, tok[:i])
			}
			tok = tok[i:]
		} else if len(tok) > 1 && strings.IndexByte(`,)"]!;.?:'`, tok[len(tok)-1]) >= 0 {
			suffs = append(suffs, tok[len(tok)-1:])
			tok = tok[:len(tok)-1]
		} else {
			dst = append(dst, tok)
		}
	}
	for i := len(suffs) - 1; i >= 0; i-- {
		dst = append(dst, suffs[i])
	}
	return dst
}

// cliticIndex is where tok splits before a clitic: the first occurrence of
// 'll, 's, 're or 'm (tried in that order, ASCII case folded), else of n't;
// only when tok is longer than the clitic. -1 if none.
func cliticIndex(tok string) int {
	if strings.IndexByte(tok, '\'') < 0 {
		return -1
	}
	for _, c := range [...]string{"'ll", "'s", "'re", "'m"} {
		if i := indexFold(tok, c); i >= 0 && len(tok) > len(c) {
			return i
		}
	}
	if i := indexFold(tok, "n't"); i >= 0 && len(tok) > 3 {
		return i
	}
	return -1
}

// indexFold is strings.Index with ASCII case folding; pat is lower case.
func indexFold(s, pat string) int {
	for i := 0; i+len(pat) <= len(s); i++ {
		j := 0
		for ; j < len(pat); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != pat[j] {
				break
			}
		}
		if j == len(pat) {
			return i
		}
	}
	return -1
}

// isSpecialToken: emoticons, letter-dot abbreviations (U.S., e.g.) and short
// capitalised abbreviations (Mr., Dr., Jan.).
func isSpecialToken(t string) bool {
	if emoticons[t] {
		return true
	}
	if len(t) >= 4 && len(t)%2 == 0 {
		ok := true
		for i := 0; i < len(t); i += 2 {
			if !isASCIILetter(t[i]) || t[i+1] != '.' {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	if (len(t) == 3 || len(t) == 4) && 'A' <= t[0] && t[0] <= 'Z' && t[len(t)-1] == '.' {
		for i := 1; i < len(t)-1; i++ {
			if t[i] < 'a' || t[i] > 'z' {
				return false
			}
		}
		return true
	}
	return false
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

package bow

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jdkato/prose/v2"
	"github.com/mingrammer/commonregex"
)

// The tagger is the averaged perceptron that prose/v2 ships (a port of
// Honnibal's "fast and accurate" tagger, Penn tags), run on prose's own
// embedded weights with its feature templates, but evaluated differently:
//
//   - prose sums float64 weights in Go map order and breaks ties in map
//     order, so the same review can get different tags in two runs (we saw
//     "Well" tagged NNP in one run and UH in the next). The weights are all
//     multiples of 0.001, so here they are integers in thousandths: sums are
//     exact and order-free, and a tie goes to the class listed first in the
//     model. Wherever prose's argmax is unique, the tags are the same.
//   - everything that depends on one word only (its fixed tag, its
//     suffix/prefix/word features as the current word and as a neighbour) is
//     computed once per distinct word and cached, so tagging a token is a
//     few additions of short integer rows instead of 14 string joins and map
//     look-ups.

const (
	maxClasses = 64 // scores use a uint64 mask of classes touched
	tagStart   = "-START-"
	tagStart2  = "-START2-"
)

// wEntry is one (class, weight in thousandths) of a feature's weight row.
type wEntry struct {
	cls uint8
	w   int32
}

// wordRows are the rows of one normalised word: as i word, i-1 word, i-2
// word, i+1 word, i+2 word (-1 when absent), and "i-1 tag+i word" by tag.
type wordRows struct {
	rows    [5]int32
	tagWord []tagRow
}

// Word and suffix templates, in wordRows.rows and bySuffix order.
var (
	wordTemplates   = [5]string{"i word ", "i-1 word ", "i-2 word ", "i+1 word ", "i+2 word "}
	suffixTemplates = [3]string{"i suffix ", "i-1 suffix ", "i+1 suffix "}
)

// tagRow is a feature row conditioned on the previous tag.
type tagRow struct {
	tag uint8
	row int32
}

// taggerModel is the read-only model, shared by all workers.
type taggerModel struct {
	classes []string         // class index -> Penn tag
	tagIDs  map[string]uint8 // tags used as context: classes, then -START-, -START2-
	tagName []string         // tag id -> tag
	other   uint8            // id of any tag absent from the features (-, -NONE-, -LRB-...)
	start   uint8            // id of -START-
	start2  uint8            // id of -START2-
	fixed   map[string]string

	rowOff  []int32 // row r is entries[rowOff[r]:rowOff[r+1]]
	entries []wEntry

	// The word-dependent rows by template, so that a new word costs three
	// small look-ups instead of ten in the big map.
	byWord   map[string]*wordRows // normalised word
	bySuffix map[string]*[3]int32 // i suffix, i-1 suffix, i+1 suffix; -1 absent
	byPref   [256]int32           // i pref1 by first byte; -1 absent

	// tagPart[p1*nTags+p2] sums bias, "i-1 tag p1", "i-2 tag p2" and
	// "i tag+i-2 tag p1 p2": everything that depends on tags only.
	tagPart []denseRow
	nTags   int

	isNoun, isAdj uint64 // class masks of NN* and JJ*
}

type denseRow struct {
	w    [maxClasses]int32
	mask uint64
}

var (
	modelOnce sync.Once
	modelVal  *taggerModel
	modelErr  error
)

// loadModel decodes prose's embedded perceptron once per process (~0.5 s).
func loadModel() (*taggerModel, error) {
	modelOnce.Do(func() { modelVal, modelErr = decodeModel() })
	return modelVal, modelErr
}

func decodeModel() (*taggerModel, error) {
	var (
		weights map[string]map[string]float64
		fixed   map[string]string
		classes []string
	)
	for _, a := range []struct {
		name string
		v    any
	}{{"classes.gob", &classes}, {"tags.gob", &fixed}, {"weights.gob", &weights}} {
		b, err := prose.Asset("model/AveragedPerceptron/" + a.name)
		if err != nil {
			return nil, fmt.Errorf("bow: prose tagger model %s: %w", a.name, err)
		}
		if err := gob.NewDecoder(bytes.NewReader(b)).Decode(a.v); err != nil {
			return nil, fmt.Errorf("bow: prose tagger model %s: %w", a.name, err)
		}
	}
	if len(classes) > maxClasses {
		return nil, fmt.Errorf("bow: prose tagger model has %d classes, more than %d", len(classes), maxClasses)
	}
	m := &taggerModel{classes: classes, fixed: fixed, tagIDs: map[string]uint8{},
		byWord: map[string]*wordRows{}, bySuffix: map[string]*[3]int32{}}
	for i := range m.byPref {
		m.byPref[i] = -1
	}
	clsIdx := map[string]uint8{}
	for i, c := range classes {
		clsIdx[c] = uint8(i)
		m.tagIDs[c] = uint8(i)
		m.tagName = append(m.tagName, c)
		if strings.HasPrefix(c, "NN") {
			m.isNoun |= 1 << i
		} else if strings.HasPrefix(c, "JJ") {
			m.isAdj |= 1 << i
		}
	}
	for _, t := range []string{tagStart, tagStart2, ""} {
		m.tagIDs[t] = uint8(len(m.tagName))
		m.tagName = append(m.tagName, t)
	}
	m.start, m.start2, m.other = m.tagIDs[tagStart], m.tagIDs[tagStart2], m.tagIDs[""]
	delete(m.tagIDs, "")
	m.nTags = len(m.tagName)

	// Rows in sorted key order so that the layout does not depend on map order.
	keys := slices.Sorted(maps.Keys(weights))
	rowOf := make(map[string]int32, len(keys)) // feature key -> row
	m.rowOff = make([]int32, 0, len(keys)+1)
	for _, k := range keys {
		row := int32(len(m.rowOff))
		m.rowOff = append(m.rowOff, int32(len(m.entries)))
		for ci, c := range classes { // class order, not map order
			w, ok := weights[k][c]
			if !ok {
				continue
			}
			t := math.Round(w * 1000)
			if math.Abs(w*1000-t) > 1e-6 || math.Abs(t) > 1<<30 {
				return nil, fmt.Errorf("bow: prose tagger weight %v of %q is not a multiple of 0.001", w, k)
			}
			m.entries = append(m.entries, wEntry{uint8(ci), int32(t)})
		}
		if len(weights[k]) != int(int32(len(m.entries))-m.rowOff[row]) {
			return nil, fmt.Errorf("bow: prose tagger feature %q has a weight for an unknown class", k)
		}
		rowOf[k] = row
		m.index(k, row)
	}
	m.rowOff = append(m.rowOff, int32(len(m.entries)))

	m.tagPart = make([]denseRow, m.nTags*m.nTags)
	for p1 := 0; p1 < m.nTags; p1++ {
		for p2 := 0; p2 < m.nTags; p2++ {
			d := &m.tagPart[p1*m.nTags+p2]
			a, b := m.tagName[p1], m.tagName[p2]
			for _, k := range []string{"bias", "i-1 tag " + a, "i-2 tag " + b, "i tag+i-2 tag " + a + " " + b} {
				if r, ok := rowOf[k]; ok {
					for _, e := range m.row(r) {
						d.w[e.cls] += e.w
						d.mask |= 1 << e.cls
					}
				}
			}
		}
	}
	return m, nil
}

// index files row under its template's table.
func (m *taggerModel) index(k string, row int32) {
	word := func(w string) *wordRows {
		wr := m.byWord[w]
		if wr == nil {
			wr = &wordRows{rows: [5]int32{-1, -1, -1, -1, -1}}
			m.byWord[w] = wr
		}
		return wr
	}
	if rest, ok := strings.CutPrefix(k, "i-1 tag+i word "); ok {
		tag, w, _ := strings.Cut(rest, " ")
		if id, ok := m.tagIDs[tag]; ok {
			wr := word(w)
			wr.tagWord = append(wr.tagWord, tagRow{id, row})
		}
		return
	}
	for t, p := range wordTemplates {
		if w, ok := strings.CutPrefix(k, p); ok {
			word(w).rows[t] = row
			return
		}
	}
	for t, p := range suffixTemplates {
		if sfx, ok := strings.CutPrefix(k, p); ok {
			sr := m.bySuffix[sfx]
			if sr == nil {
				sr = &[3]int32{-1, -1, -1}
				m.bySuffix[sfx] = sr
			}
			sr[t] = row
			return
		}
	}
	if p, ok := strings.CutPrefix(k, "i pref1 "); ok {
		if r := []rune(p); len(r) == 1 && r[0] < 256 {
			m.byPref[r[0]] = row
		}
	}
}

func (m *taggerModel) row(r int32) []wEntry { return m.entries[m.rowOff[r]:m.rowOff[r+1]] }

// wordFeat is what the tagger needs to know about one distinct token.
type wordFeat struct {
	fixed    int16  // fixed tag id (lexicon or special token), -1 if predicted
	fixedStr string // the fixed tag as prose writes it (for Tag)
	self     span   // i suffix, i pref1, i word
	prev     span   // as i-1 word and i-1 suffix
	prev2    span   // as i-2 word
	next     span   // as i+1 word and i+1 suffix
	next2    span   // as i+2 word
	tagWord  []tagRow
}

// span is a merged row in a worker's arena.
type span struct{ off, n uint32 }

// featArena holds merged rows for one worker.
type featArena struct {
	m       *taggerModel
	entries []wEntry
	dense   [maxClasses]int32
}

// merge sums rows (-1 ignored) into one arena span.
func (a *featArena) merge(rows ...int32) span {
	var mask uint64
	for _, r := range rows {
		if r >= 0 {
			for _, e := range a.m.row(r) {
				if mask&(1<<e.cls) == 0 {
					a.dense[e.cls] = 0
				}
				a.dense[e.cls] += e.w
				mask |= 1 << e.cls
			}
		}
	}
	s := span{off: uint32(len(a.entries))}
	for mm := mask; mm != 0; mm &= mm - 1 {
		c := bits.TrailingZeros64(mm)
		a.entries = append(a.entries, wEntry{uint8(c), a.dense[c]})
	}
	s.n = uint32(len(a.entries)) - s.off
	return s
}

// features computes the per-word part of the tagger's input for token w.
// Pseudo-words (-START-, -END-...) pass pseudo=true: they are used as
// context as they are, not normalised.
func (a *featArena) features(w string, pseudo bool) wordFeat {
	f := wordFeat{fixed: -1}
	norm := w
	if !pseudo {
		norm = normalizeWord(w)
		if t, ok := fixedTag(a.m, w); ok {
			f.fixedStr = t
			if id, ok := a.m.tagIDs[t]; ok {
				f.fixed = int16(id)
			} else {
				f.fixed = int16(a.m.other)
			}
		}
		wr, sr := a.m.byWord[norm], a.m.bySuffix[suffix3(w)]
		f.self = a.merge(suffixRow(sr, 0), a.m.byPref[w[0]], wordRow(wr, 0))
		if wr != nil {
			f.tagWord = wr.tagWord
		}
	}
	wr, sr := a.m.byWord[norm], a.m.bySuffix[suffix3(norm)]
	f.prev = a.merge(wordRow(wr, 1), suffixRow(sr, 1))
	f.prev2 = a.merge(wordRow(wr, 2))
	f.next = a.merge(wordRow(wr, 3), suffixRow(sr, 2))
	f.next2 = a.merge(wordRow(wr, 4))
	return f
}

// wordRow and suffixRow are row t of a word's or suffix's rows, -1 when
// the model has none.
func wordRow(wr *wordRows, t int) int32 {
	if wr == nil {
		return -1
	}
	return wr.rows[t]
}

func suffixRow(sr *[3]int32, t int) int32 {
	if sr == nil {
		return -1
	}
	return sr[t]
}

func suffix3(w string) string {
	if len(w) > 3 {
		return w[len(w)-3:]
	}
	return w
}

// normalizeWord is the tagger's context form of a word: hyphenated words,
// four-digit numbers and words starting with a digit collapse to classes.
func normalizeWord(w string) string {
	if w == "" {
		return w
	}
	if strings.IndexByte(w, '-') >= 0 && w[0] != '-' {
		return "!HYPHEN"
	}
	if len(w) == 4 {
		if _, err := strconv.Atoi(w); err == nil {
			return "!YEAR"
		}
	}
	if '0' <= w[0] && w[0] <= '9' {
		return "!DIGITS"
	}
	return strings.ToLower(w)
}

// fixedTag is the tag prose gives without the perceptron, in prose's order
// of checks.
func fixedTag(m *taggerModel, w string) (string, bool) {
	switch {
	case w == "-":
		return "-", true
	case emoticons[w]:
		return "SYM", true
	case strings.HasPrefix(w, "@"),
		strings.IndexByte(w, '.') >= 0 && commonregex.LinkRegex.MatchString(w),
		strings.IndexByte(w, '@') >= 0 && commonregex.EmailRegex.MatchString(w):
		return "NN", true
	case isTraceToken(w):
		return "-NONE-", true
	case len(w) == 5 && w[0] == '-' && w[4] == '-' && isUpper3(w[1:4]):
		return w, true // treebank bracket tokens like -LRB- tag as themselves
	}
	t, ok := m.fixed[w]
	return t, ok
}

func isUpper3(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// isTraceToken matches treebank empty elements: 0, *, *T*, *-12, *EXP*-1.
func isTraceToken(w string) bool {
	if w == "0" || w == "*" {
		return true
	}
	if len(w) < 2 || w[0] != '*' {
		return false
	}
	if len(w) == 3 && w[2] == '*' {
		c := w[1]
		return isASCIILetter(c) || '0' <= c && c <= '9' || c == '_' || c == '?'
	}
	rest := w[1:]
	if rest[0] != '-' { // *ABC*-n
		i := 0
		for i < len(rest) && 'A' <= rest[i] && rest[i] <= 'Z' {
			i++
		}
		if i == 0 || i+1 >= len(rest) || rest[i] != '*' {
			return false
		}
		rest = rest[i+1:]
	}
	if len(rest) < 2 || len(rest) > 4 || rest[0] != '-' {
		return false
	}
	for i := 1; i < len(rest); i++ {
		if rest[i] < '0' || rest[i] > '9' {
			return false
		}
	}
	return true
}

// tagSeq tags one review: feats[i] are its tokens' features; the result
// goes to tags (class or tag ids). Context words beyond the ends are the
// pseudo-words; the first two previous tags are -START-, -START2-.
func (a *featArena) tagSeq(tags []uint8, feats []*wordFeat, pseudo *[4]wordFeat) (predicted int) {
	m := a.m
	n := len(feats)
	ctx := func(j int) *wordFeat {
		switch {
		case j >= 0 && j < n:
			return feats[j]
		case j == -2:
			return &pseudo[0] // -START-
		case j == -1:
			return &pseudo[1] // -START2-
		case j == n:
			return &pseudo[2] // -END-
		default:
			return &pseudo[3] // -END2-
		}
	}
	p1, p2 := m.start, m.start2
	var sc [maxClasses]int32
	for i := 0; i < n; i++ {
		f := feats[i]
		tag := uint8(0)
		if f.fixed >= 0 {
			tag = uint8(f.fixed)
		} else {
			predicted++
			tp := &m.tagPart[int(p1)*m.nTags+int(p2)]
			sc = tp.w
			mask := tp.mask
			ar := a.entries
			addRow(&sc, &mask, ar[f.self.off:f.self.off+f.self.n])
			for _, tr := range f.tagWord {
				if tr.tag == p1 {
					addRow(&sc, &mask, m.row(tr.row))
					break
				}
			}
			// prose's context: i-1 and i-2 words, -START2- and -START-
			// before the text; i+1 and i+2 words, -END- and -END2- after.
			s := ctx(i - 1).prev
			addRow(&sc, &mask, ar[s.off:s.off+s.n])
			s = ctx(i - 2).prev2
			addRow(&sc, &mask, ar[s.off:s.off+s.n])
			s = ctx(i + 1).next
			addRow(&sc, &mask, ar[s.off:s.off+s.n])
			s = ctx(i + 2).next2
			addRow(&sc, &mask, ar[s.off:s.off+s.n])
			best := int32(math.MinInt32)
			for mm := mask; mm != 0; mm &= mm - 1 {
				c := bits.TrailingZeros64(mm)
				if sc[c] > best {
					best, tag = sc[c], uint8(c)
				}
			}
		}
		tags[i] = tag
		p2, p1 = p1, tag
	}
	return predicted
}

// addRow adds a weight row to the scores and marks its classes as touched
// (prose only compares classes that some present feature has a weight for).
func addRow(sc *[maxClasses]int32, mask *uint64, es []wEntry) {
	for _, e := range es {
		sc[e.cls] += e.w
		*mask |= 1 << e.cls
	}
}

package bow

import (
	"fmt"
	"html"
	"strings"
	"sync"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// An entry is one candidate token of a review: its lexicon word id << 2,
// bit 0 set for an adjective (clear for a noun), bit 1 set when the next
// entry is the noun right after it in the text (an adjective-noun bigram).
const (
	entryAdj   = 1
	entryPair  = 2
	entryShift = 2
	maxWordID  = 1<<(32-entryShift) - 1
)

// lexicon numbers the candidate words (lower case, unstemmed) seen by any
// worker, and their stems. Workers only come here for a word they have not
// seen before, so the lock is rarely taken. Ids depend on scheduling and
// never reach an output: everything is sorted by strings before it leaves.
type lexicon struct {
	mu      sync.Mutex
	ids     map[string]int32
	words   []string // word id -> lower-case word
	stemOf  []int32  // word id -> stem id
	stemIDs map[string]int32
	stems   []string // stem id -> stem
	err     error
}

func newLexicon() *lexicon {
	return &lexicon{ids: map[string]int32{}, stemIDs: map[string]int32{}}
}

func (l *lexicon) id(lower string) int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id, ok := l.ids[lower]; ok {
		return id
	}
	if len(l.words) >= maxWordID {
		l.err = fmt.Errorf("bow: more than %d distinct candidate words", maxWordID)
		return 0
	}
	st := english.Stem(lower, false)
	sid, ok := l.stemIDs[st]
	if !ok {
		sid = int32(len(l.stems))
		l.stemIDs[st] = sid
		l.stems = append(l.stems, st)
	}
	id := int32(len(l.words))
	l.ids[lower] = id
	l.words = append(l.words, lower)
	l.stemOf = append(l.stemOf, sid)
	return id
}

// eligible says whether a lower-cased token may be a candidate term at all:
// snowball's English stop words are dropped, and, added here, tokens without
// a letter (numbers, punctuation, symbols) and contractions of a stop word
// that the tokeniser leaves whole ("i've", "you'd", "they've").
func eligible(lower string) bool {
	if english.IsStopWord(lower) || !strings.ContainsFunc(lower, unicode.IsLetter) {
		return false
	}
	if i := strings.IndexByte(lower, '\''); i > 0 && english.IsStopWord(lower[:i]) {
		return false
	}
	return true
}

// wordInfo is a worker's cached knowledge of one distinct token.
type wordInfo struct {
	feat wordFeat
	elig int8  // 1 candidate word, -1 not, 0 not yet known
	wid  int32 // lexicon id once registered, else -1
}

// Cache bounds per worker: past these the caches are cleared (they are
// pure memos, so results do not change, only the work done).
const (
	maxCachedWords = 1 << 21
	maxMemoDocs    = 1 << 16
	maxMemoText    = 256 // bytes; short reviews repeat ("Great gift!", "Five Stars")
)

// workStats count work done; unlike everything else they depend on how
// docs were spread over workers.
type workStats struct {
	Predicted int64 // tokens whose tag the perceptron computed
	MemoDocs  int64 // docs answered from the per-worker cache of short texts
}

// analyzer turns review texts into candidate entries. One per worker.
type analyzer struct {
	m      *taggerModel
	lex    *lexicon
	arena  featArena
	words  map[string]*wordInfo
	pseudo [4]wordFeat
	memo   map[string][]uint32

	toks  []string
	feats []*wordFeat
	infos []*wordInfo
	tags  []uint8
	work  workStats
}

func newAnalyzer(m *taggerModel, lex *lexicon) *analyzer {
	a := &analyzer{m: m, lex: lex, arena: featArena{m: m}}
	a.reset()
	return a
}

func (a *analyzer) reset() {
	a.arena.entries = a.arena.entries[:0]
	a.words = map[string]*wordInfo{}
	for i, w := range [...]string{tagStart, tagStart2, "-END-", "-END2-"} {
		a.pseudo[i] = a.arena.features(w, true)
	}
}

func (a *analyzer) info(tok string) *wordInfo {
	if wi, ok := a.words[tok]; ok {
		return wi
	}
	tok = strings.Clone(tok) // do not pin the review's text
	wi := &wordInfo{feat: a.arena.features(tok, false), wid: -1}
	a.words[tok] = wi
	return wi
}

// tokens HTML-unescapes, tokenises and tags text, leaving tokens, their
// infos and tag ids in the analyzer's buffers.
func (a *analyzer) tokens(text string) {
	if strings.IndexByte(text, '&') >= 0 {
		text = html.UnescapeString(text)
	}
	if len(a.words) > maxCachedWords {
		a.reset()
	}
	a.toks = tokenize(a.toks[:0], text)
	a.feats, a.infos = a.feats[:0], a.infos[:0]
	for _, t := range a.toks {
		wi := a.info(t)
		a.infos = append(a.infos, wi)
		a.feats = append(a.feats, &wi.feat)
	}
	if cap(a.tags) < len(a.toks) {
		a.tags = make([]uint8, len(a.toks), 2*len(a.toks))
	}
	a.tags = a.tags[:len(a.toks)]
	a.work.Predicted += int64(a.arena.tagSeq(a.tags, a.feats, &a.pseudo))
}

// analyze appends the candidate entries of one review to dst and returns
// them with the review's token count.
func (a *analyzer) analyze(dst []uint32, text string) ([]uint32, int) {
	if len(text) <= maxMemoText {
		if e, ok := a.memo[text]; ok {
			a.work.MemoDocs++
			n := int(e[0])
			return append(dst, e[1:]...), n
		}
	}
	start := len(dst)
	a.tokens(text)
	m := a.m
	prevAdj := false // the previous token is a candidate adjective
	for i, wi := range a.infos {
		cls := uint64(1) << a.tags[i]
		isNoun, isAdj := cls&m.isNoun != 0, cls&m.isAdj != 0
		if !(isNoun || isAdj) || !a.candidate(wi, a.toks[i]) {
			prevAdj = false
			continue
		}
		if isNoun && prevAdj {
			dst[len(dst)-1] |= entryPair
		}
		e := uint32(wi.wid) << entryShift
		if isAdj {
			e |= entryAdj
		}
		dst = append(dst, e)
		prevAdj = isAdj
	}
	if len(text) <= maxMemoText {
		if a.memo == nil || len(a.memo) >= maxMemoDocs {
			a.memo = map[string][]uint32{}
		}
		e := make([]uint32, 0, 1+len(dst)-start)
		e = append(e, uint32(len(a.toks)))
		a.memo[strings.Clone(text)] = append(e, dst[start:]...)
	}
	return dst, len(a.toks)
}

func (a *analyzer) candidate(wi *wordInfo, tok string) bool {
	if wi.elig == 0 {
		wi.elig = -1
		if lower := strings.ToLower(tok); eligible(lower) {
			wi.elig = 1
			wi.wid = a.lex.id(lower)
		}
	}
	return wi.elig > 0
}

// Tag returns the tokens of text and their Penn tags, as the bag-of-words
// pipeline sees them (after HTML unescaping). It loads the tagger model on
// first use. Meant for inspection and tests, not for bulk use.
func Tag(text string) (tokens, tags []string, err error) {
	m, err := loadModel()
	if err != nil {
		return nil, nil, err
	}
	a := newAnalyzer(m, newLexicon())
	a.tokens(text)
	for i, t := range a.toks {
		tokens = append(tokens, t)
		if f := a.infos[i].feat; f.fixed >= 0 {
			tags = append(tags, f.fixedStr)
		} else {
			tags = append(tags, m.tagName[a.tags[i]])
		}
	}
	return tokens, tags, nil
}

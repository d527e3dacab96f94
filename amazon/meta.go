package amazon

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"strconv"
)

// Stats counts what a reader saw. Lines = Records + Rejected + Duplicates.
type Stats struct {
	Lines      int64 // lines read, including rejected and duplicate ones
	Records    int64 // records handed to fn
	Rejected   int64 // malformed lines handed to reject
	Duplicates int64 // exact repeats of an earlier line with the same ASIN, skipped (meta only)
	Bytes      int64 // uncompressed bytes read
}

// Related-list slots in metaRec.lists.
const (
	listAlsoBought = iota
	listAlsoViewed
	listBoughtTogether
	nLists
)

// metaRec is a Product in the making: spans into the scanner's arena.
type metaRec struct {
	asin, title, brand, mainCat, imURL span
	hasASIN                            bool
	imPrio                             int // which image field set imURL; a better one overrides
	price                              float64
	hasPrice                           bool
	ranks                              []rankSpan
	cats                               []span // names of all paths, flattened
	catEnds                            []int  // end of each path in cats
	lists                              [nLists][]span
	images                             []span // scratch for image lists
}

type rankSpan struct {
	cat  span
	rank int64
}

func (r *metaRec) reset() {
	*r = metaRec{
		ranks:   r.ranks[:0],
		cats:    r.cats[:0],
		catEnds: r.catEnds[:0],
		lists:   [nLists][]span{r.lists[0][:0], r.lists[1][:0], r.lists[2][:0]},
		images:  r.images[:0],
	}
}

// Image fields by preference: the 2014 imUrl, then the 2018 lists.
const (
	imNone = iota
	imImage
	imImageURL
	imImageURLHighRes
	imImURL
)

func (r *metaRec) value(s *scanner, key []byte) error {
	var err error
	switch string(key) {
	case "asin":
		var ok bool
		r.asin, ok, err = s.text("asin")
		r.hasASIN = r.hasASIN || ok
	case "title":
		r.title, err = s.htmlText("title")
	case "brand":
		r.brand, err = s.htmlText("brand")
	case "main_cat":
		r.mainCat, err = s.htmlText("main_cat")
	case "price":
		err = r.priceValue(s)
	case "imUrl":
		err = r.image(s, "imUrl", imImURL)
	case "imageURLHighRes":
		err = r.image(s, "imageURLHighRes", imImageURLHighRes)
	case "imageURL":
		err = r.image(s, "imageURL", imImageURL)
	case "image":
		err = r.image(s, "image", imImage)
	case "salesRank":
		err = r.salesRank(s)
	case "rank":
		err = r.rank(s)
	case "categories":
		r.cats, r.catEnds = r.cats[:0], r.catEnds[:0]
		err = s.seq("categories", func() error {
			var err error
			r.cats, err = s.strings("categories", r.cats, true)
			r.catEnds = append(r.catEnds, len(r.cats))
			return err
		})
	case "category": // 2018: one path
		r.cats, r.catEnds = r.cats[:0], r.catEnds[:0]
		r.cats, err = s.strings("category", r.cats, true)
		if len(r.cats) > 0 {
			r.catEnds = append(r.catEnds, len(r.cats))
		}
	case "related":
		err = r.related(s)
	case "also_buy":
		r.lists[listAlsoBought], err = s.strings("also_buy", r.lists[listAlsoBought][:0], false)
	case "also_view":
		r.lists[listAlsoViewed], err = s.strings("also_view", r.lists[listAlsoViewed][:0], false)
	default:
		err = s.skip()
	}
	return err
}

// htmlText reads an HTML-unescaped string field.
func (s *scanner) htmlText(field string) (span, error) {
	sp, ok, err := s.text(field)
	if ok {
		sp = s.unescapeHTML(sp)
	}
	return sp, err
}

func (r *metaRec) priceValue(s *scanner) error {
	r.hasPrice = false
	switch {
	case s.isNull():
		return nil
	case s.isStringStart():
		// 2018: "$12.99", "" or page debris; only a dollar amount counts.
		mark := len(s.arena)
		sp, err := s.str()
		if err != nil {
			return err
		}
		r.price, r.hasPrice = parseDollars(s.arena[sp.off:sp.end])
		s.arena = s.arena[:mark]
		return nil
	case s.i < len(s.b) && (s.b[s.i] == '-' || s.b[s.i] >= '0' && s.b[s.i] <= '9'):
		v, err := s.readFloat()
		r.price, r.hasPrice = v, err == nil
		return err
	}
	return s.typeError("price", "a number")
}

// parseDollars reads "$1,234.56" (the $ and thousands commas optional).
func parseDollars(t []byte) (float64, bool) {
	t = bytes.TrimSpace(t)
	t = bytes.TrimPrefix(t, []byte("$"))
	if len(t) == 0 || t[0] < '0' || t[0] > '9' {
		return 0, false
	}
	if bytes.IndexByte(t, ',') >= 0 {
		t = bytes.ReplaceAll(t, []byte(","), nil)
	}
	for _, c := range t {
		if (c < '0' || c > '9') && c != '.' {
			return 0, false
		}
	}
	v, err := strconv.ParseFloat(string(t), 64)
	return v, err == nil
}

// image keeps the first URL of a field when it beats the one already kept.
func (r *metaRec) image(s *scanner, field string, prio int) error {
	mark := len(s.arena)
	var sp span
	var err error
	if prio == imImURL {
		sp, _, err = s.text(field)
	} else {
		r.images, err = s.strings(field, r.images[:0], false)
		if len(r.images) > 0 {
			sp = r.images[0]
		}
	}
	if err != nil {
		return err
	}
	if sp.end == sp.off || prio < r.imPrio {
		s.arena = s.arena[:mark]
		return nil
	}
	s.arena = s.arena[:sp.end] // drop the other URLs of a list
	r.imURL, r.imPrio = sp, prio
	return nil
}

// salesRank reads the 2014 {category: rank} dict.
func (r *metaRec) salesRank(s *scanner) error {
	r.ranks = r.ranks[:0]
	if s.isNull() {
		return nil
	}
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return s.typeError("salesRank", "a dict")
	}
	more, err := s.open('}')
	for err == nil && more {
		s.ws()
		if !s.isStringStart() {
			return s.typeError("salesRank", "a string key")
		}
		var cat span
		if cat, err = s.str(); err != nil {
			break
		}
		cat = s.unescapeHTML(cat)
		if err = s.expect(':'); err != nil {
			break
		}
		s.ws()
		if s.isNull() {
			s.arena = s.arena[:cat.off]
		} else {
			start := s.i
			if s.i >= len(s.b) || (s.b[s.i] != '-' && (s.b[s.i] < '0' || s.b[s.i] > '9')) {
				return s.typeError("salesRank", "an integer")
			}
			v, ok, err := s.readInt()
			if err != nil {
				return err
			}
			if !ok {
				return s.fail(start, "field salesRank: expected an integer")
			}
			r.ranks = append(r.ranks, rankSpan{cat, v})
		}
		more, err = s.next('}')
	}
	s.depth--
	return err
}

// rank reads the 2018 "rank": a string or a list of strings such as
// "1,234 in Clothing (" or ">#2,893,775 in Toys & Games (See Top 100 in
// Toys & Games)". Strings that do not read as a rank are ignored.
func (r *metaRec) rank(s *scanner) error {
	r.ranks = r.ranks[:0]
	one := func() error {
		if !s.isStringStart() {
			return s.typeError("rank", "a string")
		}
		sp, err := s.str()
		if err != nil {
			return err
		}
		cat, n, ok := parseRankText(s.arena[sp.off:sp.end])
		if !ok {
			s.arena = s.arena[:sp.off]
			return nil
		}
		// Move the category to the span's start so it is the last text
		// in the arena, as unescapeHTML needs.
		end := copy(s.arena[sp.off:], cat)
		s.arena = s.arena[:int(sp.off)+end]
		r.ranks = append(r.ranks, rankSpan{s.unescapeHTML(span{sp.off, int32(len(s.arena))}), n})
		return nil
	}
	if s.isStringStart() {
		return one()
	}
	return s.seq("rank", one)
}

// parseRankText splits "[>][#]N[,NNN] in Category[ (...)]".
func parseRankText(t []byte) (cat []byte, n int64, ok bool) {
	t = bytes.TrimLeft(t, "># \t")
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == ',' && i > 0) {
		if t[i] != ',' {
			n = n*10 + int64(t[i]-'0')
			if n > 1<<53 {
				return nil, 0, false
			}
		}
		i++
	}
	if i == 0 || !bytes.HasPrefix(t[i:], []byte(" in ")) {
		return nil, 0, false
	}
	cat = t[i+4:]
	if k := bytes.IndexByte(cat, '('); k >= 0 {
		cat = cat[:k]
	}
	cat = bytes.TrimSpace(cat)
	if len(cat) == 0 {
		return nil, 0, false
	}
	return cat, n, true
}

// related reads the 2014 {also_bought: [...], ...} dict.
func (r *metaRec) related(s *scanner) error {
	for k := range r.lists {
		r.lists[k] = r.lists[k][:0]
	}
	if s.isNull() {
		return nil
	}
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return s.typeError("related", "a dict")
	}
	return s.dict(relatedLists{r})
}

// relatedLists takes the lists of the related dict that Product keeps.
type relatedLists struct{ r *metaRec }

func (l relatedLists) value(s *scanner, k []byte) error {
	slot := -1
	switch string(k) {
	case "also_bought":
		slot = listAlsoBought
	case "also_viewed":
		slot = listAlsoViewed
	case "bought_together":
		slot = listBoughtTogether
	}
	if slot < 0 {
		return s.skip()
	}
	var err error
	l.r.lists[slot], err = s.strings("related", l.r.lists[slot][:0], false)
	return err
}

// parseMeta parses one line into p. p's slices are reused; its strings
// share one allocation per record, except ASIN, which has its own (it is
// what callers keep longest, as a map key).
func (s *scanner) parseMeta(line []byte, r *metaRec, p *Product) error {
	s.reset(line)
	r.reset()
	if err := s.record(r); err != nil {
		return err
	}
	if !r.hasASIN {
		return errMissingASIN
	}
	if r.asin.off == r.asin.end {
		return errEmptyASIN
	}
	r.fill(s.arena, p)
	return nil
}

func (r *metaRec) fill(arena []byte, p *Product) {
	all := string(arena)
	at := func(sp span) string { return all[sp.off:sp.end] }
	p.ASIN = string(arena[r.asin.off:r.asin.end])
	p.Title = at(r.title)
	p.Brand = at(r.brand)
	p.MainCat = at(r.mainCat)
	p.ImURL = at(r.imURL)
	p.Price, p.HasPrice = r.price, r.hasPrice
	if !r.hasPrice {
		p.Price = 0
	}
	p.SalesRank = p.SalesRank[:0]
	for _, rk := range r.ranks {
		p.SalesRank = append(p.SalesRank, Rank{Category: at(rk.cat), Rank: rk.rank})
	}
	fillList := func(dst []string, l []span) []string {
		dst = dst[:0]
		for _, sp := range l {
			dst = append(dst, at(sp))
		}
		return dst
	}
	p.AlsoBought = fillList(p.AlsoBought, r.lists[listAlsoBought])
	p.AlsoViewed = fillList(p.AlsoViewed, r.lists[listAlsoViewed])
	p.BoughtTogether = fillList(p.BoughtTogether, r.lists[listBoughtTogether])
	// Reuse the inner path slices too: they are the bulk of the small
	// allocations otherwise.
	paths := p.Categories[:0]
	start := 0
	for k, end := range r.catEnds {
		var path []string
		if k < cap(paths) {
			path = paths[:k+1][k]
		}
		paths = append(paths, fillList(path, r.cats[start:end]))
		start = end
	}
	p.Categories = paths
}

// Clone returns a deep copy of p, for keeping a Product that ReadMeta is
// about to reuse.
func (p *Product) Clone() *Product {
	q := *p
	q.SalesRank = append([]Rank(nil), p.SalesRank...)
	q.AlsoBought = append([]string(nil), p.AlsoBought...)
	q.AlsoViewed = append([]string(nil), p.AlsoViewed...)
	q.BoughtTogether = append([]string(nil), p.BoughtTogether...)
	q.Categories = make([][]string, len(p.Categories))
	for i, path := range p.Categories {
		q.Categories[i] = append([]string(nil), path...)
	}
	return &q
}

var (
	errMissingASIN = &syntaxError{msg: "missing asin", pos: -1}
	errEmptyASIN   = &syntaxError{msg: "empty asin", pos: -1}
)

// lineSum identifies a line's content for deduplication. Two CRCs with
// different polynomials (both hardware-accelerated) give 64 bits, so two
// different lines collide with odds of about 2^-64, and unlike hash/maphash
// the result does not depend on a random seed.
type lineSum struct {
	castagnoli, ieee uint32
	n                int64
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func sumLine(b []byte) lineSum {
	return lineSum{crc32.Checksum(b, castagnoli), crc32.ChecksumIEEE(b), int64(len(b))}
}

type firstSeen struct {
	sum  lineSum
	line int64
}

// ReadMeta streams the metadata file at path (2014 Python literals or 2018
// JSON, one record per line, gzip or plain) and calls fn for each record in
// file order.
//
// fn is called on the caller's goroutine, one record at a time (lines are
// parsed ahead on up to GOMAXPROCS goroutines). The *Product and the
// backing arrays of its slices are reused once fn has returned: clone what
// you keep (Product.Clone). Strings can be kept as they are; all strings of
// one record other than ASIN share one allocation, so keeping any keeps
// that record's extracted text (not the whole line) alive. If fn returns
// an error, ReadMeta stops and returns it unchanged.
//
// A line that does not parse, has no asin, or repeats an earlier record's
// ASIN with different content is handed to reject (which may be nil) and
// counted. A line identical to an earlier one with the same ASIN (the 2018
// files repeat whole lines) is skipped and counted as a duplicate. The
// deduplication table costs about 80 bytes per distinct ASIN; everything
// else is bounded by the batches in flight: 2×GOMAXPROCS+2 batches (64 at
// most) of at most 256 KB of lines, about 2 MB in all from GOMAXPROCS 3 on
// whatever the number of cores, and their records (a batch holding a long
// line grows to it, at most MaxLineBytes).
//
// A read failure (a truncated or corrupt gzip stream, an I/O error) stops
// reading and returns an error naming the file and the number of complete
// lines read; corrupt compressed data wraps ErrCorrupt.
//
// Once ctx is done ReadMeta returns ctx.Err() within ctxLines records.
func ReadMeta(ctx context.Context, path string, fn func(*Product) error, reject func(Reject)) (Stats, error) {
	return readMetaWith(ctx, path, "asin", fn, reject, func() func([]byte, *Product) error {
		var (
			sc  scanner
			rec metaRec
		)
		return func(line []byte, p *Product) error { return sc.parseMeta(line, &rec, p) }
	})
}

// metaLine is a metadata line as a worker parsed it.
type metaLine struct {
	p   Product
	sum lineSum
}

// readMetaWith is ReadMeta with newParse making the line parser of each
// worker and key the name of the field Product.ASIN comes from, for
// messages: the deduplication by ASIN and the context checks are the same
// for every release, and done in file order on the caller's goroutine.
func readMetaWith(ctx context.Context, path, key string, fn func(*Product) error, reject func(Reject), newParse func() func([]byte, *Product) error) (Stats, error) {
	seen := map[string]firstSeen{}
	newParser := func() func([]byte, *metaLine) string {
		parse := newParse()
		return func(line []byte, m *metaLine) string {
			if err := parse(line, &m.p); err != nil {
				return err.Error()
			}
			m.sum = sumLine(line)
			return ""
		}
	}
	return readLines(path, reject, newParser, func(m *metaLine, why string, lineNo int64, st *Stats) (string, error) {
		if lineNo%ctxLines == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		if why != "" {
			return why, nil
		}
		p := &m.p
		if first, ok := seen[p.ASIN]; ok {
			if first.sum == m.sum {
				st.Duplicates++
				return "", nil
			}
			return fmt.Sprintf("duplicate %s %q first seen at line %d", key, p.ASIN, first.line), nil
		}
		seen[p.ASIN] = firstSeen{m.sum, lineNo}
		st.Records++
		return "", fn(p)
	})
}

var utf8BOM = []byte("\uFEFF")

// ctxLines is how often ReadMeta looks at its context: a few milliseconds
// of parsing.
const ctxLines = 4096

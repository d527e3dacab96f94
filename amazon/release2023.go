package amazon

import (
	"context"
	"errors"
	"iter"
	"path/filepath"
)

// The 2023 release ("Amazon Reviews 2023", McAuley Lab) is strict JSON per
// line like 2018, but with other field names: items are keyed by
// parent_asin (asin names a variant, and only reviews carry it), the
// category path is one flat list, the brand is "store", and reviews give
// user_id and a timestamp in milliseconds. There is no also_buy or
// also_view; bought_together is kept although the release leaves it null.

// Formats are the accepted values of a job's data.format: "" reads the 2014
// and 2018 releases (told apart line by line, as their grammars do not
// conflict), "2023" the 2023 release. The format is named, not guessed from
// the content, because a 2023 line read as 2018 is still a valid JSON
// object and would only be caught as a flood of "missing asin" rejects.
var Formats = []string{"", Format2023}

// Format2023 is the data.format of the 2023 release.
const Format2023 = "2023"

// ReadMetaFormat is ReadMeta for the release named by format (one of
// Formats).
func ReadMetaFormat(ctx context.Context, format, path string, fn func(*Product) error, reject func(Reject)) (Stats, error) {
	if format == Format2023 {
		return ReadMeta2023(ctx, path, fn, reject)
	}
	return ReadMeta(ctx, path, fn, reject)
}

// ReviewsFormat is Reviews for the release named by format (one of
// Formats).
func ReviewsFormat(format, path string, reject func(Reject), st *Stats) iter.Seq2[Review, error] {
	return ReviewsWith(ReviewOptions{Format: format}, path, reject, st)
}

var (
	errMissingParent = &syntaxError{msg: "missing parent_asin", pos: -1}
	errEmptyParent   = &syntaxError{msg: "empty parent_asin", pos: -1}
)

// meta2023Rec reads a 2023 metadata line into the fields Product shares
// with the older releases.
type meta2023Rec struct{ metaRec }

func (r *meta2023Rec) value(s *scanner, key []byte) error {
	var err error
	switch string(key) {
	case "parent_asin":
		var ok bool
		r.asin, ok, err = s.text("parent_asin")
		r.hasASIN = r.hasASIN || ok
	case "title":
		r.title, err = s.htmlText("title")
	case "store":
		r.brand, err = s.htmlText("store")
	case "main_category":
		r.mainCat, err = s.htmlText("main_category")
	case "price":
		err = r.priceValue(s)
	case "categories": // one path, root first; [] when unknown
		r.cats, r.catEnds = r.cats[:0], r.catEnds[:0]
		r.cats, err = s.strings("categories", r.cats, true)
		if len(r.cats) > 0 {
			r.catEnds = append(r.catEnds, len(r.cats))
		}
	case "bought_together":
		r.lists[listBoughtTogether], err = s.strings("bought_together", r.lists[listBoughtTogether][:0], false)
	default:
		// images (a list of dicts of URLs), videos, details, features,
		// description, ratings: nothing the pipeline uses. An "asin" key
		// is skipped too, so a 2018 line read as 2023 is a "missing
		// parent_asin" reject, not an item keyed by something else.
		err = s.skip()
	}
	return err
}

// parseMeta2023 parses one 2023 line into p, like parseMeta.
func (s *scanner) parseMeta2023(line []byte, r *meta2023Rec, p *Product) error {
	s.reset(line)
	r.reset()
	if err := s.record(r); err != nil {
		return err
	}
	if !r.hasASIN {
		return errMissingParent
	}
	if r.asin.off == r.asin.end {
		return errEmptyParent
	}
	r.fill(s.arena, p)
	return nil
}

// ReadMeta2023 is ReadMeta for the 2023 release's meta_<Category>.jsonl
// (gzip or plain): Product.ASIN is the parent_asin, Brand the store,
// MainCat the main_category, Categories the one path of "categories", and
// AlsoBought and AlsoViewed are empty. ImURL is left empty (the release
// gives lists of image dicts, and no image features to go with them).
// Duplicates are handled as by ReadMeta: an identical line with the same
// parent_asin is skipped and counted, a different one is rejected.
func ReadMeta2023(ctx context.Context, path string, fn func(*Product) error, reject func(Reject)) (Stats, error) {
	return readMetaWith(ctx, path, "parent_asin", fn, reject, func() func([]byte, *Product) error {
		var (
			sc  scanner
			rec meta2023Rec
		)
		return func(line []byte, p *Product) error { return sc.parseMeta2023(line, &rec, p) }
	})
}

// review2023Rec reads a 2023 review line into the fields Review shares
// with the older releases.
type review2023Rec struct{ reviewRec }

func (r *review2023Rec) value(s *scanner, key []byte) error {
	var err error
	switch string(key) {
	case "parent_asin":
		var ok bool
		r.asin, ok, err = s.text("parent_asin")
		r.hasASIN = r.hasASIN || ok
	case "user_id":
		r.reviewer, _, err = s.text("user_id")
	case "text":
		r.text, _, err = s.text("text")
	case "title":
		r.summary, _, err = s.text("title")
	case "rating":
		r.overall = 0
		if !s.isNull() {
			if !s.isNumberStart() {
				return s.typeError("rating", "a number")
			}
			r.overall, err = s.readFloat()
		}
	case "timestamp": // milliseconds since 1970
		r.time, r.hasTime = 0, false
		if !s.isNull() {
			r.hasTime = true
			start := s.i
			if !s.isNumberStart() {
				return s.typeError("timestamp", "an integer")
			}
			var ok bool
			r.time, ok, err = s.readInt()
			if err == nil && !ok {
				err = s.fail(start, "field timestamp: expected an integer")
			}
		}
	default: // asin (the variant), images, helpful_vote, verified_purchase
		err = s.skip()
	}
	return err
}

// isNumberStart reports whether a number starts at s.i.
func (s *scanner) isNumberStart() bool {
	return s.i < len(s.b) && (s.b[s.i] == '-' || s.b[s.i] >= '0' && s.b[s.i] <= '9')
}

// parseReview2023 parses one 2023 review line into v.
func (s *scanner) parseReview2023(line []byte, r *review2023Rec, v *Review, tc *timeCheck, n *timeCounts) error {
	s.reset(line)
	*r = review2023Rec{}
	if err := s.record(r); err != nil {
		return err
	}
	if !r.hasASIN {
		return errMissingParent
	}
	if r.asin.off == r.asin.end {
		return errEmptyParent
	}
	if err := tc.check(&r.reviewRec, n); err != nil {
		return err
	}
	r.fillReview(s.arena, v)
	// Seconds, as the older releases give them, rounded down (also before
	// 1970) so that a review's second does not depend on its sign.
	v.UnixReviewTime = floorDiv(r.time, 1000)
	return nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// Reviews2023 is Reviews for the 2023 release's <Category>.jsonl (gzip or
// plain): Review.ASIN is the parent_asin (the item the metadata keys),
// ReviewerID the user_id, Summary the title, ReviewText the text, Overall
// the rating, and UnixReviewTime the timestamp's milliseconds cut to whole
// seconds. Only parent_asin is required.
func Reviews2023(path string, reject func(Reject), st *Stats) iter.Seq2[Review, error] {
	return ReviewsWith(ReviewOptions{Format: Format2023}, path, reject, st)
}

// reviewLine is a review line as a worker parsed it.
type reviewLine struct {
	v  Review
	tc timeCounts // what the line adds to the unit decision
}

// reviewLoop drives a review iterator with newParse making each worker's
// line parser; tc (nil when off) is the check the parsers apply, whose
// counts, summed in file order, decide once the file is read whether its
// times are in the wrong unit.
func reviewLoop(path string, reject func(Reject), st *Stats, yield func(Review, error) bool, tc *timeCheck,
	newParse func() func([]byte, *Review, *timeCounts) error) {
	var counts timeCounts
	newParser := func() func([]byte, *reviewLine) string {
		parse := newParse()
		return func(line []byte, r *reviewLine) string {
			r.tc = timeCounts{}
			if err := parse(line, &r.v, &r.tc); err != nil {
				return err.Error()
			}
			return ""
		}
	}
	s, err := readLines(path, reject, newParser, func(r *reviewLine, why string, _ int64, st *Stats) (string, error) {
		counts.timed += r.tc.timed
		counts.inOther += r.tc.inOther
		if why != "" {
			return why, nil
		}
		st.Records++
		if !yield(r.v, nil) {
			return "", errStop
		}
		return "", nil
	})
	if err == nil {
		err = tc.unitError(filepath.Base(path), counts)
	}
	if st != nil {
		*st = s
	}
	if err != nil && !errors.Is(err, errStop) {
		yield(Review{}, err)
	}
}

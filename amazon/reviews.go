package amazon

import (
	"errors"
	"iter"
)

// reviewRec is a Review in the making: spans into the scanner's arena.
type reviewRec struct {
	asin, reviewer, text, summary span
	hasASIN, hasTime              bool
	overall                       float64
	time                          int64 // as the file gives it: seconds, or milliseconds in 2023
}

func (r *reviewRec) value(s *scanner, key []byte) error {
	var err error
	switch string(key) {
	case "asin":
		var ok bool
		r.asin, ok, err = s.text("asin")
		r.hasASIN = r.hasASIN || ok
	case "reviewerID":
		r.reviewer, _, err = s.text("reviewerID")
	case "reviewText":
		r.text, _, err = s.text("reviewText")
	case "summary":
		r.summary, _, err = s.text("summary")
	case "overall":
		r.overall = 0
		if !s.isNull() {
			if s.i >= len(s.b) || s.b[s.i] != '-' && (s.b[s.i] < '0' || s.b[s.i] > '9') {
				return s.typeError("overall", "a number")
			}
			r.overall, err = s.readFloat()
		}
	case "unixReviewTime":
		r.time, r.hasTime = 0, false
		if !s.isNull() {
			r.hasTime = true
			start := s.i
			if s.i >= len(s.b) || s.b[s.i] != '-' && (s.b[s.i] < '0' || s.b[s.i] > '9') {
				return s.typeError("unixReviewTime", "an integer")
			}
			var ok bool
			r.time, ok, err = s.readInt()
			if err == nil && !ok {
				err = s.fail(start, "field unixReviewTime: expected an integer")
			}
		}
	default:
		err = s.skip()
	}
	return err
}

// parseReview parses one line into v. ASIN and ReviewerID get their own
// allocations (callers group and key by them); the two texts share one.
// With tc on, a review co_review cannot use is refused (timeCheck.check),
// and n counts what the unit decision needs.
func (s *scanner) parseReview(line []byte, r *reviewRec, v *Review, tc *timeCheck, n *timeCounts) error {
	s.reset(line)
	*r = reviewRec{}
	if err := s.record(r); err != nil {
		return err
	}
	if !r.hasASIN {
		return errMissingASIN
	}
	if r.asin.off == r.asin.end {
		return errEmptyASIN
	}
	if err := tc.check(r, n); err != nil {
		return err
	}
	r.fillReview(s.arena, v)
	v.UnixReviewTime = r.time
	return nil
}

// fillReview sets v's strings and rating from the spans.
func (r *reviewRec) fillReview(a []byte, v *Review) {
	v.ASIN = string(a[r.asin.off:r.asin.end])
	v.ReviewerID = string(a[r.reviewer.off:r.reviewer.end])
	// One conversion covers both texts; only they (and perhaps an id) lie
	// between them in the arena.
	lo, hi := int32(-1), int32(0)
	for _, sp := range [2]span{r.text, r.summary} {
		if sp.end > sp.off {
			if lo < 0 || sp.off < lo {
				lo = sp.off
			}
			hi = max(hi, sp.end)
		}
	}
	both := ""
	if lo >= 0 {
		both = string(a[lo:hi])
	}
	sub := func(sp span) string {
		if sp.end == sp.off {
			return ""
		}
		return both[sp.off-lo : sp.end-lo]
	}
	v.ReviewText, v.Summary = sub(r.text), sub(r.summary)
	v.Overall = r.overall
}

// errStop ends readLines when the loop over Reviews breaks.
var errStop = errors.New("amazon: stop")

// Reviews iterates over the review file at path (JSON lines of the 2014 or
// 2018 release, gzip or plain; the literal grammar of ReadMeta is accepted
// too) in file order. Only asin is required; a missing reviewText, summary,
// overall or unixReviewTime is left empty. Review text is returned as
// written (no HTML unescaping); a review's strings may be kept.
//
// Each step yields a review and a nil error. A read failure (reported as by
// ReadMeta) is yielded once, last, with a zero Review. The loop's body
// runs on the caller's goroutine (lines are parsed ahead on up to
// GOMAXPROCS goroutines, as by ReadMeta). Breaking out of the loop stops
// reading, ends those goroutines and closes the file, so a consumer that
// wants to stop early (on cancellation, say) just breaks. Every loop over
// the iterator opens and reads the file anew.
//
// Malformed lines go to reject (which may be nil) and are counted. If st is
// not nil, it holds the file's stats once a loop has ended.
func Reviews(path string, reject func(Reject), st *Stats) iter.Seq2[Review, error] {
	return ReviewsWith(ReviewOptions{}, path, reject, st)
}

package amazon

import (
	"errors"
	"fmt"
	"iter"
	"time"
)

// ReviewOptions say which release a reviews file is of and what a
// consumer needs of each review beyond its asin.
type ReviewOptions struct {
	// Format is the release, one of Formats.
	Format string
	// UserTime refuses, as rejects, the reviews that cannot relate two
	// items through their reviewer (the co_review graph): one without a
	// reviewer id (absent, null or ""), without a time (absent or null),
	// or with a time outside the release's span (ReviewSpan). A missing
	// time is not 0 then: read as 1970 it would put every such review
	// within any window of every other. When most of the file's times lie
	// outside the span but inside it read in the other unit (seconds for
	// milliseconds or the reverse), the iteration ends with an error
	// wrapping ErrTimeUnit instead.
	UserTime bool
}

// ErrTimeUnit marks a reviews file whose times are evidently in the
// wrong unit for its release (ReviewOptions.UserTime).
var ErrTimeUnit = errors.New("review times in the wrong unit")

// ReviewsWith is Reviews for the release and needs of o.
func ReviewsWith(o ReviewOptions, path string, reject func(Reject), st *Stats) iter.Seq2[Review, error] {
	return func(yield func(Review, error) bool) {
		tc := newTimeCheck(o)
		if o.Format == Format2023 {
			reviewLoop(path, reject, st, yield, tc, func() func([]byte, *Review, *timeCounts) error {
				var (
					sc  scanner
					rec review2023Rec
				)
				return func(line []byte, v *Review, n *timeCounts) error { return sc.parseReview2023(line, &rec, v, tc, n) }
			})
			return
		}
		reviewLoop(path, reject, st, yield, tc, func() func([]byte, *Review, *timeCounts) error {
			var (
				sc  scanner
				rec reviewRec
			)
			return func(line []byte, v *Review, n *timeCounts) error { return sc.parseReview(line, &rec, v, tc, n) }
		})
	}
}

// ReviewSpan is when the reviews of a release can have been written, from
// (inclusive) to (exclusive): from 1995, the year Amazon opened, to the
// end of the year its crawl ended (2014 and 2018 share the older format,
// so "" runs to the end of 2018; the 2023 release to the end of 2023).
func ReviewSpan(format string) (from, to time.Time) {
	from = time.Date(1995, 1, 1, 0, 0, 0, 0, time.UTC)
	if format == Format2023 {
		return from, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return from, time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)
}

// timeCheck applies ReviewOptions.UserTime to parsed records. A nil
// *timeCheck checks nothing. It is not changed by checking, so the
// parsing workers share it; each line's counts go into a timeCounts.
type timeCheck struct {
	userField, timeField string
	unit, otherUnit      string
	lo, hi               int64 // the span in the file's unit
	otherLo, otherHi     int64 // the span in the other unit
	spanText             string
}

// timeCounts is what the unit decision needs.
type timeCounts struct {
	timed   int64 // reviews with a time
	inOther int64 // of them, outside the span but inside it in the other unit
}

func newTimeCheck(o ReviewOptions) *timeCheck {
	if !o.UserTime {
		return nil
	}
	from, to := ReviewSpan(o.Format)
	tc := &timeCheck{userField: "reviewerID", timeField: "unixReviewTime", unit: "seconds", otherUnit: "milliseconds",
		lo: from.Unix(), hi: to.Unix(), otherLo: from.UnixMilli(), otherHi: to.UnixMilli(),
		spanText: from.Format("2006-01-02") + " to " + to.Format("2006-01-02")}
	if o.Format == Format2023 {
		tc.userField, tc.timeField, tc.unit, tc.otherUnit = "user_id", "timestamp", "milliseconds", "seconds"
		tc.lo, tc.hi, tc.otherLo, tc.otherHi = tc.otherLo, tc.otherHi, tc.lo, tc.hi
	}
	return tc
}

// check returns the reason r is unusable to co_review, nil if it is
// usable (or tc is nil).
func (tc *timeCheck) check(r *reviewRec, n *timeCounts) error {
	if tc == nil {
		return nil
	}
	if r.reviewer.off == r.reviewer.end {
		return &syntaxError{msg: "no " + tc.userField + " (co_review relates items through their reviewer)", pos: -1}
	}
	if !r.hasTime {
		return &syntaxError{msg: "no " + tc.timeField + " (co_review needs the review's time)", pos: -1}
	}
	n.timed++
	if r.time >= tc.lo && r.time < tc.hi {
		return nil
	}
	msg := fmt.Sprintf("%s %d outside the release's span, %s, in %s", tc.timeField, r.time, tc.spanText, tc.unit)
	if r.time >= tc.otherLo && r.time < tc.otherHi {
		n.inOther++
		msg += " (in " + tc.otherUnit + "?)"
	}
	return &syntaxError{msg: msg, pos: -1}
}

// unitError is the error of a file most of whose times (counted in n) are
// plausible only in the other unit, nil otherwise (or if tc is nil).
func (tc *timeCheck) unitError(name string, n timeCounts) error {
	if tc == nil || 2*n.inOther <= n.timed {
		return nil
	}
	hint := `a file of the 2014 or 2018 release? leave data.format unset`
	if tc.unit == "seconds" {
		hint = `a file of the 2023 release? set data.format: "2023"`
	}
	return fmt.Errorf("amazon: %s: %w: %d of %d %s values lie in %s only read as %s, but this release gives %s (%s)",
		name, ErrTimeUnit, n.inOther, n.timed, tc.timeField, tc.spanText, tc.otherUnit, tc.unit, hint)
}

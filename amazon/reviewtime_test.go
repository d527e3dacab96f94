package amazon

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestReviewsUserTime: with UserTime, a review without a reviewer or a
// time, or with a time outside the release's span, is a reject with its
// reason (not a review at 1970 or of nobody); without it the same lines
// are reviews, as bag-of-words text needs no time. A file whose times fit
// only in the other unit ends with ErrTimeUnit.
func TestReviewsUserTime(t *testing.T) {
	for _, tc := range []struct {
		name, format string
		lines        []string
		wantKept     []string // asins
		wantRejects  []string
		wantUnit     bool
	}{
		{
			name: "2014", lines: []string{
				`{"asin": "A", "reviewerID": "u1", "unixReviewTime": 1400000000}`,
				`{"asin": "B", "reviewerID": "u1"}`,
				`{"asin": "C", "reviewerID": "", "unixReviewTime": 1400000000}`,
				`{"asin": "D", "unixReviewTime": 1400000000}`,
				`{"asin": "E", "reviewerID": "u2", "unixReviewTime": null}`,
				`{"asin": "F", "reviewerID": "u2", "unixReviewTime": 0}`,
				`{"asin": "G", "reviewerID": "u2", "unixReviewTime": 1400000000000}`,
				`{"asin": "H", "reviewerID": "u2", "unixReviewTime": 1300000000}`,
			},
			wantKept: []string{"A", "H"},
			wantRejects: []string{
				"2: no unixReviewTime (co_review needs the review's time)",
				"3: no reviewerID (co_review relates items through their reviewer)",
				"4: no reviewerID (co_review relates items through their reviewer)",
				"5: no unixReviewTime (co_review needs the review's time)",
				"6: unixReviewTime 0 outside the release's span, 1995-01-01 to 2019-01-01, in seconds",
				"7: unixReviewTime 1400000000000 outside the release's span, 1995-01-01 to 2019-01-01, in seconds (in milliseconds?)",
			},
		},
		{
			name: "2023", format: Format2023, lines: []string{
				`{"parent_asin": "A", "user_id": "u1", "timestamp": 1600000000000}`,
				`{"parent_asin": "B", "user_id": "u1", "timestamp": 1600000000}`,
				`{"parent_asin": "C", "user_id": "u1", "timestamp": 1700000000000}`,
			},
			wantKept: []string{"A", "C"},
			wantRejects: []string{
				"2: timestamp 1600000000 outside the release's span, 1995-01-01 to 2024-01-01, in milliseconds (in seconds?)",
			},
		},
		{
			name: "2023 in seconds", format: Format2023, lines: []string{
				`{"parent_asin": "A", "user_id": "u1", "timestamp": 1600000000}`,
				`{"parent_asin": "B", "user_id": "u1", "timestamp": 1600000001}`,
				`{"parent_asin": "C", "user_id": "u1", "timestamp": 1600000000000}`,
			},
			wantKept: []string{"C"}, wantUnit: true,
		},
		{
			name: "2018 in milliseconds", lines: []string{
				`{"asin": "A", "reviewerID": "u1", "unixReviewTime": 1400000000000}`,
				`{"asin": "B", "reviewerID": "u1", "unixReviewTime": 1400000000000}`,
			},
			wantUnit: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "r.json", []byte(strings.Join(tc.lines, "\n")+"\n"))
			var kept, rejects []string
			var unitErr error
			for r, err := range ReviewsWith(ReviewOptions{Format: tc.format, UserTime: true}, path, func(j Reject) {
				rejects = append(rejects, fmt.Sprintf("%d: %s", j.Line, j.Err))
			}, nil) {
				if err != nil {
					unitErr = err
					continue
				}
				kept = append(kept, r.ASIN)
			}
			if !slices.Equal(kept, tc.wantKept) {
				t.Errorf("kept %q, want %q", kept, tc.wantKept)
			}
			if tc.wantUnit {
				if !errors.Is(unitErr, ErrTimeUnit) || !strings.Contains(unitErr.Error(), "r.json") {
					t.Errorf("err = %v, want ErrTimeUnit naming the file", unitErr)
				}
				return
			}
			if unitErr != nil {
				t.Fatal(unitErr)
			}
			if !slices.Equal(rejects, tc.wantRejects) {
				t.Errorf("rejects\n%q\nwant\n%q", rejects, tc.wantRejects)
			}
			// Text alone needs neither user nor time: every line a review.
			n := 0
			for _, err := range ReviewsFormat(tc.format, path, nil, nil) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n != len(tc.lines) {
				t.Errorf("%d reviews without UserTime, want all %d", n, len(tc.lines))
			}
		})
	}
}

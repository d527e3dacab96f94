package amazon

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func parseReviewLine(line string) (*Review, error) {
	var (
		s scanner
		r reviewRec
		v Review
	)
	if err := s.parseReview([]byte(line), &r, &v, nil, nil); err != nil {
		return nil, err
	}
	return &v, nil
}

func TestParseReview(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Review
	}{
		{
			name: "2014 review",
			line: `{"reviewerID": "A2SUAM1J3GNN3B", "asin": "0000013714", "reviewerName": "J. McDonald", "helpful": [2, 3], "reviewText": "I bought this for my husband who plays the piano.", "overall": 5.0, "summary": "Heavenly Highway Hymns", "unixReviewTime": 1252800000, "reviewTime": "09 13, 2009"}`,
			want: Review{ASIN: "0000013714", ReviewerID: "A2SUAM1J3GNN3B", ReviewText: "I bought this for my husband who plays the piano.",
				Summary: "Heavenly Highway Hymns", Overall: 5, UnixReviewTime: 1252800000},
		},
		{
			name: "2018 review with vote, style and image",
			line: `{"overall": 4.0, "vote": "1,234", "verified": true, "reviewTime": "06 17, 2018", "reviewerID": "A31", "asin": "B004LLIKVU", "style": {"Gift Amount:": " 50"}, "reviewerName": "john", "reviewText": "Another \"great\" gift.\nTwo lines, caf\u00e9 \ud83d\ude00", "summary": "Four Stars", "unixReviewTime": 1529193600, "image": ["https://x/1.jpg"]}`,
			want: Review{ASIN: "B004LLIKVU", ReviewerID: "A31", ReviewText: "Another \"great\" gift.\nTwo lines, café \U0001F600",
				Summary: "Four Stars", Overall: 4, UnixReviewTime: 1529193600},
		},
		{
			name: "missing text and summary",
			line: `{"overall": 5, "reviewerID": "A1", "asin": "B1", "unixReviewTime": 1}`,
			want: Review{ASIN: "B1", ReviewerID: "A1", Overall: 5, UnixReviewTime: 1},
		},
		{
			name: "summary before text, empty text",
			line: `{"asin": "B1", "summary": "s", "reviewText": "", "overall": null}`,
			want: Review{ASIN: "B1", Summary: "s"},
		},
		{
			name: "numbers starting with 0 and 9",
			line: `{"asin": "B1", "overall": 0.5, "unixReviewTime": 9}`,
			want: Review{ASIN: "B1", Overall: 0.5, UnixReviewTime: 9},
		},
		{
			name: "numbers starting with 9 and 0",
			line: `{"asin": "B1", "overall": 9, "unixReviewTime": 0}`,
			want: Review{ASIN: "B1", Overall: 9},
		},
		{
			name: "HTML entities are kept",
			line: `{"asin": "B1", "reviewText": "&#34;quoted&#34; &amp;"}`,
			want: Review{ASIN: "B1", ReviewText: "&#34;quoted&#34; &amp;"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseReviewLine(tt.line)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", *got, tt.want)
			}
		})
	}
}

func TestParseReviewErrors(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"missing asin", `{"reviewerID": "A1", "overall": 5.0}`, "missing asin"},
		{"overall as a string", `{"asin": "B1", "overall": "5"}`, "field overall: expected a number, found a string at byte 26"},
		{"fractional time", `{"asin": "B1", "unixReviewTime": 1.5}`, "field unixReviewTime: expected an integer at byte 33"},
		{"cut short before overall", `{"asin": "B1", "overall": `, "unexpected end of line at byte 26, expected a value"},
		{"cut short before the time", `{"asin": "B1", "unixReviewTime": `, "unexpected end of line at byte 33, expected a value"},
		{"unterminated text", `{"asin": "B1", "reviewText": "abc`, "unterminated string at byte 29"},
		{"bad escape", `{"asin": "B1", "reviewText": "a\qb"}`, "invalid escape `\\q` at byte 31"},
		{"trailing garbage", `{"asin": "B1"},`, "trailing garbage at byte 14"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseReviewLine(tt.line)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v\nwant  %s", err, tt.want)
			}
		})
	}
}

func TestReviews(t *testing.T) {
	lines := []string{
		`{"asin": "B1", "reviewerID": "R1", "reviewText": "good", "overall": 5.0, "unixReviewTime": 10}`,
		`{"reviewerID": "R2", "overall": 1.0}`,
		`{"asin": "B1", "reviewerID": "R2", "summary": "meh", "overall": 3.0, "unixReviewTime": 11}`,
	}
	content := strings.Join(lines, "\n") + "\n"
	path := writeFile(t, "reviews_T.json.gz", gz(t, content))
	var got []Review
	var rejects []Reject
	var st Stats
	for v, err := range Reviews(path, func(r Reject) { rejects = append(rejects, r) }, &st) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	want := []Review{
		{ASIN: "B1", ReviewerID: "R1", ReviewText: "good", Overall: 5, UnixReviewTime: 10},
		{ASIN: "B1", ReviewerID: "R2", Summary: "meh", Overall: 3, UnixReviewTime: 11},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reviews %+v\nwant %+v", got, want)
	}
	wantRej := []Reject{{File: "reviews_T.json.gz", Line: 2, Offset: int64(len(lines[0]) + 1), Err: "missing asin", Excerpt: lines[1]}}
	if !reflect.DeepEqual(rejects, wantRej) {
		t.Errorf("rejects %+v\nwant %+v", rejects, wantRej)
	}
	if want := (Stats{Lines: 3, Records: 2, Rejected: 1, Bytes: int64(len(content))}); st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}

	// Breaking out stops reading there: the stats count what was read.
	for v, err := range Reviews(path, nil, &st) {
		if err != nil || v != want[0] {
			t.Fatalf("first review %+v, %v", v, err)
		}
		break
	}
	if want := (Stats{Lines: 1, Records: 1, Bytes: int64(len(content))}); st != want {
		t.Errorf("stats after break %+v, want %+v", st, want)
	}
}

// A read failure part way comes last, after the reviews before it.
func TestReviewsReadError(t *testing.T) {
	line := `{"asin": "B1", "reviewText": "good"}` + "\n"
	data := gz(t, strings.Repeat(line, 50))
	path := writeFile(t, "reviews_T.json.gz", data[:len(data)-12]) // cut in the gzip trailer
	var n, errs int
	for _, err := range Reviews(path, nil, nil) {
		if err != nil {
			errs++
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("error %v, want one wrapping ErrCorrupt", err)
			}
			continue
		}
		if errs > 0 {
			t.Error("a review after the error")
		}
		n++
	}
	if errs != 1 {
		t.Errorf("%d errors, want 1 (after %d reviews)", errs, n)
	}
}

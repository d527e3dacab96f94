package amazon

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func parseMeta2023Line(line string) (*Product, error) {
	var (
		s scanner
		r meta2023Rec
		p Product
	)
	if err := s.parseMeta2023([]byte(line), &r, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

func parseReview2023Line(line string) (*Review, error) {
	var (
		s scanner
		r review2023Rec
		v Review
	)
	if err := s.parseReview2023([]byte(line), &r, &v, nil, nil); err != nil {
		return nil, err
	}
	return &v, nil
}

// Hand-written 2023 lines, shaped like the release's (field order, nulls,
// nested images and details), with the values the readers must give.
const (
	meta2023Watch = `{"main_category": "AMAZON FASHION", "title": "Men&#39;s Quartz Watch &amp; Strap", "average_rating": 4.3, "rating_number": 212, "features": ["Stainless steel"], "description": [], "price": 24.99, "images": [{"thumb": "https://m.media-amazon.com/t.jpg", "large": "https://m.media-amazon.com/l.jpg", "variant": "MAIN", "hi_res": null}], "videos": [], "store": "Timex", "categories": ["Clothing, Shoes & Jewelry", "Men", "Watches"], "details": {"Department": "mens", "Date First Available": "March 1, 2019"}, "parent_asin": "B07WATCH01", "bought_together": null}`
	meta2023Shoe  = `{"main_category": "AMAZON FASHION", "title": "Running Shoe", "average_rating": 4.0, "rating_number": 9, "features": [], "description": ["Light."], "price": null, "images": [], "videos": [], "store": null, "categories": ["Clothing, Shoes & Jewelry", "Men", "Shoes", "Athletic"], "details": {}, "parent_asin": "B07SHOE001", "bought_together": ["B07WATCH01"]}`
	meta2023NoCat = `{"main_category": "All Beauty", "title": "Soap", "price": "from 3.50", "store": "Acme", "categories": [], "parent_asin": "B0SOAP0001", "bought_together": null}`

	review2023 = `{"rating": 5.0, "title": "Great \"watch\"", "text": "Keeps time.<br />Caf\u00e9", "images": [], "asin": "B07WATCH0V", "parent_asin": "B07WATCH01", "user_id": "AGBFYI2DDIKXC5Y4FARTYDTQBMFQ", "timestamp": 1588687728923, "helpful_vote": 2, "verified_purchase": true}`
)

func TestParseMeta2023(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Product
	}{
		{
			name: "full record",
			line: meta2023Watch,
			want: Product{
				ASIN: "B07WATCH01", Title: "Men's Quartz Watch & Strap", Brand: "Timex", MainCat: "AMAZON FASHION",
				Price: 24.99, HasPrice: true,
				Categories: [][]string{{"Clothing, Shoes & Jewelry", "Men", "Watches"}},
			},
		},
		{
			name: "null price and store, bought_together kept",
			line: meta2023Shoe,
			want: Product{
				ASIN: "B07SHOE001", Title: "Running Shoe", MainCat: "AMAZON FASHION",
				Categories:     [][]string{{"Clothing, Shoes & Jewelry", "Men", "Shoes", "Athletic"}},
				BoughtTogether: []string{"B07WATCH01"},
			},
		},
		{
			name: "no category path, price text that is not a dollar amount",
			line: meta2023NoCat,
			want: Product{ASIN: "B0SOAP0001", Title: "Soap", Brand: "Acme", MainCat: "All Beauty"},
		},
		{
			name: "the 2018 fields are not read",
			line: `{"parent_asin": "P1", "asin": "A1", "category": ["X", "Y"], "also_buy": ["P2"], "brand": "B", "categories": ["Z"]}`,
			want: Product{ASIN: "P1", Categories: [][]string{{"Z"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMeta2023Line(tt.line)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := normalized(got), normalized(&tt.want); !reflect.DeepEqual(g, w) {
				t.Errorf("got  %#v\nwant %#v", g, w)
			}
		})
	}
}

func TestParseReview2023(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Review
	}{
		{
			name: "full record: parent_asin, not the variant's asin; milliseconds cut to seconds",
			line: review2023,
			want: Review{ASIN: "B07WATCH01", ReviewerID: "AGBFYI2DDIKXC5Y4FARTYDTQBMFQ", ReviewText: "Keeps time.<br />Café",
				Summary: `Great "watch"`, Overall: 5, UnixReviewTime: 1588687728},
		},
		{
			name: "only parent_asin",
			line: `{"parent_asin": "P1"}`,
			want: Review{ASIN: "P1"},
		},
		{
			name: "a millisecond before 1970 is the second before",
			line: `{"parent_asin": "P1", "timestamp": -1, "rating": null}`,
			want: Review{ASIN: "P1", UnixReviewTime: -1},
		},
		{
			name: "numbers starting with 0 and 9",
			line: `{"parent_asin": "P1", "rating": 0.5, "timestamp": 9000}`,
			want: Review{ASIN: "P1", Overall: 0.5, UnixReviewTime: 9},
		},
		{
			name: "numbers starting with 9 and 0",
			line: `{"parent_asin": "P1", "rating": 9, "timestamp": 0}`,
			want: Review{ASIN: "P1", Overall: 9},
		},
		{
			name: "the 2018 fields are not read",
			line: `{"parent_asin": "P1", "reviewerID": "A", "unixReviewTime": 5, "overall": 3, "summary": "s", "reviewText": "t"}`,
			want: Review{ASIN: "P1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseReview2023Line(tt.line)
			if err != nil {
				t.Fatal(err)
			}
			if *got != tt.want {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

func TestParse2023Errors(t *testing.T) {
	tests := []struct {
		name, line, want string
		review           bool
	}{
		{"2018 meta line", `{"asin": "B1", "title": "t", "category": ["A"]}`, "missing parent_asin", false},
		{"empty key", `{"parent_asin": "", "title": "t"}`, "empty parent_asin", false},
		{"categories of lists (2014 shape)", `{"parent_asin": "P", "categories": [["A", "B"]]}`, "field categories: expected a string, found a list at byte 36", false},
		{"truncated line", `{"parent_asin": "P", "title": "t`, "unterminated string at byte 30", false},
		{"2018 review line", `{"asin": "B1", "reviewerID": "A", "overall": 5}`, "missing parent_asin", true},
		{"timestamp as text", `{"parent_asin": "P", "timestamp": "1588687728923"}`, "field timestamp: expected an integer, found a string at byte 34", true},
		{"fractional timestamp", `{"parent_asin": "P", "timestamp": 1.5}`, "field timestamp: expected an integer at byte 34", true},
		{"rating as text", `{"parent_asin": "P", "rating": "5"}`, "field rating: expected a number, found a string at byte 31", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.review {
				_, err = parseReview2023Line(tt.line)
			} else {
				_, err = parseMeta2023Line(tt.line)
			}
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// TestReadMeta2023 reads a gzipped file: records in order, an identical
// repeat skipped, a repeat with other content and a bad line rejected with
// file, line and offset.
func TestReadMeta2023(t *testing.T) {
	bad := `{"parent_asin": "B0BAD", "title": "cut`
	other := strings.Replace(meta2023Watch, "Timex", "Casio", 1)
	lines := []string{meta2023Watch, bad, meta2023Shoe, meta2023Watch, other, meta2023NoCat}
	data := strings.Join(lines, "\n") + "\n"
	path := writeFile(t, "meta_Men.jsonl.gz", gz(t, data))
	var got []Product
	var rejects []Reject
	st, err := ReadMeta2023(context.Background(), path, func(p *Product) error {
		got = append(got, *p.Clone())
		return nil
	}, func(r Reject) { rejects = append(rejects, r) })
	if err != nil {
		t.Fatal(err)
	}
	var asins []string
	for _, p := range got {
		asins = append(asins, p.ASIN)
	}
	if want := []string{"B07WATCH01", "B07SHOE001", "B0SOAP0001"}; !reflect.DeepEqual(asins, want) {
		t.Errorf("records %q, want %q", asins, want)
	}
	if got[0].Brand != "Timex" {
		t.Errorf("first record's store %q, want the first line's", got[0].Brand)
	}
	if want := (Stats{Lines: 6, Records: 3, Rejected: 2, Duplicates: 1, Bytes: int64(len(data))}); st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	off := func(i int) int64 { return int64(len(strings.Join(lines[:i], "\n")) + 1) }
	want := []Reject{
		{File: "meta_Men.jsonl.gz", Line: 2, Offset: off(1), Err: "unterminated string at byte 34", Excerpt: bad},
		{File: "meta_Men.jsonl.gz", Line: 5, Offset: off(4), Err: `duplicate parent_asin "B07WATCH01" first seen at line 1`, Excerpt: excerpt([]byte(other))},
	}
	if !reflect.DeepEqual(rejects, want) {
		t.Errorf("rejects\n%+v\nwant\n%+v", rejects, want)
	}
}

// TestReviews2023 reads a plain file through ReviewsFormat: reviews in
// order, a bad line rejected with its place.
func TestReviews2023(t *testing.T) {
	bad := `{"parent_asin": "B07SHOE001", "user_id": "U2", "timestamp": "x"}`
	lines := []string{
		review2023,
		bad,
		`{"rating": 3.0, "title": "", "text": "ok", "asin": "B07SHOE00V", "parent_asin": "B07SHOE001", "user_id": "U2", "timestamp": 1588687729000}`,
	}
	data := strings.Join(lines, "\n") // no final newline
	path := writeFile(t, "Men.jsonl", []byte(data))
	var got []Review
	var rejects []Reject
	var st Stats
	for r, err := range ReviewsFormat(Format2023, path, func(r Reject) { rejects = append(rejects, r) }, &st) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	want := []Review{
		{ASIN: "B07WATCH01", ReviewerID: "AGBFYI2DDIKXC5Y4FARTYDTQBMFQ", ReviewText: "Keeps time.<br />Café", Summary: `Great "watch"`, Overall: 5, UnixReviewTime: 1588687728},
		{ASIN: "B07SHOE001", ReviewerID: "U2", ReviewText: "ok", Overall: 3, UnixReviewTime: 1588687729},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reviews\n%+v\nwant\n%+v", got, want)
	}
	wantRej := []Reject{{File: "Men.jsonl", Line: 2, Offset: int64(len(lines[0]) + 1),
		Err: "field timestamp: expected an integer, found a string at byte 60", Excerpt: bad}}
	if !reflect.DeepEqual(rejects, wantRej) {
		t.Errorf("rejects %+v, want %+v", rejects, wantRej)
	}
	if st.Lines != 3 || st.Records != 2 || st.Rejected != 1 {
		t.Errorf("stats %+v", st)
	}
}

// FuzzParseMeta2023: the 2023 meta parser never panics, rejects with
// one-line messages, yields valid UTF-8, and what it reads survives a trip
// through encoding/json in the 2023 shape.
func FuzzParseMeta2023(f *testing.F) {
	for _, l := range []string{meta2023Watch, meta2023Shoe, meta2023NoCat, `{"parent_asin": "P", "categories": [["A"]]}`} {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		p, err := parseMeta2023Line(string(line))
		if err != nil {
			checkMessage(t, line, err)
			return
		}
		for _, s := range productStrings(p) {
			if !utf8.ValidString(s) {
				t.Fatalf("line %q: invalid UTF-8 %q", line, s)
			}
		}
		if len(p.Categories) > 1 || len(p.AlsoBought)+len(p.AlsoViewed)+len(p.SalesRank) > 0 || p.ImURL != "" {
			t.Fatalf("line %q: fields the 2023 release lacks: %#v", line, p)
		}
		rec := map[string]any{"parent_asin": p.ASIN, "bought_together": p.BoughtTogether,
			"title": htmlEscapeAmp(p.Title), "store": htmlEscapeAmp(p.Brand), "main_category": htmlEscapeAmp(p.MainCat)}
		if p.HasPrice {
			rec["price"] = p.Price
		}
		if len(p.Categories) == 1 {
			var esc []string
			for _, c := range p.Categories[0] {
				esc = append(esc, htmlEscapeAmp(c))
			}
			rec["categories"] = esc
		}
		again, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		q, err := parseMeta2023Line(string(again))
		if err != nil {
			t.Fatalf("line %q\nre-encoded %s\ndoes not parse: %v", line, again, err)
		}
		if g, w := normalized(q), normalized(p); !reflect.DeepEqual(g, w) {
			t.Fatalf("line %q\nre-encoded %s\ngives %#v\nwant %#v", line, again, g, w)
		}
	})
}

// htmlEscapeAmp undoes the one unescaping that matters for a round trip:
// the fields are HTML-unescaped on reading, so a literal "&" must be
// written as "&amp;".
func htmlEscapeAmp(s string) string { return strings.ReplaceAll(s, "&", "&amp;") }

// FuzzReadReview2023Line: the 2023 review parser never panics, rejects with
// one-line messages, and what it reads survives a trip through
// encoding/json in the 2023 shape.
func FuzzReadReview2023Line(f *testing.F) {
	for _, l := range []string{review2023, `{"parent_asin": "P", "timestamp": -1999}`, `{"parent_asin": "P", "timestamp": "1"}`} {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		v, err := parseReview2023Line(string(line))
		if err != nil {
			checkMessage(t, line, err)
			return
		}
		for _, s := range []string{v.ASIN, v.ReviewerID, v.ReviewText, v.Summary} {
			if !utf8.ValidString(s) {
				t.Fatalf("line %q: invalid UTF-8 %q", line, s)
			}
		}
		if v.UnixReviewTime < math.MinInt64/1000 {
			return // the second's first millisecond is below the int64 range
		}
		again, err := json.Marshal(map[string]any{
			"parent_asin": v.ASIN, "user_id": v.ReviewerID, "text": v.ReviewText,
			"title": v.Summary, "rating": v.Overall, "timestamp": v.UnixReviewTime * 1000,
		})
		if err != nil {
			t.Fatal(err)
		}
		w, err := parseReview2023Line(string(again))
		if err != nil || *w != *v {
			t.Fatalf("line %q\nre-encoded %s\ngives %+v, %v\nwant %+v", line, again, w, err, v)
		}
	})
}

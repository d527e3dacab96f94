package amazon

import (
	"reflect"
	"strings"
	"testing"
)

// parseMetaLine parses one line with a fresh scanner.
func parseMetaLine(line string) (*Product, error) {
	var (
		s scanner
		r metaRec
		p Product
	)
	if err := s.parseMeta([]byte(line), &r, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// normalized makes empty and nil slices compare equal.
func normalized(p *Product) *Product {
	q := p.Clone()
	if len(q.SalesRank) == 0 {
		q.SalesRank = nil
	}
	if len(q.AlsoBought) == 0 {
		q.AlsoBought = nil
	}
	if len(q.AlsoViewed) == 0 {
		q.AlsoViewed = nil
	}
	if len(q.BoughtTogether) == 0 {
		q.BoughtTogether = nil
	}
	if len(q.Categories) == 0 {
		q.Categories = nil
	}
	for i, c := range q.Categories {
		if len(c) == 0 {
			q.Categories[i] = nil
		}
	}
	return q
}

func TestParseMeta(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Product
	}{
		{
			name: "2014 record, single quotes",
			line: `{'asin': '0000031852', 'title': 'Girls Ballet Tutu Zebra Hot Pink', 'price': 3.17, 'imUrl': 'http://ecx.images-amazon.com/images/I/51fAmVkTbyL._SY300_.jpg', 'related': {'also_bought': ['B00JHONN1S', 'B002BZX8Z6'], 'also_viewed': ['B002BZX8Z6', 'B00JHONN1S'], 'bought_together': ['B002BZX8Z6']}, 'salesRank': {'Toys & Games': 211836}, 'brand': 'Coxlures', 'categories': [['Sports & Outdoors', 'Other Sports', 'Dance']]}`,
			want: Product{
				ASIN: "0000031852", Title: "Girls Ballet Tutu Zebra Hot Pink", Brand: "Coxlures",
				Price: 3.17, HasPrice: true,
				ImURL:          "http://ecx.images-amazon.com/images/I/51fAmVkTbyL._SY300_.jpg",
				SalesRank:      []Rank{{"Toys & Games", 211836}},
				Categories:     [][]string{{"Sports & Outdoors", "Other Sports", "Dance"}},
				AlsoBought:     []string{"B00JHONN1S", "B002BZX8Z6"},
				AlsoViewed:     []string{"B002BZX8Z6", "B00JHONN1S"},
				BoughtTogether: []string{"B002BZX8Z6"},
			},
		},
		{
			name: "double quotes around an apostrophe, ISBN ending in X",
			line: `{'asin': '043965548X', 'title': "Levi's Men's 505 Regular Fit Jean", 'categories': [['Books'], ["Children's Books", 'Ages 9-12']]}`,
			want: Product{ASIN: "043965548X", Title: "Levi's Men's 505 Regular Fit Jean",
				Categories: [][]string{{"Books"}, {"Children's Books", "Ages 9-12"}}},
		},
		{
			name: "simple escapes",
			line: `{'asin': 'A1', 'title': 'Men\'s "Best" \\ Tee\n\ttab\r end', 'brand': "say \"hi\" \/ \b\f\a\v"}`,
			want: Product{ASIN: "A1", Title: "Men's \"Best\" \\ Tee\n\ttab\r end", Brand: "say \"hi\" / \b\f\a\v"},
		},
		{
			name: `\x bytes forming UTF-8`,
			line: `{'asin': 'A1', 'title': 'Caf\xc3\xa9 \xe2\x80\x99'}`,
			want: Product{ASIN: "A1", Title: "Café \u2019"},
		},
		{
			name: `\x bytes that are not UTF-8 read as Latin-1`,
			line: `{'asin': 'A1', 'title': 'Caf\xe9 na\xefve \x41'}`,
			want: Product{ASIN: "A1", Title: "Café naïve A"},
		},
		{
			name: `u prefix: \x is a code point`,
			line: `{'asin': u'A1', 'title': u'Caf\xc3\xa9 \u2019s \U0001F600'}`,
			want: Product{ASIN: "A1", Title: "CafÃ© \u2019s \U0001F600"},
		},
		{
			name: "b and U prefixes",
			line: `{b'asin': B'A1', 'brand': U"x"}`,
			want: Product{ASIN: "A1", Brand: "x"},
		},
		{
			name: "surrogate pairs and lone surrogates",
			line: `{"asin": "A1", "title": "\ud83d\ude00 \uD83D x \udc00 \U0000d800"}`,
			want: Product{ASIN: "A1", Title: "\U0001F600 \uFFFD x \uFFFD \uFFFD"},
		},
		{
			name: "raw UTF-8 and raw invalid bytes",
			line: "{\"asin\": \"A1\", \"title\": \"na\u00efve \xff!\"}",
			want: Product{ASIN: "A1", Title: "na\u00efve \uFFFD!"},
		},
		{
			name: "HTML entities in title, brand and category names",
			line: `{'asin': 'A1', 'title': 'Men&#x92;s &amp; Women&#146;s &quot;Tees&quot; caf&eacute;&nbsp;&B; AT&T', 'brand': 'Dolce &amp; Gabbana', 'categories': [['Clothing, Shoes &amp; Jewelry', 'Men']], 'salesRank': {'Arts, Crafts &amp; Sewing': 5}}`,
			want: Product{ASIN: "A1",
				Title:      "Men\u2019s & Women\u2019s \"Tees\" café\u00a0&B; AT&T",
				Brand:      "Dolce & Gabbana",
				Categories: [][]string{{"Clothing, Shoes & Jewelry", "Men"}},
				SalesRank:  []Rank{{"Arts, Crafts & Sewing", 5}}},
		},
		{
			name: "ASINs and URLs are not unescaped",
			line: `{'asin': 'A&amp;1', 'imUrl': 'http://x/?a=1&amp;b=2', 'related': {'also_bought': ['B&amp;']}}`,
			want: Product{ASIN: "A&amp;1", ImURL: "http://x/?a=1&amp;b=2", AlsoBought: []string{"B&amp;"}},
		},
		{
			name: "key order, asin last, white space everywhere",
			line: " \t{ 'categories' :[ [ 'A' ] ] ,'brand':'B','asin'  :  'A1' }  \r",
			want: Product{ASIN: "A1", Brand: "B", Categories: [][]string{{"A"}}},
		},
		{
			name: "absent fields",
			line: `{'asin': 'A1'}`,
			want: Product{ASIN: "A1"},
		},
		{
			name: "skipped values of every kind",
			line: `{'description': {'a': [1, -2.5e-3, 1E+16, (3, 4), (), (5,), {'b': None}], 'c': True, 'd': False, 7: 'int key'}, 'x': -12L, 'y': [true, false, null, "z"], 'asin': 'A1', 'buy_after_viewing': ['Q']}`,
			want: Product{ASIN: "A1"},
		},
		{
			name: "trailing commas",
			line: `{'asin': 'A1', 'related': {'also_viewed': ['B1', 'B2',],}, 'categories': [['A', 'B',],],}`,
			want: Product{ASIN: "A1", AlsoViewed: []string{"B1", "B2"}, Categories: [][]string{{"A", "B"}}},
		},
		{
			name: "None and null are absent values",
			line: `{'asin': 'A1', 'title': None, 'price': None, 'related': None, 'salesRank': {'Toys': None}, "brand": null, 'categories': None}`,
			want: Product{ASIN: "A1"},
		},
		{
			name: "integer price and empty containers",
			line: `{'asin': 'A1', 'price': 12, 'salesRank': {}, 'related': {}, 'categories': [[]]}`,
			want: Product{ASIN: "A1", Price: 12, HasPrice: true, Categories: [][]string{nil}},
		},
		{
			name: "a repeated key: the last one wins",
			line: `{'asin': 'A0', 'title': 'a', 'related': {'also_bought': ['X']}, 'title': 'b', 'related': {'also_viewed': ['Y']}, 'asin': 'A1'}`,
			want: Product{ASIN: "A1", Title: "b", AlsoViewed: []string{"Y"}},
		},
		{
			name: "escaped key",
			line: `{'as\x69n': 'A1', u'tit\u006ce': 'T'}`,
			want: Product{ASIN: "A1", Title: "T"},
		},
		{
			name: "2018 JSON record",
			line: `{"category": ["Gift Cards", "Arts &amp; Crafts"], "tech1": "", "description": ["x"], "title": "Wilton \"Gift\"", "also_buy": ["B1", "B2"], "image": ["http://img/1.jpg", "http://img/2.jpg"], "brand": "Wilton", "feature": [], "rank": [">#154,492 in Kitchen &amp; Dining (See Top 100 in Kitchen & Dining)", ">#19 in Gift Cards > Departments", "not a rank"], "also_view": ["B3"], "details": {"\n    Product Dimensions: \n    ": "3.4 x 2.1 inches"}, "main_cat": "Amazon Home", "similar_item": "", "date": "", "price": "$1,029.99", "asin": "B002BSHDJK"}`,
			want: Product{ASIN: "B002BSHDJK", Title: `Wilton "Gift"`, Brand: "Wilton",
				Price: 1029.99, HasPrice: true, ImURL: "http://img/1.jpg",
				SalesRank:  []Rank{{"Kitchen & Dining", 154492}, {"Gift Cards > Departments", 19}},
				Categories: [][]string{{"Gift Cards", "Arts & Crafts"}}, MainCat: "Amazon Home",
				AlsoBought: []string{"B1", "B2"}, AlsoViewed: []string{"B3"}},
		},
		{
			name: "2018 rank as one string, empty price, empty category",
			line: `{"asin": "B1", "rank": "1,234 in Clothing, Shoes & Jewelry (", "price": "", "category": []}`,
			want: Product{ASIN: "B1", SalesRank: []Rank{{"Clothing, Shoes & Jewelry", 1234}}},
		},
		{
			name: "2018 price that is page debris",
			line: `{"asin": "B1", "price": ".a-box-inner{background-color:#fff}"}`,
			want: Product{ASIN: "B1"},
		},
		{
			name: "sales ranks starting with 0, 9 and a minus sign",
			line: `{'asin': 'A1', 'salesRank': {'Toys': 9, 'Books': 0, 'Music': -1, 'Games': 90}}`,
			want: Product{ASIN: "A1", SalesRank: []Rank{{"Toys", 9}, {"Books", 0}, {"Music", -1}, {"Games", 90}}},
		},
		{
			name: "an empty image list keeps no image",
			line: `{"asin": "B1", "image": [], "imageURL": []}`,
			want: Product{ASIN: "B1"},
		},
		{
			name: "image fields by preference whatever their order",
			line: `{"asin": "B1", "image": ["i"], "imageURLHighRes": ["h1", "h2"], "imageURL": ["u"]}`,
			want: Product{ASIN: "B1", ImURL: "h1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMetaLine(tt.line)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if g, w := normalized(got), normalized(&tt.want); !reflect.DeepEqual(g, w) {
				t.Errorf("got  %#v\nwant %#v", g, w)
			}
		})
	}
}

func TestParseMetaErrors(t *testing.T) {
	tests := []struct {
		name string
		line string
		want string
	}{
		{"unterminated string", `{'asin': 'B0001', 'title': 'abc}`, "unterminated string at byte 27"},
		{"backslash at the end", `{'asin': 'B0001', 'title': 'abc\`, "unterminated string at byte 27"},
		{"unknown escape", `{'asin': 'B0001', 'title': 'a\qb'}`, "invalid escape `\\q` at byte 29"},
		{"bad hex in \\x", `{'asin': 'B0001', 'title': 'a\xZ1'}`, "invalid escape `\\xZ1` at byte 29"},
		{"short \\u", `{'asin': 'B0001', 'title': '\u12'}`, "invalid escape `\\u12'}` at byte 28"},
		{"\\U beyond Unicode", `{'asin': 'B0001', 'title': '\U00110000'}`, "invalid escape `\\U00110000` at byte 28"},
		{"bad escape in a skipped field", `{'asin': 'B0001', 'description': 'ok \z'}`, "invalid escape `\\z` at byte 37"},
		{"trailing garbage", `{'asin': 'B0001'} x`, "trailing garbage at byte 18"},
		{"two records on a line", `{'asin': 'B0001'}{'asin': 'B0002'}`, "trailing garbage at byte 17"},
		{"missing colon", `{'asin' 'B0001'}`, "unexpected `'` at byte 8, expected `:`"},
		{"missing comma", `{'asin': 'B0001' 'title': 'x'}`, "unexpected `'` at byte 17, expected `,` or `}`"},
		{"cut short", `{'asin': 'B0001',`, "unexpected end of line at byte 17, expected a value"},
		{"cut short before salesRank's value", `{'asin': 'B0001', 'salesRank': `, "unexpected end of line at byte 31, expected a value"},
		{"cut short before related's value", `{'asin': 'B0001', 'related': `, "unexpected end of line at byte 29, expected a value"},
		{"cut short before a sales rank", `{'asin': 'B0001', 'salesRank': {'Toys': `, "unexpected end of line at byte 40, expected a value"},
		{"not a dict", `['asin', 'B0001']`, "unexpected `[` at byte 0, expected `{`"},
		{"missing asin", `{'title': 'x', 'related': {'also_bought': ['B0001']}}`, "missing asin"},
		{"null asin", `{'asin': None}`, "missing asin"},
		{"empty asin", `{'asin': ''}`, "empty asin"},
		{"asin of the wrong type", `{'asin': 12}`, "field asin: expected a string, found a number at byte 9"},
		{"related not a dict", `{'asin': 'B0001', 'related': ['B0002']}`, "field related: expected a dict, found a list at byte 29"},
		{"category name not a string", `{'asin': 'B0001', 'categories': [['A', 3]]}`, "field categories: expected a string, found a number at byte 39"},
		{"fractional sales rank", `{'asin': 'B0001', 'salesRank': {'Toys': 1.5}}`, "field salesRank: expected an integer at byte 40"},
		{"bad number", `{'asin': 'B0001', 'x': -}`, "invalid number at byte 23"},
		{"bad exponent", `{'asin': 'B0001', 'x': 1e}`, "invalid number at byte 23"},
		{"misspelt keyword", `{'asin': 'B0001', 'x': Tru}`, "unexpected `T` at byte 23, expected a value"},
		{"non-ASCII where a value belongs", `{'asin': 'B0001', 'x': é}`, `unexpected '\u00e9' at byte 23, expected a value`},
		{"control byte", "{'asin': 'B0001', 'x': \x01}", "unexpected byte 0x01 at byte 23, expected a value"},
		{"nesting too deep", `{'asin': 'B0001', 'x': ` + strings.Repeat("[", 300), "nesting deeper than 256 at byte 278"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseMetaLine(tt.line)
			if err == nil {
				t.Fatalf("parsed; want error %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error %q\nwant  %q", err, tt.want)
			}
		})
	}
}

func TestParseDollars(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"$12.99", 12.99, true},
		{" $1,234.50 ", 1234.5, true},
		{"7", 7, true},
		{"", 0, false},
		{"$", 0, false},
		{"$10.99 - $15.99", 0, false},
		{".a-box-inner", 0, false},
		// The digit range at both ends, first character and later ones.
		{"$0.99", 0.99, true},
		{"$9.95", 9.95, true},
		{"$/5", 0, false},
		{"$:5", 0, false},
		{"$1/2", 0, false},
		{"$1:30", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseDollars([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseDollars(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseRankText(t *testing.T) {
	tests := []struct {
		in   string
		cat  string
		rank int64
		ok   bool
	}{
		{"2 in Gift Cards (", "Gift Cards", 2, true},
		{"1,234 in Clothing, Shoes & Jewelry (", "Clothing, Shoes & Jewelry", 1234, true},
		{">#2,893,775 in Toys & Games (See Top 100 in Toys & Games)", "Toys & Games", 2893775, true},
		{">#19 in Gift Cards > Departments > Gift Card Accessories", "Gift Cards > Departments > Gift Card Accessories", 19, true},
		{"#5 in", "", 0, false},
		{"in Toys", "", 0, false},
		{"12 in (", "", 0, false},
		{",5 in Toys", "", 0, false},
		// The digit range at both ends; digits that run to the end.
		{"1,024 in Toys", "Toys", 1024, true},
		{"9 in Books", "Books", 9, true},
		{"12", "", 0, false},
	}
	for _, tt := range tests {
		cat, n, ok := parseRankText([]byte(tt.in))
		if string(cat) != tt.cat || n != tt.rank || ok != tt.ok {
			t.Errorf("parseRankText(%q) = %q, %d, %v; want %q, %d, %v", tt.in, cat, n, ok, tt.cat, tt.rank, tt.ok)
		}
	}
}

// TestParseMetaReuse checks that reusing a Product between records leaves no
// trace of the earlier record, and that strings handed out stay intact.
func TestParseMetaReuse(t *testing.T) {
	var (
		s scanner
		r metaRec
		p Product
	)
	first := `{'asin': 'A1', 'title': 'first', 'price': 2.5, 'imUrl': 'u', 'salesRank': {'T': 1}, 'categories': [['A', 'B'], ['C']], 'related': {'also_bought': ['X', 'Y'], 'also_viewed': ['Z'], 'bought_together': ['W']}}`
	if err := s.parseMeta([]byte(first), &r, &p); err != nil {
		t.Fatal(err)
	}
	kept := p.Clone()
	title, path := p.Title, p.Categories[0][1]
	second := `{'asin': 'A2', 'categories': [['D']]}`
	if err := s.parseMeta([]byte(second), &r, &p); err != nil {
		t.Fatal(err)
	}
	want := Product{ASIN: "A2", Categories: [][]string{{"D"}}}
	if g, w := normalized(&p), normalized(&want); !reflect.DeepEqual(g, w) {
		t.Errorf("second record %#v\nwant %#v", g, w)
	}
	if title != "first" || path != "B" || kept.AlsoBought[1] != "Y" || kept.Categories[1][0] != "C" {
		t.Errorf("kept values changed: %q %q %#v", title, path, kept)
	}
}

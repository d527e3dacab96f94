package amazon

// Product is one metadata record. The 2014 and 2018 releases are mapped onto
// the same fields: 2018's also_buy/also_view/category fill AlsoBought,
// AlsoViewed and a one-path Categories.
type Product struct {
	ASIN  string
	Title string // HTML-unescaped
	Brand string // HTML-unescaped
	// Price in dollars; HasPrice is false when the field is absent or
	// unparsable (2018 gives "" or "$x.xx" strings).
	Price    float64
	HasPrice bool
	ImURL    string
	// SalesRank holds category -> rank (2014 dict; 2018 "rank" strings are
	// parsed where they read "#N in Category").
	SalesRank []Rank
	// Categories is a list of paths, each a list of names from the root,
	// HTML-unescaped ("&amp;" becomes "&").
	Categories     [][]string
	MainCat        string // 2018 only
	AlsoBought     []string
	AlsoViewed     []string
	BoughtTogether []string
}

// Rank is one sales-rank entry.
type Rank struct {
	Category string
	Rank     int64
}

// Review is one review record (2014 and 2018 share the fields used here).
// Absent text fields are empty; absent numbers are 0.
type Review struct {
	ASIN           string
	ReviewerID     string
	ReviewText     string
	Summary        string
	Overall        float64
	UnixReviewTime int64
}

// Reject is a malformed input line: where it is and why it was refused.
type Reject struct {
	File   string // base name of the file
	Line   int64  // 1-based line number
	Offset int64  // byte offset of the line's start in the uncompressed stream
	// Err is the one-line reason, e.g. "unterminated string at byte 77".
	// "at byte N" counts from 0 at the line's start, so Offset+N is the
	// position in the uncompressed stream.
	Err string
	// Excerpt is the line's first 200 bytes (cut back to a character
	// boundary), invalid UTF-8 replaced by U+FFFD.
	Excerpt string
	// ID is the id of the rejected row's item where a reader knows it (a
	// catalogue table's id, or a pair's src), and Detail what varies
	// within the reason, where Err is a fixed string to group rejects by
	// (the catalogue's); the releases' readers leave both "", their Err
	// holding all.
	ID, Detail string
}

// Why is the reject's reason with its detail, as a message gives it.
func (r Reject) Why() string {
	if r.Detail == "" {
		return r.Err
	}
	return r.Err + ": " + r.Detail
}

package amazon

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// realData is the folder of real 2018 samples beside the repository; see
// its README for where the files come from.
const realData = "../../shared/realdata"

func realFile(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(realData, name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("real 2018 samples not available (%v); they live in ../shared/realdata beside the repository", err)
	}
	return path
}

func TestRealMeta(t *testing.T) {
	tests := []struct {
		file  string
		stats Stats
		spots []Product // compared field by field where set
	}{
		{
			file:  "meta_Magazine_Subscriptions.json.gz",
			stats: Stats{Lines: 3385, Records: 2320, Duplicates: 1065, Bytes: 5746237},
			spots: []Product{
				{
					ASIN: "B00005N7NQ", Title: `<span class="a-size-medium a-color-secondary"`, Brand: "Reason Magazine",
					MainCat:    "Magazine Subscriptions",
					Categories: [][]string{{"Magazine Subscriptions", "Professional & Educational Journals", "Professional & Trade", "Humanities & Social Sciences", "Economics & Economic Theory"}},
				},
				{
					ASIN: "B00005N7OC", SalesRank: []Rank{{"Magazine Subscriptions", 742}},
					Categories: [][]string{{"Magazine Subscriptions", "Arts, Music & Photography", "Music"}},
				},
				{
					ASIN: "B000066B5M", Title: "Disney & Me", SalesRank: []Rank{{"Magazine Subscriptions", 3428}},
					Categories: [][]string{{"Magazine Subscriptions", "Travel, City & Regional", "United States", "South"}},
				},
			},
		},
		{
			file:  "meta_Gift_Cards.json.gz",
			stats: Stats{Lines: 1547, Records: 1547, Bytes: 2545166},
			spots: []Product{
				{
					ASIN: "B002BSHDJK", Title: "Wilton Reception Gift Card Holder, White", Brand: "Wilton",
					Price: 29.99, HasPrice: true, MainCat: "Amazon Home",
					SalesRank:  []Rank{{"Kitchen & Dining", 154492}, {"Gift Cards > Departments > Gift Card Accessories", 19}},
					Categories: [][]string{{"Gift Cards", "Gift Card Accessories"}},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := realFile(t, tt.file)
			got := map[string]*Product{}
			st, err := ReadMeta(context.Background(), path, func(p *Product) error {
				got[p.ASIN] = p.Clone()
				return nil
			}, func(r Reject) { t.Errorf("reject %+v", r) })
			if err != nil {
				t.Fatal(err)
			}
			if st != tt.stats {
				t.Errorf("stats %+v, want %+v", st, tt.stats)
			}
			if len(got) != int(tt.stats.Records) {
				t.Errorf("%d distinct ASINs, want %d", len(got), tt.stats.Records)
			}
			for _, w := range tt.spots {
				g := got[w.ASIN]
				if g == nil {
					t.Errorf("%s missing", w.ASIN)
					continue
				}
				check := func(field string, gv, wv any, set bool) {
					if set && !reflect.DeepEqual(gv, wv) {
						t.Errorf("%s %s = %#v, want %#v", w.ASIN, field, gv, wv)
					}
				}
				check("Title", g.Title, w.Title, w.Title != "")
				check("Brand", g.Brand, w.Brand, w.Brand != "")
				check("MainCat", g.MainCat, w.MainCat, w.MainCat != "")
				check("Price", g.Price, w.Price, w.HasPrice)
				check("HasPrice", g.HasPrice, w.HasPrice, true)
				check("SalesRank", g.SalesRank, w.SalesRank, w.SalesRank != nil)
				check("Categories", g.Categories, w.Categories, w.Categories != nil)
			}
			if p := got["B00005N7NQ"]; p != nil {
				if len(p.AlsoBought) != 72 || p.AlsoBought[0] != "B002PXVYLE" || p.AlsoBought[71] != "B001U5SPLK" || len(p.AlsoViewed) != 47 {
					t.Errorf("B00005N7NQ related lists: %d also_buy (%q...), %d also_view", len(p.AlsoBought), p.AlsoBought[:1], len(p.AlsoViewed))
				}
			}
			if p := got["B002BSHDJK"]; p != nil && (len(p.AlsoBought) != 29 || len(p.AlsoViewed) != 0) {
				t.Errorf("B002BSHDJK: %d also_buy, %d also_view; want 29, 0", len(p.AlsoBought), len(p.AlsoViewed))
			}
		})
	}
}

func TestRealReviews(t *testing.T) {
	tests := []struct {
		file   string
		meta   string
		stats  Stats
		asins  int
		inMeta int
		spots  map[int64]Review // by line
	}{
		{
			file: "Magazine_Subscriptions_5.json.gz", meta: "meta_Magazine_Subscriptions.json.gz",
			stats: Stats{Lines: 2375, Records: 2375, Bytes: 1389669}, asins: 157, inMeta: 151,
			spots: map[int64]Review{
				122: {ASIN: "B00005N7QW", ReviewerID: "A1LUTC4A8E99WF", ReviewText: "My FAV!!!!!", Overall: 5, UnixReviewTime: 1507939200},
				429: {ASIN: "B00005N7T5", ReviewerID: "A1LUTC4A8E99WF", Summary: "Fun!", Overall: 5, UnixReviewTime: 1503878400},
			},
		},
		{
			file: "Gift_Cards_5.json.gz", meta: "meta_Gift_Cards.json.gz",
			stats: Stats{Lines: 2972, Records: 2972, Bytes: 906419}, asins: 148, inMeta: 148,
			spots: map[int64]Review{
				1: {ASIN: "B004LLIKVU", ReviewerID: "A31UBHTUUIFJUT", ReviewText: "Another great gift.", Summary: "Five Stars", Overall: 5, UnixReviewTime: 1529193600},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := realFile(t, tt.file)
			asins := map[string]bool{}
			var line int64
			var st Stats
			for v, err := range Reviews(path, func(r Reject) { t.Errorf("reject %+v", r) }, &st) {
				if err != nil {
					t.Fatal(err)
				}
				line++ // no rejects, so records and lines agree
				asins[v.ASIN] = true
				if w, ok := tt.spots[line]; ok && v != w {
					t.Errorf("line %d: %+v\nwant %+v", line, v, w)
				}
			}
			if st != tt.stats || len(asins) != tt.asins {
				t.Errorf("stats %+v over %d ASINs; want %+v over %d", st, len(asins), tt.stats, tt.asins)
			}
			inMeta := 0
			if _, err := ReadMeta(context.Background(), realFile(t, tt.meta), func(p *Product) error {
				if asins[p.ASIN] {
					inMeta++
				}
				return nil
			}, nil); err != nil {
				t.Fatal(err)
			}
			if inMeta != tt.inMeta {
				t.Errorf("%d reviewed ASINs in meta, want %d", inMeta, tt.inMeta)
			}
		})
	}
}

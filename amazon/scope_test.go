package amazon

import (
	"slices"
	"testing"
)

func TestSubcategory(t *testing.T) {
	men := CategoryPrefix("Clothing, Shoes & Jewelry > Men")
	tests := []struct {
		name        string
		paths       [][]string
		prefix      []string
		depth       int
		sub, path   string
		matched, ok bool
	}{
		{"depth one", [][]string{{"Clothing, Shoes & Jewelry", "Men", "Shoes", "Boots"}}, men, 1,
			"Shoes", "Clothing, Shoes & Jewelry > Men > Shoes > Boots", true, true},
		{"depth two keeps the parent", [][]string{{"Clothing, Shoes & Jewelry", "Men", "Shoes", "Boots"}}, men, 2,
			"Shoes > Boots", "Clothing, Shoes & Jewelry > Men > Shoes > Boots", true, true},
		{"first matching path wins", [][]string{{"Electronics", "Men"}, {"Clothing, Shoes & Jewelry", "Men", "Watches"}, {"Clothing, Shoes & Jewelry", "Men", "Shoes"}}, men, 1,
			"Watches", "Clothing, Shoes & Jewelry > Men > Watches", true, true},
		{"too shallow", [][]string{{"Clothing, Shoes & Jewelry", "Men"}}, men, 1,
			"", "Clothing, Shoes & Jewelry > Men", true, false},
		{"other tree", [][]string{{"Clothing, Shoes & Jewelry", "Women", "Shoes"}}, men, 1, "", "", false, false},
		{"prefix is whole names, not a string prefix", [][]string{{"Clothing, Shoes & Jewelry", "Menswear", "Shoes"}}, men, 1, "", "", false, false},
		{"no categories", nil, men, 1, "", "", false, false},
		{"top-level prefix", [][]string{{"Electronics", "Camera & Photo", "Lenses"}}, CategoryPrefix("Electronics"), 1,
			"Camera & Photo", "Electronics > Camera & Photo > Lenses", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sub, path, matched, ok := Subcategory(tc.paths, tc.prefix, tc.depth)
			if sub != tc.sub || path != tc.path || matched != tc.matched || ok != tc.ok {
				t.Fatalf("got (%q, %q, %v, %v), want (%q, %q, %v, %v)", sub, path, matched, ok, tc.sub, tc.path, tc.matched, tc.ok)
			}
		})
	}
}

func TestCategoryPrefix(t *testing.T) {
	got := CategoryPrefix(" Clothing, Shoes & Jewelry >Men ")
	if len(got) != 2 || got[0] != "Clothing, Shoes & Jewelry" || got[1] != "Men" {
		t.Fatalf("got %q", got)
	}
}

func TestKeep(t *testing.T) {
	c := []Candidate{
		{ASIN: "B3", HasImage: true, Reviews: 2},
		{ASIN: "A9", HasImage: false, Reviews: 1},
		{ASIN: "B1", HasImage: true, Reviews: 0},
		{ASIN: "A2", HasImage: false, Reviews: 0},
	}
	tests := []struct {
		name               string
		c                  []Candidate
		need               Need
		kept               []int
		noImage, noReviews int64
	}{
		{name: "no candidates", need: NeedImage},
		{name: "image: those with a record, by ASIN", c: c, need: NeedImage, kept: []int{2, 0}, noImage: 2},
		{name: "reviews: those with one, by ASIN", c: c, need: NeedReview, kept: []int{1, 0}, noReviews: 2},
		{name: "nothing needed: all, by ASIN", c: c, need: NeedNothing, kept: []int{3, 1, 2, 0}},
		{name: "one review is enough", c: []Candidate{{ASIN: "X", Reviews: 1}}, need: NeedReview, kept: []int{0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kept, noImage, noReviews := Keep(tc.c, tc.need)
			if !slices.Equal(kept, tc.kept) || noImage != tc.noImage || noReviews != tc.noReviews {
				t.Fatalf("got %v, %d without an image, %d without reviews; want %v, %d, %d",
					kept, noImage, noReviews, tc.kept, tc.noImage, tc.noReviews)
			}
		})
	}
}

func TestRelated(t *testing.T) {
	p := &Product{AlsoBought: []string{"B"}, AlsoViewed: []string{"V"}, BoughtTogether: []string{"T"}}
	for graph, want := range map[string][]string{"also_bought": {"B"}, "also_viewed": {"V"}, "bought_together": {"T"}, "co_review": nil} {
		if got := p.Related(graph); !slices.Equal(got, want) {
			t.Errorf("Related(%q) = %q, want %q", graph, got, want)
		}
	}
}

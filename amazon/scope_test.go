package amazon

import (
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

package stages

import (
	"encoding/json"
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

func TestStatsOf(t *testing.T) {
	for in, want := range map[string]string{
		"DuplicateASINs": "duplicate_asins", "NeverSwitched": "never_switched",
		"PerWordBound": "per_word_bound", "Edges": "edges", "Level2Tokens": "level2_tokens",
	} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
	got := statsOf(struct {
		FirstDuplicate string
		Pairs          [3]int
		Inner          struct{ RejectedSelfLoop int64 }
	}{"B0", [3]int{8, 1, 1}, struct{ RejectedSelfLoop int64 }{1 << 53}})
	b, _ := json.Marshal(got)
	if want := `{"first_duplicate":"B0","inner":{"rejected_self_loop":9007199254740992},"pairs":[8,1,1]}`; string(b) != want {
		t.Errorf("statsOf = %s, want %s", b, want)
	}
}

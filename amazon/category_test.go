package amazon

import (
	"slices"
	"testing"
)

func TestClosestPaths(t *testing.T) {
	have := []string{
		"Clothing, Shoes & Jewelry > Women",
		"Clothing, Shoes & Jewelry > Men",
		"Clothing, Shoes & Jewelry > Baby",
		"Sports & Outdoors > Men",
	}
	tests := []struct {
		want string
		n    int
		out  []string
	}{
		{"Clothing, Shoes & Jewelry > Mne", 2, []string{"Clothing, Shoes & Jewelry > Men", "Clothing, Shoes & Jewelry > Women"}},
		{"clothing, shoes & jewelry > women", 1, []string{"Clothing, Shoes & Jewelry > Women"}},
		{"Sport & Outdoors > Men", 1, []string{"Sports & Outdoors > Men"}},
		{"x", 0, []string{}},
	}
	for _, tt := range tests {
		if got := ClosestPaths(tt.want, have, tt.n); !slices.Equal(got, tt.out) {
			t.Errorf("ClosestPaths(%q, %d) = %q, want %q", tt.want, tt.n, got, tt.out)
		}
	}
	if got := ClosestPaths("a", nil, 3); len(got) != 0 {
		t.Errorf("no candidates: %q", got)
	}
}

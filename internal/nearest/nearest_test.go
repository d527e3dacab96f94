package nearest

import "testing"

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"Mne", "Men", 1}, {"kitten", "sitting", 3},
		{"ca", "abc", 3}, // OSA, not full Damerau: no edit of a swapped pair
		{"Jewelry", "Jewellery", 2},
	}
	for _, tt := range tests {
		if d := Distance(tt.a, tt.b); d != tt.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, d, tt.d)
		}
	}
}

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

// TestSlip: one edit or a case is a slip; two edits or a tie are not.
func TestSlip(t *testing.T) {
	tests := []struct {
		want string
		have []string
		slip string // "" for none
	}{
		{"Items.csv", []string{"items.csv", "text.csv"}, "items.csv"},
		{"txet.csv", []string{"text.csv", "items.csv"}, "text.csv"},
		{"trm", []string{"trim"}, "trim"},
		{"meta_men.json.gz", []string{"meta_Women.json.gz"}, ""}, // two edits: another category
		{"meta_mne.json.gz", []string{"meta_Men.json.gz", "meta_Women.json.gz"}, "meta_Men.json.gz"},
		{"cat", []string{"bat", "car"}, ""}, // a tie
		{"seed", []string{"seed", "sed"}, "seed"},
		{"x", nil, ""},
		{"catalog", []string{"2023", "catalogue"}, "catalogue"}, // cut short
		{"cat", []string{"catalogue"}, ""},                      // too short to tell
		{"co_review", []string{"co_review_window", "co_review_min_users"}, ""},
	}
	for _, tt := range tests {
		got, ok := Slip(tt.want, tt.have)
		if got != tt.slip || ok != (tt.slip != "") {
			t.Errorf("Slip(%q, %q) = %q, %v; want %q", tt.want, tt.have, got, ok, tt.slip)
		}
	}
}

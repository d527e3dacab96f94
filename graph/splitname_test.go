package graph

import (
	"strings"
	"testing"
)

// ParseSplit reads back what String writes, and nothing else.
func TestParseSplit(t *testing.T) {
	for _, s := range []Split{Train, Valid, Test} {
		got, err := ParseSplit(s.String())
		if got != s || err != nil {
			t.Errorf("ParseSplit(%q) = %v, %v", s.String(), got, err)
		}
	}
	for _, bad := range []string{"", "Train", "validation", "test "} {
		if _, err := ParseSplit(bad); err == nil || !strings.Contains(err.Error(), "graph: unknown split") {
			t.Errorf("ParseSplit(%q): err = %v", bad, err)
		}
	}
}

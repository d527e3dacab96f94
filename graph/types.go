package graph

import "fmt"

// Edge is a directed relationship: Dst is listed on Src's page. Ends are item
// indices (rows of the experiment's items table).
type Edge struct {
	Src, Dst int32
}

// Split names the part of the data a pair belongs to.
type Split int8

const (
	Train Split = iota
	Valid
	Test
)

func (s Split) String() string {
	return splitNames[s]
}

var splitNames = [...]string{Train: "train", Valid: "valid", Test: "test"}

// ParseSplit is the Split that String names s.
func ParseSplit(s string) (Split, error) {
	for sp, name := range splitNames {
		if name == s {
			return Split(sp), nil
		}
	}
	return 0, fmt.Errorf("graph: unknown split %q", s)
}

// Pair is a labelled ordered pair of items.
type Pair struct {
	X, Y  int32
	Label bool // true: related (from R); false: from the negatives
	Split Split
}

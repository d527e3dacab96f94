package models

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"monomer/graph"
)

// A CT rebuilt from its table form scores every pair as the fitted one,
// and a table out of order is refused.
func TestNewCTScoresAsFitted(t *testing.T) {
	for _, top := range []float64{0, 0.3, 1} {
		fit, err := FitCT(ctSub, ctNames, ctTrain(), top)
		if err != nil {
			t.Fatal(err)
		}
		re, err := NewCT(ctSub, ctNames, slices.Clone(fit.Counts()))
		if err != nil {
			t.Fatal(err)
		}
		var all []graph.Pair
		for x := range int32(len(ctSub)) {
			for y := range int32(len(ctSub)) {
				all = append(all, graph.Pair{X: x, Y: y})
			}
		}
		d1, p1 := fit.Score(all)
		d2, p2 := re.Score(all)
		if !reflect.DeepEqual(d1, d2) || !reflect.DeepEqual(p1, p2) {
			t.Errorf("top %v: rebuilt CT scores differently", top)
		}
	}
	fit, _ := FitCT(ctSub, ctNames, ctTrain(), 0)
	bad := slices.Clone(fit.Counts())
	bad[0], bad[1] = bad[1], bad[0] // ranks 2, 1
	if _, err := NewCT(ctSub, ctNames, bad); !errors.Is(err, ErrCTInput) {
		t.Errorf("ranks out of order: err = %v", err)
	}
	gap := slices.Clone(fit.Counts())
	gap[0].Kept = false // rank 2 kept after rank 1 dropped
	if _, err := NewCT(ctSub, ctNames, gap); !errors.Is(err, ErrCTInput) {
		t.Errorf("kept after a dropped cell: err = %v", err)
	}
}

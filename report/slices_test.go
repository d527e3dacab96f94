package report

import (
	"math"
	"strings"
	"testing"

	"monomer/models"
)

// TestFitWarnings: a chosen fit near chance on validation, or one that
// kept its start, is named; a fit that learned, or a grid point not
// chosen, is not.
func TestFitWarnings(t *testing.T) {
	in := &Input{Name: "e", Models: []string{models.ModelWNN, models.ModelLMT, models.ModelMonomer},
		Metrics: []Metric{
			{Model: models.ModelWNN, Split: "valid", AUC: 0.9, Selected: true},
			{Model: models.ModelLMT, Split: "valid", AUC: 0.52, Selected: true},
			{Model: models.ModelLMT, Split: "test", AUC: 0.5, Selected: true}, // test, not validation
			{Model: models.ModelMonomer, Split: "valid", AUC: 0.5, Selected: false},
			{Model: models.ModelMonomer, Split: "valid", AUC: 0.7, Selected: true},
		},
		Flags: map[string][]string{models.ModelMonomer: {models.FlagKeptStart}}}
	w := fitWarnings(in)
	if len(w) != 2 || !strings.Contains(w[0], "LMT's validation AUC at the chosen λ is 0.520") || !strings.Contains(w[1], "Monomer's fit never beat its random starting point") {
		t.Errorf("warnings %q, want LMT's AUC and Monomer's kept start", w)
	}
}

// TestSliceTables: errors by model in the paper's column order, the gain
// LMT − Monomer, category pairs by test pairs, and the plot's points only
// for pairs with HeteroMinPairs or more.
func TestSliceTables(t *testing.T) {
	rows := []SliceRow{
		{Model: models.ModelMonomer, Slice: "cold", Group: "cold", Pairs: 5, Error: 0.2, Heterogeneity: math.NaN()},
		{Model: models.ModelLMT, Slice: "cold", Group: "cold", Pairs: 5, Error: 0.3, Heterogeneity: math.NaN()},
		{Model: models.ModelMonomer, Slice: "category_pair", Group: "A → B", Pairs: 4, Error: 0.1, Heterogeneity: 2},
		{Model: models.ModelLMT, Slice: "category_pair", Group: "A → B", Pairs: 4, Error: 0.4, Heterogeneity: 2},
		{Model: models.ModelMonomer, Slice: "category_pair", Group: "B → A", Pairs: 12, Error: 0.25, Heterogeneity: 1},
		{Model: models.ModelLMT, Slice: "category_pair", Group: "B → A", Pairs: 12, Error: 0.2, Heterogeneity: 1},
	}
	tabs, pts := sliceTables(rows)
	if len(tabs) != 2 || tabs[0].Models[0] != "LMT" || tabs[0].Rows[0].Errors[0] != 0.3 || math.Abs(tabs[0].Rows[0].Gain-0.1) > 1e-15 {
		t.Fatalf("tables %+v", tabs)
	}
	cat := tabs[1]
	if !cat.Het || cat.Rows[0].Group != "B → A" || cat.Rows[1].Group != "A → B" || math.Abs(cat.Rows[1].Gain-0.3) > 1e-15 {
		t.Errorf("category pairs %+v, want B → A (12 pairs) first, A → B's gain 0.3", cat.Rows)
	}
	if len(pts) != 1 || pts[0].Heterogeneity != 1 || math.Abs(pts[0].Gain+0.05) > 1e-15 {
		t.Errorf("points %+v, want B → A's alone (A → B has %d < %d pairs)", pts, 4, HeteroMinPairs)
	}
	if n, w := reverseNote("e", ReverseShare{TestPositives: 10, ReverseInTrain: 2}); !strings.HasPrefix(n, "2 of the 10 test positives (20.0 %)") || w == "" {
		t.Errorf("note %q warning %q, want 20.0 %% and a warning", n, w)
	}
	if _, w := reverseNote("e", ReverseShare{TestPositives: 10, ReverseInTrain: 1}); w != "" {
		t.Errorf("a tenth warned: %q", w)
	}
}

// TestUniformMarked: an experiment with uniform negatives carries the mark
// in the paper's tables; a rewired one does not.
func TestUniformMarked(t *testing.T) {
	mr := []ModelResult{{Model: models.ModelLMT, Title: "LMT", TestError: 0.2, PaperError: math.NaN()}}
	tabs := PaperTables([]*Experiment{{Name: "u", Features: "image", Uniform: true, Models: mr}, {Name: "r", Features: "image", Models: mr}})
	if len(tabs) != 1 || tabs[0].Rows[0].Name != "u "+UniformMark || tabs[0].Rows[1].Name != "r" {
		t.Errorf("tables %+v, want u marked %s and r not", tabs, UniformMark)
	}
}

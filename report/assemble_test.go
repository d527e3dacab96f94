package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"monomer/models"
)

// TestSmallDataWarning: an experiment training LMT and Monomer on fewer
// pairs than the learning curve's crossover for its features is named in
// tables.md; one at or above it, or without LMT, is not.
func TestSmallDataWarning(t *testing.T) {
	type exp struct {
		name, features string
		pairs          int64
		models         []string
	}
	tests := []struct {
		er   exp
		warn bool
	}{
		{exp{"bow-small", "bow", monomerCrossover["bow"] - 1, []string{"lmt", "monomer"}}, true},
		{exp{"bow-large", "bow", monomerCrossover["bow"], []string{"lmt", "monomer"}}, false},
		{exp{"image-small", "image", monomerCrossover["image"] - 1, []string{"lmt", "monomer"}}, true},
		{exp{"image-large", "image", monomerCrossover["bow"] - 1, []string{"lmt", "monomer"}}, false},
		// No curve of their own: the image figure (issue 37).
		{exp{"embeddings-small", "embeddings", monomerCrossover["image"] - 1, []string{"lmt", "monomer"}}, true},
		{exp{"embeddings-large", "embeddings", monomerCrossover["image"], []string{"lmt", "monomer"}}, false},
		{exp{"no-lmt", "bow", 10, []string{"monomer"}}, false},
		{exp{"no-monomer", "bow", 0, []string{"lmt"}}, false},
	}
	page := &Page{Job: "t"}
	for _, tc := range tests {
		w := smallDataWarning(tc.er.name, tc.er.features, tc.er.models, tc.er.pairs)
		if got := w != ""; got != tc.warn {
			t.Errorf("%s: warning %v, want %v", tc.er.name, got, tc.warn)
		}
		e := &Experiment{Name: tc.er.name, Graph: "also_bought", Features: tc.er.features}
		if w != "" {
			e.Warnings = []string{w}
		}
		page.Experiments = append(page.Experiments, e)
	}
	md := Markdown(page)
	_, notes, ok := strings.Cut(md, "Warnings:")
	if !ok {
		t.Fatalf("tables.md has no small-data notes:\n%s", md)
	}
	notes, _, _ = strings.Cut(notes, "##")
	for _, tc := range tests {
		if got := strings.Contains(notes, "- "+tc.er.name+":"); got != tc.warn {
			t.Errorf("%s listed %v, want %v:\n%s", tc.er.name, got, tc.warn, notes)
		}
	}
	if !strings.Contains(notes, "below the 1000 (the image figure, not measured for embeddings) from which Monomer beat LMT on planted image data") {
		t.Errorf("the embeddings warning does not say whose figure it is:\n%s", notes)
	}
}

// Assemble puts the models in the paper's column order under their
// titles, takes the paper's figure for the category, keeps the chosen λ's
// rows for the job's metrics with the claims on the test rows only, and
// titles the training curves.
func TestAssemble(t *testing.T) {
	nan := math.NaN()
	in := &Input{Name: "men", Category: "Clothing, Shoes & Jewelry > Men", Graph: "also_bought", Features: "image",
		Models:  []string{"lmt", "ct", "wnn"},
		Catalog: &Catalog{ASIN: []string{"A", "B"}, Title: []string{"a", "b"}, Sub: []int32{0, 1}, SubNames: []string{"Shoes", "Socks"}},
		Metrics: []Metric{
			{Model: "lmt", Split: "test", Error: 0.1, AUC: 0.9, Lambda: 1e-4, Selected: true},
			{Model: "lmt", Split: "valid", Error: 0.12, Lambda: 1e-4, Selected: true},
			{Model: "lmt", Split: "valid", Error: 0.3, Lambda: 1e-2},
			{Model: "ct", Split: "test", Error: 0.45, Lambda: nan, Selected: true},
			{Model: "wnn", Split: "train", Error: 0.3, Pairs: 500, Selected: true},
		},
		Claims: map[string]Claims{"lmt": {Same: 0.5, Coverage: 0.2}},
		Flags:  map[string][]string{"lmt": {models.FlagConstant}},
		Trace:  []TracePoint{{Model: "lmt", Iteration: 1}, {Model: "", Iteration: 1}},
	}
	a, err := Assemble(in)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, m := range a.Page.Models {
		titles = append(titles, m.Title)
	}
	if want := []string{"WNN", "CT", "LMT"}; !slices.Equal(titles, want) {
		t.Errorf("models %v, want %v", titles, want)
	}
	lmt := a.Page.Models[2]
	if lmt.PaperError != 0.092 || lmt.TestError != 0.1 || lmt.Valid != 0.12 || lmt.Marks != " †" || lmt.Claims == nil || lmt.Claims.Same != 0.5 {
		t.Errorf("LMT row %+v", lmt)
	}
	if a.Page.Dataset != "Men" || a.Page.PaperItems != 306215 {
		t.Errorf("dataset %q, paper items %d", a.Page.Dataset, a.Page.PaperItems)
	}
	if len(a.Metrics) != 4 {
		t.Fatalf("%d job metric rows, want the 4 at the chosen λ", len(a.Metrics))
	}
	for _, m := range a.Metrics {
		test := m.Split == "test"
		if test != !math.IsNaN(m.PaperError) || (m.Model == "lmt" && test) == math.IsNaN(m.Claims.Coverage) {
			t.Errorf("%s %s: paper %v, claims %+v", m.Model, m.Split, m.PaperError, m.Claims)
		}
	}
	if got := []string{a.Page.Trace[0].Model, a.Page.Trace[1].Model}; !slices.Equal(got, []string{"LMT", "training"}) {
		t.Errorf("trace titles %v", got)
	}
	if a.SmallData != "" || a.Page.Gate != nil || a.Page.Spaces != nil {
		t.Errorf("without Monomer or fits: warning %q, gate %v, %d spaces", a.SmallData, a.Page.Gate, len(a.Page.Spaces))
	}
}

// TestCoverageWarning: an embeddings experiment whose file had vectors
// for under half of its items says so on its page; at half, or with
// features other than embeddings, it does not.
func TestCoverageWarning(t *testing.T) {
	for _, tc := range []struct {
		features string
		kept     int
		warn     bool
	}{{"embeddings", 1, true}, {"embeddings", 2, false}, {"embeddings", 0, false}, {"image", 1, false}} {
		in := &Input{Name: "men", Category: "Clothing, Shoes & Jewelry > Men", Graph: "co_review", Features: tc.features,
			Catalog:      &Catalog{ASIN: []string{"A", "B", "C", "D"}, Title: []string{"a", "b", "c", "d"}, Sub: []int32{0, 1, 0, 1}, SubNames: []string{"Shoes", "Socks"}},
			FeatureItems: tc.kept,
		}
		a, err := Assemble(in)
		if err != nil {
			t.Fatal(err)
		}
		want := "men: the embeddings file has vectors for 1 of the 4 items in scope (25.0 %)"
		if got := slices.ContainsFunc(a.Page.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }); got != tc.warn || (a.Coverage != "") != tc.warn {
			t.Errorf("%s with %d of 4: warnings %q", tc.features, tc.kept, a.Page.Warnings)
		}
	}
}

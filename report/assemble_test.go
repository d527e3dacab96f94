package report

import (
	"strings"
	"testing"
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
}

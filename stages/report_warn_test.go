package stages

import (
	"strings"
	"testing"

	"monomer/report"
)

// TestSmallDataWarning: an experiment training LMT and Monomer on fewer
// pairs than the learning curve's crossover for its features is named in
// tables.md; one at or above it, or without LMT, is not.
func TestSmallDataWarning(t *testing.T) {
	exp := func(name, features string, pairs int64, models ...string) expReport {
		return expReport{r: reportExp{Name: name, Features: features, Graph: "also_bought", Models: models},
			trainPairs: pairs}
	}
	tests := []struct {
		er   expReport
		warn bool
	}{
		{exp("bow-small", "bow", monomerCrossover["bow"]-1, "lmt", "monomer"), true},
		{exp("bow-large", "bow", monomerCrossover["bow"], "lmt", "monomer"), false},
		{exp("image-small", "image", monomerCrossover["image"]-1, "lmt", "monomer"), true},
		{exp("image-large", "image", monomerCrossover["bow"]-1, "lmt", "monomer"), false},
		{exp("no-lmt", "bow", 10, "monomer"), false},
		{exp("no-monomer", "bow", 0, "lmt"), false},
	}
	page := &report.Page{Job: "t"}
	for _, tc := range tests {
		if got := tc.er.smallDataWarning() != ""; got != tc.warn {
			t.Errorf("%s: warning %v, want %v", tc.er.r.Name, got, tc.warn)
		}
		e := &report.Experiment{Name: tc.er.r.Name, Graph: tc.er.r.Graph, Features: tc.er.r.Features}
		if w := tc.er.smallDataWarning(); w != "" {
			e.Warnings = []string{w}
		}
		page.Experiments = append(page.Experiments, e)
	}
	md := report.Markdown(page)
	_, notes, ok := strings.Cut(md, "Warnings:")
	if !ok {
		t.Fatalf("tables.md has no small-data notes:\n%s", md)
	}
	notes, _, _ = strings.Cut(notes, "##")
	for _, tc := range tests {
		if got := strings.Contains(notes, "- "+tc.er.r.Name+":"); got != tc.warn {
			t.Errorf("%s listed %v, want %v:\n%s", tc.er.r.Name, got, tc.warn, notes)
		}
	}
}

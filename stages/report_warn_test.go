package stages

import (
	"strings"
	"testing"

	"monomer/job"
)

// TestSmallDataWarning: an experiment training LMT and Monomer on fewer
// pairs than the learning curve's crossover for its features is named in
// tables.md; one at or above it, or without LMT, is not.
func TestSmallDataWarning(t *testing.T) {
	exp := func(name, features string, pairs int64, models ...string) expReport {
		return expReport{r: job.Resolved{Experiment: job.Experiment{Name: name, Features: features, Graph: "also_bought", Models: models}},
			trainPairs: pairs, test: map[string]float64{"lmt": 0.3, "monomer": 0.35}}
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
	var reports []expReport
	for _, tc := range tests {
		reports = append(reports, tc.er)
		if got := tc.er.smallDataWarning() != ""; got != tc.warn {
			t.Errorf("%s: warning %v, want %v", tc.er.r.Name, got, tc.warn)
		}
	}
	md := renderTables("t", reports)
	_, notes, ok := strings.Cut(md, "Too little data for Monomer:")
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

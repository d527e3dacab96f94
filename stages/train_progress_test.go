package stages

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"monomer/models"
	"monomer/pipeline"
)

type recTracker struct {
	log   *[]string
	label string
}

func (r *recTracker) Add(n int64)          { *r.log = append(*r.log, fmt.Sprintf("%s +%d", r.label, n)) }
func (r *recTracker) Done()                { *r.log = append(*r.log, r.label+" done") }
func (r *recTracker) Describe(text string) { *r.log = append(*r.log, "describe "+text) }

// TestFitProgress: one bar per λ, counting iterations of max_iter, its text
// naming model, λ and the latest validation error.
func TestFitProgress(t *testing.T) {
	var log []string
	env := &pipeline.Env{Tracker: func(label string, total int64) pipeline.Tracker {
		log = append(log, fmt.Sprintf("start %s of %d", label, total))
		return &recTracker{log: &log, label: label}
	}}
	f := newFitProgress(env, "lmt", 3)
	nan := math.NaN()
	for _, p := range []models.Progress{
		{GridIndex: 0, Lambda: 0, Iter: 0, ValidError: 0.5},
		{GridIndex: 0, Lambda: 0, Iter: 1, ValidError: nan},
		{GridIndex: 0, Lambda: 0, Iter: 2, ValidError: 0.25},
		{GridIndex: 1, Lambda: 1e-4, Iter: 0, ValidError: 0.5},
		{GridIndex: 1, Lambda: 1e-4, Iter: 1, ValidError: nan},
	} {
		f.update(p)
	}
	f.done()
	want := []string{
		"start train lmt λ=0 of 3", "describe train lmt λ=0 valid_error=0.5000",
		"train lmt λ=0 +1",
		"train lmt λ=0 +1", "describe train lmt λ=0 valid_error=0.2500",
		"train lmt λ=0 done",
		"start train lmt λ=0.0001 of 3", "describe train lmt λ=0.0001 valid_error=0.5000",
		"train lmt λ=0.0001 +1",
		"train lmt λ=0.0001 done",
	}
	if !slices.Equal(log, want) {
		t.Errorf("progress\n got %q\nwant %q", log, want)
	}
}

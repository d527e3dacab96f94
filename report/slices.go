package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"monomer/models"
)

// SliceRow is one row of evaluate/slices.parquet (schema.SlicesCols).
type SliceRow struct {
	Model, Slice, Group       string
	Pairs, Positives          int64
	Error, AUC, Heterogeneity float64
}

// ReverseShare is the split's share of test positives whose reverse is a
// training positive (graph.ReverseShare); TestPositives 0 when unknown.
type ReverseShare struct {
	TestPositives, ReverseInTrain int
	Grouped                       bool // the split was split: grouped
}

// ReverseWarnShare is the share of reversed test positives above which
// the report warns that the test error rests on memorised directions: at
// 78.9 % a real shop's LMT error moved by 5.7 points (issue 55); a tenth
// is already a test set one in ten of whose answers was seen.
const ReverseWarnShare = 0.1

// CategoryRows is how many category pairs the report's table lists (the
// most test pairs first); slices.parquet has them all.
const CategoryRows = 20

// HeteroMinPairs is the fewest test pairs a category pair needs to be a
// point of the gain-against-heterogeneity plot: below it an error is
// mostly noise.
const HeteroMinPairs = 10

// SliceTable is one slice kind of one experiment as the page shows it:
// a row per group, a column per model's test error.
type SliceTable struct {
	Title  string
	Models []string // titles
	// Het says the rows have a heterogeneity (category pairs).
	Het  bool
	Rows []SliceTableRow
}

// SliceTableRow is one group: its pairs and each model's error (NaN for
// none), and Monomer's gain over LMT in error points (NaN without both).
type SliceTableRow struct {
	Group         string
	Pairs         int64
	Heterogeneity float64
	Errors        []float64
	Gain          float64
}

// HeteroPoint is one category pair of the gain plot.
type HeteroPoint struct {
	Heterogeneity, Gain float64
	Pairs               int64
}

// reverseNote is the sentence the page says of r, and a warning when the
// share passes ReverseWarnShare ("" when unknown).
func reverseNote(name string, r ReverseShare) (note, warn string) {
	if r.TestPositives == 0 {
		return "", ""
	}
	share := float64(r.ReverseInTrain) / float64(r.TestPositives)
	note = fmt.Sprintf("%d of the %d test positives (%.1f %%) have their reverse among the training positives", r.ReverseInTrain, r.TestPositives, 100*share)
	if r.Grouped {
		note += " (split: grouped)"
	}
	if share > ReverseWarnShare {
		warn = fmt.Sprintf("%s: %s: a model can answer those by remembering the other direction, so the test error is lower than on relations it never saw; split: grouped keeps both directions of a pair in one split", name, note)
	}
	return note + ".", warn
}

// sliceTables lays out rows (one experiment's) by slice kind, the
// category pairs cut to CategoryRows, and the plot's points.
func sliceTables(rows []SliceRow) ([]SliceTable, []HeteroPoint) {
	var order []models.Model
	for _, m := range models.ByColumn() {
		if slices.ContainsFunc(rows, func(r SliceRow) bool { return r.Model == m.Name }) {
			order = append(order, m)
		}
	}
	var titles []string
	for _, m := range order {
		titles = append(titles, m.Title)
	}
	kinds := []struct{ slice, title string }{
		{"cold", "Cold items (an end of the pair in no training pair) against the rest"},
		{"query_degree", "By the query's training degree (quartiles of the test pairs)"},
		{"category_pair", fmt.Sprintf("By category pair, query → item (the %d with the most test pairs)", CategoryRows)},
	}
	var out []SliceTable
	var points []HeteroPoint
	for _, k := range kinds {
		t := SliceTable{Title: k.title, Models: titles, Het: k.slice == "category_pair"}
		at := map[string]int{}
		for _, r := range rows {
			if r.Slice != k.slice {
				continue
			}
			i, ok := at[r.Group]
			if !ok {
				i = len(t.Rows)
				at[r.Group] = i
				errs := make([]float64, len(order))
				for j := range errs {
					errs[j] = math.NaN()
				}
				t.Rows = append(t.Rows, SliceTableRow{Group: r.Group, Pairs: r.Pairs, Heterogeneity: r.Heterogeneity, Errors: errs})
			}
			if j := slices.IndexFunc(order, func(m models.Model) bool { return m.Name == r.Model }); j >= 0 {
				t.Rows[i].Errors[j] = r.Error
			}
		}
		if len(t.Rows) == 0 {
			continue
		}
		lmt := slices.IndexFunc(order, func(m models.Model) bool { return m.Name == models.ModelLMT })
		mono := slices.IndexFunc(order, func(m models.Model) bool { return m.Name == models.ModelMonomer })
		for i := range t.Rows {
			t.Rows[i].Gain = math.NaN()
			if lmt >= 0 && mono >= 0 {
				t.Rows[i].Gain = t.Rows[i].Errors[lmt] - t.Rows[i].Errors[mono]
			}
			r := t.Rows[i]
			if t.Het && r.Pairs >= HeteroMinPairs && !math.IsNaN(r.Gain) && !math.IsNaN(r.Heterogeneity) {
				points = append(points, HeteroPoint{Heterogeneity: r.Heterogeneity, Gain: r.Gain, Pairs: r.Pairs})
			}
		}
		if t.Het {
			// The most test pairs first, ties in name order (the table's).
			slices.SortStableFunc(t.Rows, func(a, b SliceTableRow) int { return cmp.Compare(b.Pairs, a.Pairs) })
			t.Rows = t.Rows[:min(len(t.Rows), CategoryRows)]
		}
		out = append(out, t)
	}
	return out, points
}

// heteroPlot draws Monomer's gain over LMT (LMT's test error minus
// Monomer's) on each category pair against the pair's heterogeneity: the
// paper's claim is that the gain grows with it.
func heteroPlot(dir, name string, pts []HeteroPoint) error {
	if len(pts) == 0 {
		return errNothing
	}
	p := newPlot("Monomer's gain over LMT by category pair", "heterogeneity (distance between the subcategories' mean features)", "LMT error − Monomer error")
	xys := make(plotter.XYs, len(pts))
	for i, q := range pts {
		xys[i] = plotter.XY{X: q.Heterogeneity, Y: q.Gain}
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return fmt.Errorf("report: %s: %w", name, err)
	}
	s.Color, s.Radius = colorOf(0), vg.Points(2.5)
	p.Add(s)
	zero := plotter.NewFunction(func(float64) float64 { return 0 })
	zero.Color = colorOf(7)
	p.Add(zero)
	return save(p, dir, name, 6*vg.Inch, 3.6*vg.Inch)
}

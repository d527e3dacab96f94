package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"monomer/models"
)

// The paper's tables, as cells: index.html and tables.md are both drawn
// from PaperTables and DataSetRows, so the two files cannot disagree.

// Table is one of the paper's error tables: experiments × models, cells
// reading "ours (paper)".
type Table struct {
	Title string
	// Models are the column titles, in the paper's order.
	Models []string
	Rows   []Row
}

// Row is one experiment's row of a Table.
type Row struct {
	Name, Dataset, Graph string
	// Cells are the models' test errors, in Table.Models' order: "—" for a
	// model the experiment did not train.
	Cells []string
	// Impr is Monomer's relative improvement over LMT, ours (paper).
	Impr string
}

// PaperTables lays the test errors out like the paper's Tables 2 (image
// features) and 4 (bag of words), then the experiments on embeddings a
// user brought; a table with no experiment is left out.
func PaperTables(exps []*Experiment) []Table {
	var out []Table
	for _, kind := range []struct{ features, title string }{
		{"image", "Image features (the paper's Table 2)"},
		{"bow", "Bag-of-words features (the paper's Table 4)"},
		{"embeddings", "Embeddings the user brought (data.embeddings)"},
	} {
		tv := Table{Title: kind.title}
		var cols []string
		for _, m := range models.ByColumn() {
			for _, e := range exps {
				if e.Features != kind.features {
					continue
				}
				if r := e.model(m.Name); r != nil && !slices.Contains(cols, m.Name) {
					cols = append(cols, m.Name)
					tv.Models = append(tv.Models, r.Title)
				}
			}
		}
		for _, e := range exps {
			if e.Features != kind.features {
				continue
			}
			row := Row{Name: e.Name, Dataset: e.Dataset, Graph: e.Graph}
			if e.Uniform {
				row.Name += " " + UniformMark
			}
			for _, c := range cols {
				cell := "—"
				if r := e.model(c); r != nil {
					cell = pct(r.TestError) + r.Marks
					if !math.IsNaN(r.PaperError) {
						cell += fmt.Sprintf(" (%.2f%%)", 100*r.PaperError)
					}
				}
				row.Cells = append(row.Cells, cell)
			}
			row.Impr = "—"
			// The paper's comparison: Monomer against LMT.
			l, m := e.model(models.ModelLMT), e.model(models.ModelMonomer)
			if l != nil && m != nil {
				if !math.IsNaN(l.TestError) && !math.IsNaN(m.TestError) && l.TestError > 0 {
					row.Impr = fmt.Sprintf("%.0f%%", 100*(l.TestError-m.TestError)/l.TestError)
				}
				if !math.IsNaN(l.PaperError) && !math.IsNaN(m.PaperError) && l.PaperError > 0 {
					row.Impr += fmt.Sprintf(" (%.0f%%)", 100*(l.PaperError-m.PaperError)/l.PaperError)
				}
			}
			tv.Rows = append(tv.Rows, row)
		}
		if len(tv.Rows) > 0 {
			out = append(out, tv)
		}
	}
	return out
}

// model is the experiment's result of model m, nil if it has none.
func (e *Experiment) model(m string) *ModelResult {
	for i := range e.Models {
		if e.Models[i].Model == m {
			return &e.Models[i]
		}
	}
	return nil
}

// DataSetHeader and DataSetRows are the data-set statistics like the
// paper's Tables 1 and 3, ours (paper).
var DataSetHeader = []string{"Experiment", "Features", "Graph", "Subcategories", "Items", "Edges"}

// DataSetRows is one row per experiment under DataSetHeader.
func DataSetRows(exps []*Experiment) [][]string {
	withPaper := func(ours int64, paper int) string {
		if paper == 0 {
			return fmt.Sprint(ours)
		}
		return fmt.Sprintf("%d (%d)", ours, paper)
	}
	var out [][]string
	for _, e := range exps {
		out = append(out, []string{e.Name, e.Features, e.Graph,
			withPaper(int64(e.Subcategories), e.PaperSubcats), withPaper(int64(e.Items), e.PaperItems), withPaper(e.Edges, e.PaperEd)})
	}
	return out
}

// Markdown renders tables.md: the paper's error tables, every model's
// chosen λ and test AUC with the markers' legend, and the data sets.
func Markdown(page *Page) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: test error rates\n\n", page.Job)
	if p := page.Provenance; p != nil {
		fmt.Fprintf(&b, "%s The run and build that rendered this file and when: report/manifest.json (run_id, tools, started; the stats' version).\n\n", p.Line())
	}
	b.WriteString("Lower is better. Cells read `ours (paper)`; the paper's figures are for the real 2014 Amazon data of the same category and graph, so they are comparable only when this job ran on that data. `impr.` is Monomer's relative improvement over LMT.\n")
	row := func(cells ...string) { fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | ")) }
	for _, t := range PaperTables(page.Experiments) {
		fmt.Fprintf(&b, "\n## %s\n\n", t.Title)
		row(slices.Concat([]string{"Experiment", "Dataset", "Graph"}, t.Models, []string{"impr."})...)
		b.WriteString("|---|---|---|" + strings.Repeat("---:|", len(t.Models)+1) + "\n")
		for _, r := range t.Rows {
			row(slices.Concat([]string{r.Name, r.Dataset, r.Graph}, r.Cells, []string{r.Impr})...)
		}
	}
	var small []string
	for _, e := range page.Experiments {
		for _, w := range e.Warnings {
			small = append(small, "- "+w+".\n")
		}
	}
	for _, e := range page.Experiments {
		if g := e.Publish; g.Refused() && g.Promotable {
			small = append(small, fmt.Sprintf("- %s: not promoted: the publish gate refused its %s lists (%s); see %s/publish/gate.json.\n", e.Name, g.Model, g.Reason, e.Name))
		}
	}
	if len(small) > 0 {
		b.WriteString("\nWarnings:\n\n" + strings.Join(small, ""))
	}
	b.WriteString("\n## Chosen λ and test AUC\n\n| Experiment | Dataset | Model | λ | Test error | Test AUC |\n|---|---|---|---:|---:|---:|\n")
	for _, e := range page.Experiments {
		for _, m := range models.ByColumn() {
			r := e.model(m.Name)
			if r == nil || math.IsNaN(r.TestError) {
				continue
			}
			lambda := "—" // a counted model (CT) has no λ
			if !m.Counted && !math.IsNaN(r.Lambda) {
				lambda = fmt.Sprintf("%g", r.Lambda)
			}
			row(e.Name, e.Dataset, r.Title, lambda, pct(r.TestError)+r.Marks, fmt.Sprintf("%.4f", r.AUC))
		}
	}
	if page.Markers != "" {
		fmt.Fprintf(&b, "\nMarkers: %s\n", page.Markers)
	}
	b.WriteString(seedsMarkdown(page.Seeds))
	b.WriteString("\n## Data sets (the paper's Tables 1 and 3)\n\n")
	row(DataSetHeader...)
	b.WriteString("|---|---|---|---:|---:|---:|\n")
	for _, r := range DataSetRows(page.Experiments) {
		row(r...)
	}
	return b.String()
}

package report

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Page is everything the report shows. The report stage fills it from a
// finished run; any part may be empty, and its section is then left out.
type Page struct {
	Job         string
	Experiments []*Experiment
}

// Experiment is one experiment's results.
type Experiment struct {
	Name, Dataset, Graph, Features string
	// Data-set statistics, ours and the paper's (0 where it has none).
	Items, Subcategories              int
	Edges                             int64
	PaperItems, PaperSubcats, PaperEd int
	// Models in table order.
	Models []ModelResult
	// Fits is every grid point of every trained model (fits.parquet).
	Fits []FitPoint
	// Trace is the per-iteration training record, if the train stage wrote
	// one.
	Trace []TracePoint
	// SubNames names the subcategories Space.Sub indexes.
	SubNames []string
	// Spaces are the embedding spaces to map (LMT; Monomer's E₁..E_N), all
	// over the same sample of items.
	Spaces []Space
	Gate   *Gate
	// DimTops lists, for each dimension of one space, the titles of the
	// items that maximise it (the paper's Figure 4).
	DimTops *DimTops
	// Queries are a few queries with each model's list.
	Queries []QueryLists
	// K is the length of the lists the claims are measured on.
	K int
	// Warnings are shown under the experiment's heading (e.g. a training
	// set too small for Monomer to beat LMT).
	Warnings []string
}

// ModelResult is one model's row of the tables. NaN means none.
type ModelResult struct {
	Model, Title                              string
	TestError, PaperError, AUC, Lambda, Valid float64
	Claims                                    *Claims
}

// Claims are the paper's qualitative claims as numbers (see
// schema.RecommendMetrics). CoverageCross and GiniCross are measured on the
// lists with the query's own subcategory left out (NaN when unmeasured).
type Claims struct {
	Same, Distinct, Coverage, Gini, HitRate, Recall float64
	CoverageCross, GiniCross                        float64
	Queries, TestQueries                            int
}

// FitPoint is one λ of one model's grid.
type FitPoint struct {
	Model      string
	Lambda     float64
	ValidError float64
	Selected   bool
}

// TracePoint is one training iteration; ValidError is NaN where it was not
// checked.
type TracePoint struct {
	Model      string
	Lambda     float64
	Iteration  int
	Objective  float64
	ValidError float64
}

// Space is one embedding space's vectors of the sampled items.
type Space struct {
	Title string
	Dim   int
	// Vectors is len(Sub)×Dim, row-major.
	Vectors []float64
	Sub     []int
}

// Gate is Monomer's mean P(k|x) per subcategory, and how many spaces it
// uses over the train pairs (fits.parquet's gate_spaces and gate_routes at
// the chosen λ; see models.GateUse).
type Gate struct {
	Spaces             int
	UsedSpaces, Routes float64
	Subcats            []string
	Items              []int       // items per subcategory
	Mean               [][]float64 // [subcategory][space]
}

// DimTops are the items maximising each dimension of one space.
type DimTops struct {
	Space string
	Dims  [][]Item
}

// Item is a catalogue item as the page shows it.
type Item struct{ ASIN, Title, Subcategory string }

// QueryLists is one query with its recommendation lists.
type QueryLists struct {
	Query Item
	Lists []RecList
}

// RecList is one model's list for a query.
type RecList struct {
	Model string
	Items []RecItem
	// Distinct is the number of subcategories in the list.
	Distinct int
}

// RecItem is one recommended item.
type RecItem struct {
	Item
	Prob  float64
	Space int  // Monomer's space, 0 otherwise
	Same  bool // in the query's subcategory
}

// Options steer Write.
type Options struct {
	// Seed seeds the t-SNE maps (each space its own stream).
	Seed uint64
	// TSNE are the maps' settings.
	TSNE TSNEOptions
}

// Written lists the files Write produced, relative to its directory.
type Written struct {
	Files []string
	// Skipped names plots left out and why.
	Skipped []string
}

//go:embed index.html.tmpl
var pageTemplate string

// Write renders page into dir: index.html and the PNGs it shows. The page
// references only files written here. Once ctx is done Write returns
// ctx.Err() within one t-SNE iteration.
func Write(ctx context.Context, dir string, page *Page, opt Options) (*Written, error) {
	w := &Written{}
	view := &pageView{Page: page, Tables: paperTables(page)}
	for ei, e := range page.Experiments {
		ev := &expView{Experiment: e}
		view.Exps = append(view.Exps, ev)
		prefix := fmt.Sprintf("e%d-", ei)
		add := func(name string, err error, what string) (string, error) {
			if errors.Is(err, errNothing) {
				w.Skipped = append(w.Skipped, e.Name+": "+what+": nothing to draw")
				return "", nil
			}
			if err != nil {
				return "", err
			}
			w.Files = append(w.Files, name)
			return name, nil
		}
		if len(e.Fits) > 0 {
			name := prefix + "lambda.png"
			png, err := add(name, lambdaPlot(dir, name, e.Fits), "error against λ")
			if err != nil {
				return nil, err
			}
			ev.LambdaPNG = png
		}
		for _, m := range modelsOf(traceFits(e.Trace)) {
			for _, valid := range []bool{false, true} {
				name := fmt.Sprintf("%strace-%s-%s.png", prefix, m, map[bool]string{false: "objective", true: "valid"}[valid])
				png, err := add(name, tracePlot(dir, name, m, e.Trace, valid), "training curve of "+m)
				if err != nil {
					return nil, err
				}
				if png != "" {
					ev.Traces = append(ev.Traces, imgView{Src: png, Alt: m + " training curve"})
				}
			}
		}
		for si, s := range e.Spaces {
			n := len(s.Sub)
			if n < 4 || s.Dim < 1 || len(s.Vectors) != n*s.Dim {
				w.Skipped = append(w.Skipped, fmt.Sprintf("%s: map of %s: %d items", e.Name, s.Title, n))
				continue
			}
			res, err := TSNE(ctx, s.Vectors, n, s.Dim, opt.TSNE, rand.New(rand.NewPCG(opt.Seed, uint64(ei)<<16|uint64(si))))
			if err != nil {
				return nil, fmt.Errorf("report: %s: map of %s: %w", e.Name, s.Title, err)
			}
			name := fmt.Sprintf("%smap-%d.png", prefix, si)
			png, err := add(name, mapPlot(dir, name, s.Title, res.Y, s.Sub, e.SubNames), "map of "+s.Title)
			if err != nil {
				return nil, err
			}
			kl := math.NaN()
			if len(res.KL) > 0 {
				kl = res.KL[len(res.KL)-1]
			}
			ev.Maps = append(ev.Maps, imgView{Src: png, Alt: "t-SNE map of " + s.Title, Note: fmt.Sprintf("%d items, KL %.3f", n, kl)})
		}
		if g := e.Gate; g != nil && len(g.Subcats) > 0 && g.Spaces > 0 {
			name := prefix + "gate.png"
			png, err := add(name, gatePlot(dir, name, g), "gate")
			if err != nil {
				return nil, err
			}
			ev.GatePNG = png
		}
	}
	t, err := template.New("index").Funcs(funcs).Parse(pageTemplate)
	if err != nil {
		return nil, fmt.Errorf("report: template: %w", err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, view); err != nil {
		return nil, fmt.Errorf("report: template: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), buf.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	w.Files = append(w.Files, "index.html")
	return w, nil
}

// traceFits lists the models of a trace in first-seen order.
func traceFits(tr []TracePoint) []FitPoint {
	out := make([]FitPoint, len(tr))
	for i, t := range tr {
		out[i] = FitPoint{Model: t.Model}
	}
	return out
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.2f%%", 100*v)
}

type pageView struct {
	*Page
	Tables []tableView
	Exps   []*expView
}

// tableView is one of the paper's error tables: experiments × models.
type tableView struct {
	Title  string
	Models []string
	Rows   []rowView
}

type rowView struct {
	Name, Dataset, Graph string
	Cells                []string
	Impr                 string
}

// paperTables lays the test errors out like the paper's Tables 2 (image)
// and 4 (bag of words): "ours (paper)".
func paperTables(page *Page) []tableView {
	order := []string{"wnn", "ct", "lda", "lmt", "monomer"}
	var out []tableView
	for _, kind := range []struct{ features, title string }{
		{"image", "Image features (the paper's Table 2)"},
		{"bow", "Bag-of-words features (the paper's Table 4)"},
	} {
		tv := tableView{Title: kind.title}
		var cols []string
		for _, m := range order {
			for _, e := range page.Experiments {
				if e.Features != kind.features {
					continue
				}
				for _, r := range e.Models {
					if r.Model == m && !contains(cols, m) {
						cols = append(cols, m)
						tv.Models = append(tv.Models, r.Title)
					}
				}
			}
		}
		for _, e := range page.Experiments {
			if e.Features != kind.features {
				continue
			}
			row := rowView{Name: e.Name, Dataset: e.Dataset, Graph: e.Graph}
			var l, m, pl, pm = math.NaN(), math.NaN(), math.NaN(), math.NaN()
			for _, c := range cols {
				cell := "—"
				for _, r := range e.Models {
					if r.Model != c {
						continue
					}
					cell = pct(r.TestError)
					if !math.IsNaN(r.PaperError) {
						cell += fmt.Sprintf(" (%.2f%%)", 100*r.PaperError)
					}
					if c == "lmt" {
						l, pl = r.TestError, r.PaperError
					}
					if c == "monomer" {
						m, pm = r.TestError, r.PaperError
					}
				}
				row.Cells = append(row.Cells, cell)
			}
			row.Impr = "—"
			if !math.IsNaN(l) && !math.IsNaN(m) && l > 0 {
				row.Impr = fmt.Sprintf("%.0f%%", 100*(l-m)/l)
			}
			if !math.IsNaN(pl) && !math.IsNaN(pm) && pl > 0 {
				row.Impr += fmt.Sprintf(" (%.0f%%)", 100*(pl-pm)/pl)
			}
			tv.Rows = append(tv.Rows, row)
		}
		if len(tv.Rows) > 0 {
			out = append(out, tv)
		}
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

type expView struct {
	*Experiment
	LambdaPNG, GatePNG string
	Traces, Maps       []imgView
}

type imgView struct{ Src, Alt, Note string }

var funcs = template.FuncMap{
	"pct": pct,
	"num": func(v float64) string {
		if math.IsNaN(v) {
			return "—"
		}
		return fmt.Sprintf("%.3g", v)
	},
	"fix": func(v float64) string {
		if math.IsNaN(v) {
			return "—"
		}
		return fmt.Sprintf("%.3f", v)
	},
	"lambda": func(v float64) string {
		if math.IsNaN(v) {
			return "—"
		}
		return fmt.Sprintf("%g", v)
	},
	"add1": func(i int) int { return i + 1 },
	"title": func(s string) string {
		if s == "" {
			return "(untitled)"
		}
		return s
	},
	"join": strings.Join,
	"hasClaims": func(ms []ModelResult) bool {
		for _, m := range ms {
			if m.Claims != nil {
				return true
			}
		}
		return false
	},
}

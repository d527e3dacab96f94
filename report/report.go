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
	// Markers is the legend of the marks on degenerate fits' cells
	// (ModelResult.Marks); empty leaves it out.
	Markers string
	// Provenance says what the page is a report of; nil leaves it out.
	Provenance *Provenance
	// Seeds is the spread over the job's seeds and the paired tests; nil
	// leaves them out.
	Seeds *SeedSummary
}

// Provenance identifies the computation a report shows. Its fields are
// those a rerun of the same job on the same data with the same build
// repeats, so the page's bytes do too: the run that rendered it and when
// (run ID, date) differ between such runs and are kept in the stage's
// manifest.json and the run log instead.
type Provenance struct {
	Job string
	// JobHash is the sha256 of the job's settings, file locations left
	// out (the inputs' content is in every stage's key).
	JobHash string
	Seed    uint64
	// BLAS is the BLAS and CPU kernel that computed the matrix products
	// (part of the report's key). The build's version is not rendered: the
	// key does not hold it (a rebuild at a README-only commit leaves the
	// report up to date), so `verify` and `diff` would see it differ;
	// report/manifest.json names it.
	BLAS string
}

// Line is the provenance as one line of text.
func (p *Provenance) Line() string {
	return fmt.Sprintf("Job %s (sha256 %s), seed %d; BLAS %s.", p.Job, p.JobHash, p.Seed, p.BLAS)
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
	// Marks flag a degenerate chosen fit (" †"; see Page.Markers).
	Marks  string
	Claims *Claims
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
	Dist  float64 // the model's distance, which ranks the list
	Space int     // Monomer's space, 0 otherwise
	Same  bool    // in the query's subcategory
}

// Options steer Write.
type Options struct {
	// Seed seeds the t-SNE maps (each space its own stream).
	Seed uint64
	// TSNE are the maps' settings.
	TSNE TSNEOptions
	// Progress, if not nil, is told what Write is doing: step names the
	// picture being made, done of total units (a t-SNE iteration, a plot)
	// are finished. It is called from Write's goroutine.
	Progress func(step string, done, total int64)
}

// tsneIterations is the iterations of a map under opt (TSNE's default).
func tsneIterations(opt TSNEOptions) int64 {
	if opt.Iterations > 0 {
		return int64(opt.Iterations)
	}
	return 500
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
	// Progress in units: every map's t-SNE iterations and one a plot.
	var total, done int64
	for _, e := range page.Experiments {
		total += int64(len(e.Spaces))*tsneIterations(opt.TSNE) + 3
	}
	progress := func(step string, n int64) {
		done += n
		if opt.Progress != nil {
			opt.Progress(step, done, total)
		}
	}
	view := &pageView{Page: page, Tables: PaperTables(page.Experiments), DataSetHead: DataSetHeader, DataSets: DataSetRows(page.Experiments)}
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
		// Each plot renders on a goroutine of its own, beside the t-SNE
		// maps that keep every core busy (the plots were a serial quarter
		// CPU-second of Electronics' report); what it adds to w and the
		// page, and its error, are taken in the order the plots were
		// started, when the experiment's last map is done: the files and
		// page of rendering them one after another.
		var steps []func() error
		plot := func(name, what string, render func() error, place func(png string)) {
			done := make(chan error, 1)
			go func() { done <- render() }()
			steps = append(steps, func() error {
				png, err := add(name, <-done, what)
				if err == nil {
					place(png)
				}
				return err
			})
		}
		// finish waits for every plot started and returns the first error
		// in order.
		finish := func() error {
			var first error
			for _, step := range steps {
				if err := step(); err != nil && first == nil {
					first = err
				}
			}
			return first
		}
		progress(e.Name+": plots", 0)
		if len(e.Fits) > 0 {
			name := prefix + "lambda.png"
			plot(name, "error against λ", func() error { return lambdaPlot(dir, name, e.Fits) },
				func(png string) { ev.LambdaPNG = png })
		}
		for _, m := range modelsOf(traceFits(e.Trace)) {
			for _, valid := range []bool{false, true} {
				name := fmt.Sprintf("%strace-%s-%s.png", prefix, m, map[bool]string{false: "objective", true: "valid"}[valid])
				plot(name, "training curve of "+m, func() error { return tracePlot(dir, name, m, e.Trace, valid) },
					func(png string) {
						if png != "" {
							ev.Traces = append(ev.Traces, imgView{Src: png, Alt: m + " training curve"})
						}
					})
			}
		}
		progress(e.Name+": plots", 2)
		for si, s := range e.Spaces {
			n := len(s.Sub)
			step := fmt.Sprintf("%s: t-SNE map of %s", e.Name, s.Title)
			if n < 4 || s.Dim < 1 || len(s.Vectors) != n*s.Dim {
				steps = append(steps, func() error {
					w.Skipped = append(w.Skipped, fmt.Sprintf("%s: map of %s: %d items", e.Name, s.Title, n))
					return nil
				})
				progress(step, tsneIterations(opt.TSNE))
				continue
			}
			to := opt.TSNE
			var last int64
			to.Progress = func(it int) { progress(step, int64(it)-last); last = int64(it) }
			res, err := TSNE(ctx, s.Vectors, n, s.Dim, to, rand.New(rand.NewPCG(opt.Seed, uint64(ei)<<16|uint64(si))))
			progress(step, tsneIterations(opt.TSNE)-last)
			if err != nil {
				if perr := finish(); perr != nil {
					return nil, perr // a plot's error came first
				}
				return nil, fmt.Errorf("report: %s: map of %s: %w", e.Name, s.Title, err)
			}
			name := fmt.Sprintf("%smap-%d.png", prefix, si)
			kl := math.NaN()
			if len(res.KL) > 0 {
				kl = res.KL[len(res.KL)-1]
			}
			plot(name, "map of "+s.Title, func() error { return mapPlot(dir, name, s.Title, res.Y, s.Sub, e.SubNames) },
				func(png string) {
					ev.Maps = append(ev.Maps, imgView{Src: png, Alt: "t-SNE map of " + s.Title, Note: fmt.Sprintf("%d items, KL %.3f", n, kl)})
				})
		}
		progress(e.Name+": gate", 0)
		if g := e.Gate; g != nil && len(g.Subcats) > 0 && g.Spaces > 0 {
			name := prefix + "gate.png"
			plot(name, "gate", func() error { return gatePlot(dir, name, g) }, func(png string) { ev.GatePNG = png })
		}
		if err := finish(); err != nil {
			return nil, err
		}
		progress(e.Name+": gate", 1)
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

// Prob formats a probability so that a list's items can be told apart:
// three decimals, but within 0.0005 of 0 or 1, where a list of LMT's
// (whose probabilities saturate) would read 1.000 or 0.000 throughout, two
// significant digits of p or of 1 − p: "4.1e-07", "1 − 3.2e-05". Exactly 0
// and 1 print as "0" and "1"; the distance ranks those.
func Prob(p float64) string {
	switch {
	case math.IsNaN(p):
		return "—"
	case p == 0 || p == 1:
		return fmt.Sprint(p)
	case p < 0.0005:
		return fmt.Sprintf("%.2g", p)
	case p > 0.9995:
		return fmt.Sprintf("1 − %.2g", 1-p)
	}
	return fmt.Sprintf("%.3f", p)
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.2f%%", 100*v)
}

type pageView struct {
	*Page
	Tables      []Table
	DataSetHead []string
	DataSets    [][]string
	Exps        []*expView
}

type expView struct {
	*Experiment
	LambdaPNG, GatePNG string
	Traces, Maps       []imgView
}

type imgView struct{ Src, Alt, Note string }

var funcs = template.FuncMap{
	// The seeds' section (seeds.go).
	"meanSD":     meanSD,
	"pvalue":     pValue,
	"modelTitle": title,
	"exactBelow": func() int { return McNemarExactBelow },
	"pct":        pct,
	"prob":       Prob,
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

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
	// Baseline is the popularity baseline's claims (models.Popularity),
	// nil when the recommend stage did not measure it.
	Baseline *Claims
	// Uniform says the negatives were uniform, not rewired (UniformMark).
	Uniform bool
	// ReverseNote says how many test positives have their reverse in
	// training ("" when unknown).
	ReverseNote string
	// SliceTables are the test error by slice (evaluate's slices.parquet);
	// HeteroPoints Monomer's gain over LMT by category pair.
	SliceTables  []SliceTable
	HeteroPoints []HeteroPoint
	// Warnings are shown under the experiment's heading (e.g. a training
	// set too small for Monomer to beat LMT).
	Warnings []string
	// Publish is the experiment's promotion gate, nil without a publish
	// node.
	Publish *PublishGate
}

// PublishGate is what a publish node's gate decided, as its gate.json
// records it (docs/publishing.md): every figure against its threshold.
type PublishGate struct {
	Model, Decision, Reason string
	// Previous is the published run compared with, "" for none.
	Previous string
	// Promotable is false for a run without a root of runs, where nothing
	// is promoted whatever the gate says.
	Promotable bool
	Checks     []GateCheck
}

// GateCheck is one threshold of the gate.
type GateCheck struct {
	Name             string
	Value, Threshold float64
	Pass             bool
}

// Refused reports whether the gate refused the run's lists: the publish
// node failed with exit 6 and the experiment's published link stayed.
func (g *PublishGate) Refused() bool { return g != nil && g.Decision != "promote" }

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
	// NDCG and MRR are at k over the same lists as HitRate; TopShare is
	// the largest share of the lists one item is in, Dominated that it is
	// above the recommend stage's threshold (NaN, false before recommend
	// 1.4.0).
	NDCG, MRR, TopShare  float64
	Dominated            bool
	Queries, TestQueries int
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

// Write renders page into dir: index.html and the PNGs it shows (each
// experiment's WriteSection, its files named e<i>-…, then WritePage). The
// page references only files written here. Once ctx is done Write returns
// ctx.Err() within one t-SNE iteration.
func Write(ctx context.Context, dir string, page *Page, opt Options) (*Written, error) {
	// Progress in units over every experiment: each section's count.
	var total, offset int64
	for _, e := range page.Experiments {
		total += sectionUnits(e, opt)
	}
	w := &Written{}
	var sections []*Section
	for ei, e := range page.Experiments {
		o := opt
		if opt.Progress != nil {
			o.Progress = func(step string, done, _ int64) { opt.Progress(step, offset+done, total) }
		}
		s, err := WriteSection(ctx, dir, fmt.Sprintf("e%d-", ei), e, ei, o)
		if err != nil {
			return nil, err
		}
		offset += sectionUnits(e, opt)
		sections = append(sections, s)
		w.Files, w.Skipped = append(w.Files, s.Files...), append(w.Skipped, s.Skipped...)
	}
	if err := WritePage(dir, page, sections); err != nil {
		return nil, err
	}
	w.Files = append(w.Files, "index.html")
	return w, nil
}

// Section is what WriteSection drew of one experiment: the pictures its
// part of the page shows, by file name, and what it left out.
type Section struct {
	LambdaPNG, GatePNG, HeteroPNG string
	Traces, Maps                  []Image
	// Files lists the PNGs written, Skipped the plots left out and why.
	Files, Skipped []string
}

// Image is one picture of a section: its file, alternative text and the
// note under it.
type Image struct{ Src, Alt, Note string }

// Renamed is s with every file name f read rename(f): the names of the
// files where a page that assembles sections drawn elsewhere put them.
func (s *Section) Renamed(rename func(string) string) *Section {
	out := &Section{LambdaPNG: s.LambdaPNG, GatePNG: s.GatePNG, HeteroPNG: s.HeteroPNG, Skipped: s.Skipped}
	for _, f := range []*string{&out.LambdaPNG, &out.GatePNG, &out.HeteroPNG} {
		if *f != "" {
			*f = rename(*f)
		}
	}
	for _, f := range s.Files {
		out.Files = append(out.Files, rename(f))
	}
	for _, list := range []struct {
		from []Image
		to   *[]Image
	}{{s.Traces, &out.Traces}, {s.Maps, &out.Maps}} {
		for _, im := range list.from {
			im.Src = rename(im.Src)
			*list.to = append(*list.to, im)
		}
	}
	return out
}

// sectionUnits is WriteSection's progress total for e: every map's t-SNE
// iterations and one unit a plot.
func sectionUnits(e *Experiment, opt Options) int64 {
	return int64(len(e.Spaces))*tsneIterations(opt.TSNE) + 3
}

// WriteSection draws experiment e's pictures into dir, each file named
// prefix + its name (lambda.png, trace-<model>-<curve>.png, map-<i>.png,
// gate.png): the work of the report, t-SNE above all, that depends on
// this experiment alone. The maps draw stream from (opt.Seed, index<<16|
// map), index being the experiment's place in the job. Once ctx is done
// it returns ctx.Err() within one t-SNE iteration.
func WriteSection(ctx context.Context, dir, prefix string, e *Experiment, index int, opt Options) (*Section, error) {
	sec := &Section{}
	var done int64
	total := sectionUnits(e, opt)
	progress := func(step string, n int64) {
		done += n
		if opt.Progress != nil {
			opt.Progress(step, done, total)
		}
	}
	add := func(name string, err error, what string) (string, error) {
		if errors.Is(err, errNothing) {
			sec.Skipped = append(sec.Skipped, e.Name+": "+what+": nothing to draw")
			return "", nil
		}
		if err != nil {
			return "", err
		}
		sec.Files = append(sec.Files, name)
		return name, nil
	}
	// Each plot renders on a goroutine of its own, beside the t-SNE maps
	// that keep every core busy (the plots were a serial quarter
	// CPU-second of Electronics' report); what it adds to the section, and
	// its error, are taken in the order the plots were started, when the
	// experiment's last map is done: the files of rendering them one after
	// another.
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
	// finish waits for every plot started and returns the first error in
	// order.
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
			func(png string) { sec.LambdaPNG = png })
	}
	for _, m := range modelsOf(traceFits(e.Trace)) {
		for _, valid := range []bool{false, true} {
			name := fmt.Sprintf("%strace-%s-%s.png", prefix, m, map[bool]string{false: "objective", true: "valid"}[valid])
			plot(name, "training curve of "+m, func() error { return tracePlot(dir, name, m, e.Trace, valid) },
				func(png string) {
					if png != "" {
						sec.Traces = append(sec.Traces, Image{Src: png, Alt: m + " training curve"})
					}
				})
		}
	}
	if len(e.HeteroPoints) > 0 {
		name := prefix + "heterogeneity.png"
		plot(name, "gain against heterogeneity", func() error { return heteroPlot(dir, name, e.HeteroPoints) },
			func(png string) { sec.HeteroPNG = png })
	}
	progress(e.Name+": plots", 2)
	for si, s := range e.Spaces {
		n := len(s.Sub)
		step := fmt.Sprintf("%s: t-SNE map of %s", e.Name, s.Title)
		if n < 4 || s.Dim < 1 || len(s.Vectors) != n*s.Dim {
			steps = append(steps, func() error {
				sec.Skipped = append(sec.Skipped, fmt.Sprintf("%s: map of %s: %d items", e.Name, s.Title, n))
				return nil
			})
			progress(step, tsneIterations(opt.TSNE))
			continue
		}
		to := opt.TSNE
		var last int64
		to.Progress = func(it int) { progress(step, int64(it)-last); last = int64(it) }
		res, err := TSNE(ctx, s.Vectors, n, s.Dim, to, rand.New(rand.NewPCG(opt.Seed, uint64(index)<<16|uint64(si))))
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
				sec.Maps = append(sec.Maps, Image{Src: png, Alt: "t-SNE map of " + s.Title, Note: fmt.Sprintf("%d items, KL %.3f", n, kl)})
			})
	}
	progress(e.Name+": gate", 0)
	if g := e.Gate; g != nil && len(g.Subcats) > 0 && g.Spaces > 0 {
		name := prefix + "gate.png"
		plot(name, "gate", func() error { return gatePlot(dir, name, g) }, func(png string) { sec.GatePNG = png })
	}
	if err := finish(); err != nil {
		return nil, err
	}
	progress(e.Name+": gate", 1)
	return sec, nil
}

// WritePage writes dir/index.html: page with sections[i] the pictures of
// page.Experiments[i], by the names of their files in dir. It draws
// nothing: the cheap part of the report, which assembles what every
// experiment's WriteSection drew.
func WritePage(dir string, page *Page, sections []*Section) error {
	if len(sections) != len(page.Experiments) {
		return fmt.Errorf("report: %d sections for %d experiments", len(sections), len(page.Experiments))
	}
	view := &pageView{Page: page, Tables: PaperTables(page.Experiments), DataSetHead: DataSetHeader, DataSets: DataSetRows(page.Experiments)}
	for i, e := range page.Experiments {
		view.Exps = append(view.Exps, &expView{Experiment: e, Section: sections[i]})
	}
	t, err := template.New("index").Funcs(funcs).Parse(pageTemplate)
	if err != nil {
		return fmt.Errorf("report: template: %w", err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, view); err != nil {
		return fmt.Errorf("report: template: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
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
	*Section
}

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

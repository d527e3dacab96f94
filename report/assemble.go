package report

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"monomer/amazon"
	"monomer/models"
)

// The report stage reads a finished run's tables into an Input per
// experiment; Assemble turns it into the experiment's part of the page and
// of the job's metrics table.

// Input is what the report shows of one experiment, as the run's stages
// wrote it.
type Input struct {
	Name, Category, Graph, Features string
	// Models are the experiment's models, in job order.
	Models []string
	// RecommendK is the length of the recommendation lists; MapItems the
	// size of each t-SNE map's sample (report_map_items).
	RecommendK, MapItems int
	Catalog              *Catalog
	Edges                int64
	// FeatureItems is the number of items with a feature vector (the
	// features stage's feature_items); 0 when not known (the features
	// stage never passes on none).
	FeatureItems int
	// Metrics are the evaluate stage's rows: every split at the chosen λ,
	// and the validation error of every other grid point.
	Metrics []Metric
	// Flags name what is degenerate about each model's chosen fit
	// (models.GridPoint.Flags).
	Flags map[string][]string
	// Claims are the recommend stage's measures, by model.
	Claims map[string]Claims
	// Fits are the learned models' training records, by model.
	Fits map[string]*Fit
	// Trace is the train nodes' iterations, Model naming the model ("" in
	// a trace without a model column).
	Trace []TracePoint
	// Recommendations are the recommend stage's lists, in its order; nil
	// where it wrote none.
	Recommendations []Recommendation
	// OpenFeatures opens the experiment's features, and lists the items
	// that have some (ascending), for the projections of the embedding
	// models; close releases them.
	OpenFeatures func() (feat models.Features, cand []int32, close func(), err error)
	// Rand draws the items projected and mapped.
	Rand *rand.Rand
	// Slices are evaluate's slices.parquet (nil for a run from before
	// it); Reverse the split's reversed test positives.
	Slices  []SliceRow
	Reverse ReverseShare
	// Negatives is the method the negatives stage used, rewire or
	// uniform ("" when unknown): uniform after auto's fallback makes the
	// errors incomparable with rewired experiments', so every table marks
	// it (UniformMark).
	Negatives string
}

// Catalog is the experiment's items, in item order.
type Catalog struct {
	ASIN, Title []string
	Sub         []int32  // subcategory id of each item
	SubNames    []string // subcategory names, by id
}

func (c *Catalog) item(i int32) Item {
	return Item{ASIN: c.ASIN[i], Title: c.Title[i], Subcategory: c.SubNames[c.Sub[i]]}
}

// Metric is one row of the evaluate stage's metrics table.
type Metric struct {
	Model, Split              string
	Error, AUC, LogLikelihood float64
	Pairs                     int64
	Lambda                    float64
	K, N, Iterations          int32
	Selected                  bool
}

// Fit is a learned model's training record as its train node saved it.
type Fit struct {
	C      float64
	Params []models.Param
	// Grid is every λ tried (Lambda, ValidError); Lambda the chosen one.
	Grid   []models.GridPoint
	Lambda float64
	// Gate is how many spaces Monomer's gate uses at the chosen λ (NaN for
	// the other models).
	Gate models.GateUse
}

// Recommendation is one row of the recommend stage's lists.
type Recommendation struct {
	Model, Query, Item string
	Prob, Dist         float64
	Same               bool
	Space              int
}

// JobMetric is one row of the job's metrics table: an experiment's metric
// at the chosen λ beside the paper's figure (NaN where it has none), with
// the model's recommendation claims on its test row (NaN elsewhere).
type JobMetric struct {
	Experiment, Dataset, Graph, Features string
	// Negatives is the method the negatives stage used (Input.Negatives).
	Negatives string
	Metric
	PaperError float64
	Claims     Claims
}

// Assembled is one experiment's part of the report.
type Assembled struct {
	// Reverse is the warning that many test positives have their reverse
	// in training ("" for none).
	Reverse string
	// FitWarnings say which fits learned next to nothing (fitWarnings).
	FitWarnings []string
	Page        *Experiment
	Metrics     []JobMetric
	// SmallData warns that Monomer and LMT trained on fewer pairs
	// (TrainPairs, Monomer's) than the learning curve's Crossover for the
	// features; "" otherwise.
	SmallData             string
	TrainPairs, Crossover int64
	// Coverage warns that an embeddings file covered fewer than half of
	// the items (LowCoverage); "" otherwise.
	Coverage string
}

// Sizes of the report's pictures.
const (
	// projectSample caps the items the report projects for the gate and
	// the dimension tables: projecting all of Women's 660,000 items at
	// F = 4096 would cost minutes a model, and 50,000 items pin both down.
	projectSample = 50_000
	// gateSubcats is the number of largest subcategories on the gate plot.
	gateSubcats = 16
	// dimTopItems is the items listed per embedding dimension, and
	// dimTopDims the dimensions listed at most.
	dimTopItems, dimTopDims = 3, 20
	// sideBySide is the number of queries shown with both lists.
	sideBySide = 4
)

// monomerCrossover is, per feature type, the number of training pairs
// where Monomer overtook LMT on issue 28's learning curve
// (models.TestLearningCurve: synth's Men top at F = 256, LMT K 40 against
// Monomer K 8, N 4, λ from {1e-5, 1e-4, 1e-3}, seeds 1-3;
// docs/notes/2026-11-25-learning-curve.md): the smallest size measured from which on Monomer's
// mean test error is below LMT's at every larger size. Image: 1,000
// (−0.008; +0.005 at 500); bag of words: 8,000 (−0.017; +0.006 at 4,000,
// +0.033 at 2,000). Embeddings a user brought have no curve of their own
// (their kind and dimension vary): they take the image figure, dense
// vectors like image features, and the warning says so.
var monomerCrossover = map[string]int64{"image": 1000, "bow": 8000, "embeddings": 1000}

// crossoverSource is the features whose curve gave a kind's crossover,
// where it is another kind's.
var crossoverSource = map[string]string{"embeddings": "image"}

// smallDataWarning says when an experiment of features training models
// trains Monomer and LMT on trainPairs, fewer pairs than monomerCrossover,
// "" otherwise.
func smallDataWarning(name, features string, ms []string, trainPairs int64) string {
	min, ok := monomerCrossover[features]
	if !ok || trainPairs == 0 || trainPairs >= min || !slices.Contains(ms, models.ModelLMT) {
		return ""
	}
	measured, note := features, ""
	if src, ok := crossoverSource[features]; ok {
		measured, note = src, fmt.Sprintf(" (the %s figure, not measured for %s)", src, features)
	}
	return fmt.Sprintf("%s: %d training pairs, below the %d%s from which Monomer beat LMT on planted %s data with rewired negatives (docs/notes/2026-11-25-learning-curve.md): there, with fewer pairs, Monomer's N+1 embeddings and gate were fitted from too little data and LMT did as well or better, so this comparison may reflect the data size more than the models",
		name, trainPairs, min, note, measured)
}

// title is the report's name of model (models.Model.Title), "" for a model
// the registry does not have.
func title(model string) string {
	m, err := models.Lookup(model)
	if err != nil {
		return ""
	}
	return m.Title
}

// The markers of degenerate fits in the report's tables, with their legend.
var flagMarks = []struct{ flag, mark, legend string }{
	{models.FlagConstant, "†", fmt.Sprintf("constant predictor: the chosen fit's validation probabilities span less than %g, so it predicts the same for every pair", models.ConstantSpread)},
	{models.FlagEarlyLineSearchEnd, "‡", fmt.Sprintf("L-BFGS stopped on a line-search failure in its first %d iterations", models.EarlyStopIters)},
	{models.FlagKeptStart, "§", "no iteration beat the random starting point on validation, so the start was kept"},
}

// marks returns the markers of flags, " †" or "".
func marks(flags []string) string {
	var b strings.Builder
	for _, f := range flagMarks {
		if slices.Contains(flags, f.flag) {
			b.WriteString(f.mark)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return " " + b.String()
}

// UniformMark marks, in every table of the report, an experiment whose
// negatives are uniform (negatives: uniform, or auto's fallback).
const UniformMark = "¶"

// UniformLegend is the legend of UniformMark, added to the markers' on a
// page with an experiment it marks.
func UniformLegend() string {
	return fmt.Sprintf("%s after an experiment: its negatives are uniform random pairs, not rewired, so its errors are not comparable with the others' (metrics.parquet, column negatives).", UniformMark)
}

// MarkerLegend is the legend of the markers on degenerate fits' cells
// (Page.Markers).
func MarkerLegend() string {
	var b strings.Builder
	for _, f := range flagMarks {
		fmt.Fprintf(&b, "%s %s. ", f.mark, f.legend)
	}
	b.WriteString("The train stage's WARN lines and fits.parquet (columns valid_spread, flags) name every λ affected.")
	return b.String()
}

// Assemble lays out one experiment: its rows of the job's metrics table
// and its part of the page, projecting items for the maps, the gate and
// the dimension tables when an embedding model was trained.
func Assemble(in *Input) (*Assembled, error) {
	paper, hasPaper := PaperFor(in.Category, in.Features)
	// The data set's name, the same in tables.md and metrics.parquet: the
	// paper's where it has the category, else the category's last level.
	dataset := paper.Dataset
	if !hasPaper {
		levels := amazon.CategoryPrefix(in.Category)
		dataset = levels[len(levels)-1]
	}
	paperError := func(model string) float64 {
		if v, ok := paper.ErrorPct[in.Graph][model]; hasPaper && ok {
			return v / 100
		}
		return math.NaN()
	}
	a := &Assembled{Crossover: monomerCrossover[in.Features]}
	for _, m := range in.Metrics {
		if !m.Selected {
			continue
		}
		if m.Split == "train" && m.Model == models.ModelMonomer {
			a.TrainPairs = m.Pairs
		}
		jm := JobMetric{Experiment: in.Name, Dataset: dataset, Graph: in.Graph, Features: in.Features, Negatives: in.Negatives, Metric: m,
			PaperError: math.NaN(), Claims: nanClaims()}
		if m.Split == "test" {
			jm.PaperError = paperError(m.Model)
			if c, ok := in.Claims[m.Model]; ok {
				jm.Claims = c
			}
		}
		a.Metrics = append(a.Metrics, jm)
	}
	a.SmallData = smallDataWarning(in.Name, in.Features, in.Models, a.TrainPairs)

	e := &Experiment{Name: in.Name, Graph: in.Graph, Features: in.Features, Dataset: dataset,
		Items: len(in.Catalog.ASIN), Subcategories: len(in.Catalog.SubNames), Edges: in.Edges, K: in.RecommendK}
	a.Page = e
	if a.SmallData != "" {
		e.Warnings = append(e.Warnings, a.SmallData)
	}
	if n := len(in.Catalog.ASIN); in.Features == "embeddings" && in.FeatureItems > 0 && LowCoverage(in.FeatureItems, n) {
		a.Coverage = fmt.Sprintf("%s: the embeddings file has vectors for %d of the %d items in scope (%.1f %%); the models were trained and evaluated on those items alone",
			in.Name, in.FeatureItems, n, 100*float64(in.FeatureItems)/float64(n))
		e.Warnings = append(e.Warnings, a.Coverage)
	}
	if hasPaper {
		e.PaperItems, e.PaperSubcats, e.PaperEd = paper.Items, paper.Subcats, paper.Edges[in.Graph]
	}
	e.Models = modelResults(in, paperError)
	var warn string
	e.ReverseNote, warn = reverseNote(in.Name, in.Reverse)
	if warn != "" {
		e.Warnings = append(e.Warnings, warn)
		a.Reverse = warn
	}
	e.SliceTables, e.HeteroPoints = sliceTables(in.Slices)
	if in.Negatives == "uniform" {
		e.Uniform = true
		e.Warnings = append(e.Warnings, fmt.Sprintf("%s: the negatives are uniform random pairs, not the paper's degree-preserving rewiring (%s in the tables): its errors are not comparable with a rewired experiment's, as uniform negatives are easier to tell from related pairs", in.Name, UniformMark))
	}
	a.FitWarnings = fitWarnings(in)
	e.Warnings = append(e.Warnings, a.FitWarnings...)
	if c, ok := in.Claims[models.PopularityName]; ok {
		e.Baseline = &c
	}
	for _, m := range in.Models {
		f := in.Fits[m]
		if f == nil {
			continue
		}
		for _, g := range f.Grid {
			e.Fits = append(e.Fits, FitPoint{Model: title(m), Lambda: g.Lambda, ValidError: g.ValidError, Selected: g.Lambda == f.Lambda})
		}
	}
	for _, t := range in.Trace {
		t.Model = cmp.Or(title(t.Model), t.Model, "training")
		e.Trace = append(e.Trace, t)
	}
	e.SubNames = in.Catalog.SubNames
	if err := spaces(in, e); err != nil {
		return nil, err
	}
	e.Queries = queries(in)
	return a, nil
}

func nanClaims() Claims {
	nan := math.NaN()
	return Claims{Same: nan, Distinct: nan, Coverage: nan, Gini: nan, HitRate: nan, Recall: nan, CoverageCross: nan, GiniCross: nan,
		NDCG: nan, MRR: nan, TopShare: nan}
}

// modelResults are the table rows of the models evaluated, in the paper's
// column order, from the metrics at the chosen λ.
func modelResults(in *Input, paperError func(string) float64) []ModelResult {
	var out []ModelResult
	for _, m := range models.ByColumn() {
		if !slices.ContainsFunc(in.Metrics, func(r Metric) bool { return r.Model == m.Name }) {
			continue
		}
		mr := ModelResult{Model: m.Name, Title: m.Title, Marks: marks(in.Flags[m.Name]), TestError: math.NaN(),
			PaperError: paperError(m.Name), AUC: math.NaN(), Lambda: math.NaN(), Valid: math.NaN()}
		for _, r := range in.Metrics {
			if r.Model != m.Name || !r.Selected {
				continue
			}
			switch r.Split {
			case "test":
				mr.TestError, mr.AUC, mr.Lambda = r.Error, r.AUC, r.Lambda
			case "valid":
				mr.Valid = r.Error
			}
		}
		if c, ok := in.Claims[m.Name]; ok {
			mr.Claims = &c
		}
		out = append(out, mr)
	}
	return out
}

// embedders are the registered models that map items into embedding
// spaces, in the paper's column order (LMT, Monomer).
func embedders() []models.Model {
	return slices.DeleteFunc(models.ByColumn(), func(m models.Model) bool { return !m.Embeds })
}

// spaces projects the items for the maps, the gate and the dimension
// tables (the embedding models only; absent ones leave their parts out).
func spaces(in *Input, e *Experiment) error {
	var trained []models.Model
	for _, m := range embedders() {
		if in.Fits[m.Name] != nil {
			trained = append(trained, m)
		}
	}
	if len(trained) == 0 {
		return nil
	}
	feat, cand, closeFeat, err := in.OpenFeatures()
	if err != nil {
		return err
	}
	defer closeFeat()
	proj := models.SampleItems(in.Rand, cand, projectSample)
	sample := models.SampleItems(in.Rand, proj, in.MapItems)
	// Rows of sample within the projected items.
	at := make([]int, len(sample))
	for i, s := range sample {
		at[i], _ = slices.BinarySearch(proj, s)
	}
	sub := make([]int, len(sample))
	for i, x := range sample {
		sub[i] = int(in.Catalog.Sub[x])
	}
	var dimSource *models.Projection
	var dimBlock, dimTitle string
	for _, m := range trained {
		f := in.Fits[m.Name]
		fit, err := models.NewFit(m.Scorer, f.C, f.Params)
		if err != nil {
			return err
		}
		p, err := fit.Project(feat, proj)
		if err != nil {
			return err
		}
		blocks, titles := []string{"E"}, []string{m.Title}
		if m.Spaces() {
			blocks, titles = nil, nil
			for k := 1; k <= fit.N; k++ {
				blocks = append(blocks, fmt.Sprintf("E%d", k))
				titles = append(titles, fmt.Sprintf("%s space %d", m.Title, k))
			}
			e.Gate = gateBySubcategory(p, in.Catalog, fit.N)
			e.Gate.UsedSpaces, e.Gate.Routes = f.Gate.Spaces, f.Gate.Routes
		}
		for bi, b := range blocks {
			s := Space{Title: titles[bi], Dim: fit.K, Sub: sub}
			for _, row := range at {
				s.Vectors = append(s.Vectors, p.Block(row, b)...)
			}
			e.Spaces = append(e.Spaces, s)
		}
		dimSource, dimBlock, dimTitle = p, blocks[0], titles[0]
	}
	e.DimTops = dimTops(dimSource, dimBlock, dimTitle, in.Catalog)
	return nil
}

// gateBySubcategory is the mean P(k|x) over each of the largest
// subcategories' items.
func gateBySubcategory(p *models.Projection, c *Catalog, n int) *Gate {
	sums := map[int32][]float64{}
	count := map[int32]int{}
	for r, x := range p.Items {
		s := c.Sub[x]
		if sums[s] == nil {
			sums[s] = make([]float64, n)
		}
		for k, v := range p.Gate(r) {
			sums[s][k] += v
		}
		count[s]++
	}
	var subs []int32
	for s := range sums {
		subs = append(subs, s)
	}
	// Largest first (ties by name), then shown by name.
	slices.SortFunc(subs, func(a, b int32) int {
		return cmp.Or(cmp.Compare(count[b], count[a]), cmp.Compare(a, b))
	})
	subs = subs[:min(len(subs), gateSubcats)]
	slices.Sort(subs)
	g := &Gate{Spaces: n}
	for _, s := range subs {
		mean := make([]float64, n)
		for k, v := range sums[s] {
			mean[k] = v / float64(count[s])
		}
		g.Subcats = append(g.Subcats, c.SubNames[s])
		g.Items = append(g.Items, count[s])
		g.Mean = append(g.Mean, mean)
	}
	return g
}

// dimTops lists, per dimension of one space, the items with the largest
// value (ties by item index).
func dimTops(p *models.Projection, block, title string, c *Catalog) *DimTops {
	if p == nil || len(p.Items) == 0 {
		return nil
	}
	dims := min(len(p.Block(0, block)), dimTopDims)
	dt := &DimTops{Space: title}
	for _, top := range topRows(len(p.Items), dims, dimTopItems, func(r int) []float64 { return p.Block(r, block) }) {
		var row []Item
		for _, r := range top {
			row = append(row, c.item(p.Items[r]))
		}
		dt.Dims = append(dt.Dims, row)
	}
	return dt
}

// topRows returns, for each of the first dims columns of n rows, the at
// most k rows with the largest value there, largest first and ties by row
// index (NaN below every number, as cmp.Compare orders): what a stable
// sort of the rows by the column, descending, cut at k gives, in one pass
// over the rows instead of a sort per column (20 sorts of 50,000 rows
// were a serial second of Electronics' report).
func topRows(n, dims, k int, row func(r int) []float64) [][]int {
	tops := make([][]int, dims)
	vals := make([][]float64, dims) // vals[d][j] is row tops[d][j]'s value
	for r := range n {
		v := row(r)
		for d := range dims {
			x, top := v[d], vals[d]
			// r follows every row kept, so it goes before the first one it
			// beats strictly.
			j := len(top)
			for j > 0 && cmp.Compare(x, top[j-1]) > 0 {
				j--
			}
			if j == k {
				continue
			}
			if len(top) < k {
				tops[d], vals[d] = append(tops[d], 0), append(vals[d], 0)
			}
			copy(tops[d][j+1:], tops[d][j:])
			copy(vals[d][j+1:], vals[d][j:])
			tops[d][j], vals[d][j] = r, x
		}
	}
	return tops
}

// queries picks the first queries of the recommendations with the
// embedding models' lists side by side (either alone if the other was not
// trained).
func queries(in *Input) []QueryLists {
	emb := embedders()
	type key struct{ model, query string }
	lists := map[key][]RecItem{}
	var order []string
	seen := map[string]bool{}
	row := make(map[string]int32, len(in.Catalog.ASIN))
	for i, a := range in.Catalog.ASIN {
		row[a] = int32(i)
	}
	for _, r := range in.Recommendations {
		if !slices.ContainsFunc(emb, func(m models.Model) bool { return m.Name == r.Model }) {
			continue
		}
		k := key{r.Model, r.Query}
		if !seen[r.Query] {
			seen[r.Query] = true
			order = append(order, r.Query)
		}
		lists[k] = append(lists[k], RecItem{Item: in.Catalog.item(row[r.Item]), Prob: r.Prob, Dist: r.Dist, Space: r.Space, Same: r.Same})
	}
	var out []QueryLists
	for _, q := range order {
		if len(out) == sideBySide {
			break
		}
		ql := QueryLists{Query: in.Catalog.item(row[q])}
		for _, m := range emb {
			if len(lists[key{m.Name, q}]) == 0 {
				continue
			}
			l := RecList{Model: m.Title, Items: lists[key{m.Name, q}]}
			subs := map[string]bool{}
			for _, x := range l.Items {
				subs[x.Subcategory] = true
			}
			l.Distinct = len(subs)
			ql.Lists = append(ql.Lists, l)
		}
		out = append(out, ql)
	}
	return out
}

// LowCoverage reports whether features cover too few of an experiment's
// items to stand for it: fewer than half of them have a vector (kept of
// items). The features stage warns, and the report says so.
func LowCoverage(kept, items int) bool { return 2*kept < items }

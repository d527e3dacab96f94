package stages

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"

	"monomer/models"
	"monomer/pipeline"
	"monomer/report"
	"monomer/schema"
)

// projectSample caps the items the report projects for the gate and the
// dimension tables: projecting all of Women's 660,000 items at F = 4096
// would cost minutes a model, and 50,000 items pin both down.
const projectSample = 50_000

// Sizes of the report's pictures.
const (
	// gateSubcats is the number of largest subcategories on the gate plot.
	gateSubcats = 16
	// dimTopItems is the items listed per embedding dimension, and
	// dimTopDims the dimensions listed at most.
	dimTopItems, dimTopDims = 3, 20
	// sideBySide is the number of queries shown with both lists.
	sideBySide = 4
)

// reportPage gathers what report/index.html and tables.md show.
func reportPage(env *pipeline.Env, p reportParams, reports []expReport) (*report.Page, error) {
	page := &report.Page{Job: p.Job, Markers: markerLegend()}
	bar := env.Track("report: projecting items", int64(len(reports)))
	defer bar.Done()
	for i := range reports {
		pipeline.Describe(bar, "report: projecting the items of "+reports[i].r.Name)
		e, err := reportExperiment(env, &reports[i])
		if err != nil {
			return nil, fmt.Errorf("stages: report %s: %w", reports[i].r.Name, err)
		}
		page.Experiments = append(page.Experiments, e)
		bar.Add(1)
	}
	return page, nil
}

func reportExperiment(env *pipeline.Env, er *expReport) (*report.Experiment, error) {
	r := er.r
	e := &report.Experiment{Name: r.Name, Graph: r.Graph, Features: r.Features, Dataset: er.dataset(),
		Items: er.items, Subcategories: er.subcats, Edges: er.edges, K: r.Settings.RecommendK}
	if w := er.smallDataWarning(); w != "" {
		e.Warnings = append(e.Warnings, w)
	}
	if er.hasPaper {
		e.PaperItems, e.PaperSubcats, e.PaperEd = er.paper.items, er.paper.subcats, er.paper.edges[r.Graph]
	}
	in := expInputs(env, r.Name)
	metrics, err := in.file("evaluate", "metrics.parquet")
	if err != nil {
		return nil, err
	}
	if err := reportModels(e, er, metrics); err != nil {
		return nil, err
	}
	fits, err := readTrainedFits(in, r.Models)
	if err != nil {
		return nil, err
	}
	for _, m := range r.Models {
		f := fits[m]
		if f == nil {
			continue
		}
		for _, g := range f.grid {
			e.Fits = append(e.Fits, report.FitPoint{Model: modelTitle[m], Lambda: g.Lambda, ValidError: g.ValidError, Selected: g.Lambda == f.lambda})
		}
	}
	for _, m := range learned(r.Models) {
		dir, err := trainDir(in, m)
		if err != nil {
			return nil, err
		}
		e.Trace = append(e.Trace, readTrace(filepath.Join(dir, "trace.parquet"))...)
	}

	it, err := readItems(in)
	if err != nil {
		return nil, err
	}
	titles, err := readTitles(in)
	if err != nil {
		return nil, err
	}
	e.SubNames = it.subName
	item := func(i int32) report.Item {
		return report.Item{ASIN: it.asin[i], Title: titles[i], Subcategory: it.subName[it.sub[i]]}
	}
	if err := reportSpaces(env, in, e, fits, it, item, r.Settings.ReportMapItems); err != nil {
		return nil, err
	}
	recs, err := in.file("recommend", "recommendations.parquet")
	if err != nil {
		return nil, err
	}
	e.Queries, err = reportQueries(recs, it, item)
	return e, err
}

// reportModels fills the model rows from evaluate's metrics at the chosen λ.
func reportModels(e *report.Experiment, er *expReport, path string) error {
	return schema.Read(path, func(c *schema.Cols) error {
		model, split, errs, auc, lambda, sel := c.Strings("model"), c.Strings("split"), c.Float64s("error"), c.Float64s("auc"), c.Float64s("lambda"), c.Bools("selected")
		if c.Err() != nil {
			return nil
		}
		for _, m := range modelOrder {
			if !slices.Contains(model, m) {
				continue
			}
			mr := report.ModelResult{Model: m, Title: modelTitle[m], Marks: er.marks(m), TestError: math.NaN(), PaperError: math.NaN(), AUC: math.NaN(), Lambda: math.NaN(), Valid: math.NaN()}
			for i := range model {
				if model[i] != m || !sel[i] {
					continue
				}
				switch split[i] {
				case "test":
					mr.TestError, mr.AUC, mr.Lambda = errs[i], auc[i], lambda[i]
				case "valid":
					mr.Valid = errs[i]
				}
			}
			if p, ok := er.paper.errorPct[er.r.Graph][m]; er.hasPaper && ok {
				mr.PaperError = p / 100
			}
			if rm, ok := er.rec[m]; ok {
				mr.Claims = &report.Claims{Same: rm.same, Distinct: rm.distinct, Coverage: rm.coverage, Gini: rm.gini,
					CoverageCross: rm.coverageCross, GiniCross: rm.giniCross, HitRate: rm.hit, Recall: rm.recall,
					Queries: rm.queries, TestQueries: rm.testQueries}
			}
			e.Models = append(e.Models, mr)
		}
		return nil
	})
}

// readTrace reads a train node's per-iteration record if there is one:
// columns iteration, objective and valid_error, and model and lambda when
// the trace holds several fits (without them it is one curve). A missing or
// unreadable trace leaves the curves out of the page.
func readTrace(path string) []report.TracePoint {
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	tb, err := schema.Open(path)
	if err != nil {
		return nil
	}
	defer tb.Release()
	obj, err1 := tb.Float64s("objective")
	verr, err2 := tb.Float64s("valid_error")
	if err1 != nil || err2 != nil {
		return nil
	}
	var iter []int64
	if v, err := tb.Int32s("iteration"); err == nil {
		for _, x := range v {
			iter = append(iter, int64(x))
		}
	} else if iter, err = tb.Int64s("iteration"); err != nil {
		return nil
	}
	model, err := tb.Strings("model")
	if err != nil {
		model = make([]string, len(obj))
	}
	lambda, err := tb.Float64s("lambda")
	if err != nil {
		lambda = make([]float64, len(obj))
	}
	out := make([]report.TracePoint, len(obj))
	for i := range obj {
		title := modelTitle[model[i]]
		if title == "" {
			title = cmp.Or(model[i], "training")
		}
		out[i] = report.TracePoint{Model: title, Lambda: lambda[i], Iteration: int(iter[i]), Objective: obj[i], ValidError: verr[i]}
	}
	return out
}

// reportSpaces projects the items for the maps, the gate and the dimension
// tables (LMT and Monomer only; absent models leave their parts out).
// mapItems is the size of each t-SNE map's sample (report_map_items).
func reportSpaces(env *pipeline.Env, in inputs, e *report.Experiment, fits map[string]*savedFit, it *items, item func(int32) report.Item, mapItems int) error {
	if fits["lmt"] == nil && fits["monomer"] == nil {
		return nil
	}
	xe, err := openRecExperiment(in, e.Features, slices.Sorted(maps.Keys(fits)))
	if err != nil {
		return err
	}
	defer xe.close()
	rng := env.RNG("map sample/" + e.Name)
	proj := sample(rng, xe.cand, projectSample)
	sample := sample(rng, proj, mapItems)
	// Rows of sample within the projected items.
	at := make([]int, len(sample))
	for i, s := range sample {
		at[i], _ = slices.BinarySearch(proj, s)
	}
	subOf := func(items []int32) []int {
		out := make([]int, len(items))
		for i, x := range items {
			out[i] = int(it.sub[x])
		}
		return out
	}
	var dimSource *models.Projection
	var dimBlock, dimTitle string
	for _, m := range []string{"lmt", "monomer"} {
		f := fits[m]
		if f == nil {
			continue
		}
		fit, err := models.NewFit(m, f.c, f.params)
		if err != nil {
			return err
		}
		p, err := fit.Project(xe.feat, proj)
		if err != nil {
			return err
		}
		blocks := []string{"E"}
		if m == "monomer" {
			blocks = nil
			for k := 1; k <= fit.N; k++ {
				blocks = append(blocks, fmt.Sprintf("E%d", k))
			}
			e.Gate = gateBySubcategory(p, it, fit.N)
			e.Gate.UsedSpaces, e.Gate.Routes = f.gate.Spaces, f.gate.Routes
		}
		for bi, b := range blocks {
			s := report.Space{Title: modelTitle[m], Dim: fit.K, Sub: subOf(sample)}
			if m == "monomer" {
				s.Title = fmt.Sprintf("Monomer space %d", bi+1)
			}
			for _, row := range at {
				s.Vectors = append(s.Vectors, p.Block(row, b)...)
			}
			e.Spaces = append(e.Spaces, s)
		}
		dimSource, dimBlock, dimTitle = p, blocks[0], modelTitle[m]
		if m == "monomer" {
			dimTitle = "Monomer space 1"
		}
	}
	e.DimTops = dimTops(dimSource, dimBlock, dimTitle, item)
	return nil
}

// gateBySubcategory is the mean P(k|x) over each of the largest
// subcategories' items.
func gateBySubcategory(p *models.Projection, it *items, n int) *report.Gate {
	sums := map[int32][]float64{}
	count := map[int32]int{}
	for r, x := range p.Items {
		s := it.sub[x]
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
	g := &report.Gate{Spaces: n}
	for _, s := range subs {
		mean := make([]float64, n)
		for k, v := range sums[s] {
			mean[k] = v / float64(count[s])
		}
		g.Subcats = append(g.Subcats, it.subName[s])
		g.Items = append(g.Items, count[s])
		g.Mean = append(g.Mean, mean)
	}
	return g
}

// dimTops lists, per dimension of one space, the items with the largest
// value (ties by item index).
func dimTops(p *models.Projection, block, title string, item func(int32) report.Item) *report.DimTops {
	if p == nil || len(p.Items) == 0 {
		return nil
	}
	k := len(p.Block(0, block))
	dt := &report.DimTops{Space: title}
	order := make([]int, len(p.Items))
	for d := range min(k, dimTopDims) {
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			return cmp.Compare(p.Block(b, block)[d], p.Block(a, block)[d])
		})
		var row []report.Item
		for _, r := range order[:min(dimTopItems, len(order))] {
			row = append(row, item(p.Items[r]))
		}
		dt.Dims = append(dt.Dims, row)
	}
	return dt
}

// reportQueries picks the first queries of the recommendations table with
// LMT's and Monomer's lists (either alone if the other was not trained).
func reportQueries(path string, it *items, item func(int32) report.Item) ([]report.QueryLists, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	type key struct{ model, query string }
	lists := map[key][]report.RecItem{}
	var queries []string
	seen := map[string]bool{}
	row := it.rows()
	err := schema.Read(path, func(c *schema.Cols) error {
		model, query, itm, prob, dist := c.Strings("model"), c.Strings("query"), c.Strings("item"), c.Float64s("probability"), c.Float64s("distance")
		same, space := c.Bools("same_subcategory"), c.Int32s("space")
		if c.Err() != nil {
			return nil
		}
		for i := range model {
			if model[i] != "lmt" && model[i] != "monomer" {
				continue
			}
			k := key{model[i], query[i]}
			if !seen[query[i]] {
				seen[query[i]] = true
				queries = append(queries, query[i])
			}
			lists[k] = append(lists[k], report.RecItem{Item: item(row[itm[i]]), Prob: prob[i], Dist: dist[i], Space: int(space[i]), Same: same[i]})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []report.QueryLists
	for _, q := range queries {
		if len(out) == sideBySide {
			break
		}
		ql := report.QueryLists{Query: item(row[q])}
		for _, m := range []string{"lmt", "monomer"} {
			if len(lists[key{m, q}]) == 0 {
				continue
			}
			l := report.RecList{Model: modelTitle[m], Items: lists[key{m, q}]}
			subs := map[string]bool{}
			for _, x := range l.Items {
				subs[x.Subcategory] = true
			}
			l.Distinct = len(subs)
			ql.Lists = append(ql.Lists, l)
		}
		out = append(out, ql)
	}
	return out, nil
}

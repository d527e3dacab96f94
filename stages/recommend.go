package stages

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"monomer/graph"
	"monomer/internal/nearest"
	"monomer/job"
	"monomer/models"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// Recommend answers, for a deterministic sample of query items and every
// trained distance model (wnn, lda, lmt, monomer), "which k items would it
// recommend?": the exact top-k by P(related) over every item with features,
// whatever its subcategory. It writes recommendations.parquet and
// recommend_metrics.parquet, the paper's qualitative claims as numbers
// (schema.RecommendMetrics), among them the coverage of the same queries'
// cross-subcategory lists (the query's own subcategory left out), the
// setting of the paper's "limited coverage" claim.
type Recommend struct{}

var _ ExpStage[recommendParams] = Recommend{}

func (Recommend) Name() string { return "recommend" }
func (Recommend) Deps() []string {
	return []string{"ingest", "features", "negatives", "split", "train"}
}

// Features is the kind of features the models retrieve by.
type recommendParams struct {
	Models   []string `json:"models"`
	Queries  int      `json:"recommend_queries"`
	K        int      `json:"recommend_k"`
	Features string   `json:"features"`
}

func (Recommend) Params(e *job.Resolved) recommendParams {
	return recommendParams{e.Models, e.Settings.RecommendQueries, e.Settings.RecommendK, e.Features}
}

// retrievable reports whether a model has a distance to retrieve by (CT
// ranks subcategories, not items).
func retrievable(model string) bool {
	m, err := models.Lookup(model)
	return err == nil && !m.Counted
}

// RetrievableNames lists the models that rank items, as "wnn, lda, lmt or
// monomer" (in the column order of the paper's tables).
func RetrievableNames() string {
	var names []string
	for _, m := range models.ByColumn() {
		if !m.Counted {
			names = append(names, m.Name)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// recExperiment is what retrieval needs of one experiment's outputs.
type recExperiment struct {
	it    *items
	feat  models.Features
	cand  []int32 // items with features, ascending
	fits  map[string]*savedFit
	close func()
	in    inputs
}

// openRecExperiment reads what retrieval needs of the experiment in reads:
// its items, features (of kind) and the fits of ms.
func openRecExperiment(ctx context.Context, in inputs, kind string, ms []string) (*recExperiment, error) {
	it, err := readItems(ctx, in)
	if err != nil {
		return nil, err
	}
	keep, err := readFeatureItems(ctx, in, len(it.asin))
	if err != nil {
		return nil, err
	}
	fits, err := readTrainedFits(ctx, in, ms)
	if err != nil {
		return nil, err
	}
	feat, _, closeFeat, err := loadFeatures(ctx, in, kind, false)
	if err != nil {
		return nil, err
	}
	e := &recExperiment{it: it, feat: feat, fits: fits, close: closeFeat, in: in}
	for i, k := range keep {
		if k {
			e.cand = append(e.cand, int32(i))
		}
	}
	return e, nil
}

// retriever rebuilds model's fit from its train node's tables.
func (e *recExperiment) retriever(ctx context.Context, model string) (*models.Retriever, error) {
	s := e.fits[model]
	if s == nil {
		return nil, fmt.Errorf("stages: recommend: no trained %s", model)
	}
	m := registered(model)
	f := e.feat
	if m.Topics {
		var err error
		if f, err = readTopics(ctx, e.in, model, len(e.it.asin)); err != nil {
			return nil, err
		}
	}
	fit, err := models.NewFit(m.Scorer, s.c, s.params)
	if err != nil {
		return nil, err
	}
	return models.NewRetriever(fit, f, e.cand)
}

type recTable struct {
	model, query, item  []string
	rank, space, qi, ii []int32
	prob, dist          []float64
	same                []bool
}

type recMetricTable struct {
	model                     []string
	queries, k, cand, testQ   []int32
	same, distinct, cov, gini []float64
	covCross, giniCross       []float64
	hit, recall, ndcg, mrr    []float64
	topShare                  []float64
	topItem                   []string
	dominated                 []bool
}

// add appends one model's row: its lists and cross-subcategory lists of
// the sampled queries, and its held-out scores over the test queries.
func (met *recMetricTable) add(model string, it *items, cand, queries []int32, lists, cross [][]models.Hit, k, testQueries int, h heldOutScores) {
	var same, distinct float64
	var entries int
	for qi, q := range queries {
		subs := map[int32]bool{}
		for _, h := range lists[qi] {
			if it.sub[h.Item] == it.sub[q] {
				same++
			}
			subs[it.sub[h.Item]] = true
			entries++
		}
		distinct += float64(len(subs))
	}
	cov, gini := coverage(lists, cand)
	covCross, giniCross := coverage(cross, cand)
	share, top := topItemShare(lists)
	met.model = append(met.model, model)
	met.queries = append(met.queries, int32(len(queries)))
	met.k = append(met.k, int32(k))
	met.cand = append(met.cand, int32(len(cand)))
	met.same = append(met.same, ratio(same, float64(entries)))
	met.distinct = append(met.distinct, ratio(distinct, float64(len(queries))))
	met.cov = append(met.cov, cov)
	met.gini = append(met.gini, gini)
	met.covCross = append(met.covCross, covCross)
	met.giniCross = append(met.giniCross, giniCross)
	met.testQ = append(met.testQ, int32(testQueries))
	met.hit = append(met.hit, h.HitRate)
	met.recall = append(met.recall, h.Recall)
	met.ndcg = append(met.ndcg, h.NDCG)
	met.mrr = append(met.mrr, h.MRR)
	met.topShare = append(met.topShare, share)
	name := ""
	if top >= 0 {
		name = it.asin[top]
	}
	met.topItem = append(met.topItem, name)
	met.dominated = append(met.dominated, share > DominantShare)
}

func (Recommend) Run(ctx context.Context, env *pipeline.Env, p recommendParams) (*pipeline.Result, error) {
	e, err := openRecExperiment(ctx, env.InDir, p.Features, p.Models)
	if err != nil {
		return nil, err
	}
	defer e.close()
	pairs, err := readPairs(ctx, env.InDir)
	if err != nil {
		return nil, err
	}
	// Items held out of the run (cold_items) are no part of its
	// catalogue: they are queries of their own evaluation only.
	cold, coldRel, err := readColdItems(ctx, env.InDir, len(e.it.asin))
	if err != nil {
		return nil, err
	}
	if cold != nil {
		e.cand = slices.DeleteFunc(e.cand, func(x int32) bool { return cold[x] })
	}
	k := p.K
	queries := models.SampleItems(env.RNG("queries"), e.cand, p.Queries)
	// Held-out test positives by query, and the positives a model saw.
	test, known := heldOutPairs(pairs, e.cand)
	var withTest []int32
	for x := range test {
		withTest = append(withTest, x)
	}
	slices.Sort(withTest)
	testQueries := models.SampleItems(env.RNG("test_queries"), withTest, p.Queries)

	var ce *coldEval
	if cold != nil {
		ce = newColdEval(env.RNG("cold_queries"), cold, coldRel, e.cand, p.Queries)
	}
	var rec recTable
	var met recMetricTable
	stats := map[string]any{"queries": len(queries), "candidates": len(e.cand), "test_queries": len(testQueries)}
	for _, model := range p.Models {
		if !retrievable(model) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := e.retriever(ctx, model)
		if err != nil {
			return nil, fmt.Errorf("stages: recommend %s: %w", model, err)
		}
		// One scoring pass gives both the plain lists and the paper's
		// cross-category lists (section V): LMT needs the taxonomy filter
		// at test time, so its "limited coverage" is about the latter.
		both, err := r.TopKLists(queries, k, 0, nil, e.it.sameSub)
		if err != nil {
			return nil, fmt.Errorf("stages: recommend %s: %w", model, err)
		}
		lists, cross := both[0], both[1]
		for qi, q := range queries {
			for rank, h := range lists[qi] {
				rec.model = append(rec.model, model)
				rec.query = append(rec.query, e.it.asin[q])
				rec.rank = append(rec.rank, int32(rank+1))
				rec.item = append(rec.item, e.it.asin[h.Item])
				rec.prob = append(rec.prob, h.Prob)
				rec.same = append(rec.same, e.it.sub[h.Item] == e.it.sub[q])
				rec.space = append(rec.space, int32(h.Space))
				rec.dist = append(rec.dist, h.Dist)
				rec.qi = append(rec.qi, q)
				rec.ii = append(rec.ii, h.Item)
			}
		}
		h, err := heldOut(r, testQueries, test, known, k, nil)
		if err != nil {
			return nil, fmt.Errorf("stages: recommend %s: %w", model, err)
		}
		met.add(model, e.it, e.cand, queries, lists, cross, k, len(testQueries), h)
		if ce != nil {
			h, err := heldOut(r, ce.queries, ce.partners, nil, k, nil)
			if err != nil {
				return nil, fmt.Errorf("stages: recommend %s: cold items: %w", model, err)
			}
			ce.add(model, k, len(e.cand), h)
		}
	}
	// The popularity baseline (models.Popularity) on the same queries: the
	// figure a model's lists must beat to be more than the bestsellers.
	pop := models.NewPopularity(models.TrainDegree(pairs, len(e.it.asin)), e.cand)
	popLists := pop.TopK(queries, k, nil)
	popCross := pop.TopK(queries, k, e.it.sameSub)
	popHeld := scoreHeldOut(pop.TopK(testQueries, k+heldOutExtra(testQueries, known), nil), testQueries, test, known, k)
	met.add(PopularityModel, e.it, e.cand, queries, popLists, popCross, k, len(testQueries), popHeld)
	rows := map[string]int64{}
	if ce != nil {
		ce.add(PopularityModel, k, len(e.cand), scoreHeldOut(pop.TopK(ce.queries, k, nil), ce.queries, ce.partners, nil, k))
		n, err := schema.Write(filepath.Join(env.OutDir, coldItemsMetricsFile), ce.met)
		if err != nil {
			return nil, err
		}
		rows["cold_items_metrics"] = n
		stats["cold_items"], stats["cold_queries"] = ce.items, len(ce.queries)
	}
	neg, err := negativesUsed(env.InDir)
	if err != nil {
		return nil, err
	}
	negCol := make([]string, len(met.model))
	for i := range negCol {
		negCol[i] = neg
	}
	var warnings []pipeline.Warning
	for i, m := range met.model {
		if met.dominated[i] && m != PopularityModel {
			warnings = append(warnings, pipeline.Warning{
				Msg:   fmt.Sprintf("%s: one item fills more than %g of the lists", m, DominantShare),
				Attrs: map[string]any{"model": m, "item": met.topItem[i], "share": met.topShare[i]}})
		}
	}
	nr, err := schema.Write(filepath.Join(env.OutDir, "recommendations.parquet"), schema.RecommendationsCols{
		Model: rec.model, Query: rec.query, Rank: rec.rank, Item: rec.item, Probability: rec.prob,
		SameSubcategory: rec.same, Space: rec.space, Distance: rec.dist, QueryIdx: rec.qi, ItemIdx: rec.ii})
	if err != nil {
		return nil, err
	}
	nm, err := schema.Write(filepath.Join(env.OutDir, "recommend_metrics.parquet"), schema.RecommendMetricsCols{
		Model: met.model, Queries: met.queries, K: met.k, Candidates: met.cand, SameSubcategory: met.same,
		DistinctSubcategories: met.distinct, Coverage: met.cov, Gini: met.gini, CoverageCross: met.covCross,
		GiniCross: met.giniCross, TestQueries: met.testQ, HitRate: met.hit, Recall: met.recall,
		NDCG: met.ndcg, MRR: met.mrr, TopItemShare: met.topShare, TopItem: met.topItem, Dominated: met.dominated, Negatives: negCol})
	if err != nil {
		return nil, err
	}
	rows["recommendations"], rows["recommend_metrics"] = nr, nm
	return &pipeline.Result{Rows: rows, Stats: stats, Warnings: warnings}, nil
}

// coldItemsMetricsFile is the recommend stage's table of the items held
// out with cold_items (schema cold_items_metrics).
const coldItemsMetricsFile = "cold_items_metrics.parquet"

// coldEval is the evaluation of the items held out of the run: each is a
// new item whose features are the features stage's row (the row `monomer
// score` computes for the same content, byte for byte: TestScoreInRun…),
// ranked against the catalogue by the same Retriever score builds over the
// run's candidates; its relevant items are its held-out relations' other
// ends in the catalogue (x → y, as test pairs are read).
type coldEval struct {
	items    int               // held out
	queries  []int32           // sampled, with a partner, ascending
	partners map[int32][]int32 // catalogue partners by query
	rels     int64             // distinct (query, partner) pairs
	met      schema.ColdItemsMetricsCols
}

// newColdEval samples up to n of the held-out items (cold) with a
// relation to a candidate of cand as the queries.
func newColdEval(rng *rand.Rand, cold []bool, rel []graph.Edge, cand []int32, n int) *coldEval {
	ce := &coldEval{partners: map[int32][]int32{}}
	for _, c := range cold {
		if c {
			ce.items++
		}
	}
	isCand := make([]bool, len(cold))
	for _, c := range cand {
		isCand[c] = true
	}
	for _, e := range rel {
		if cold[e.Src] && isCand[e.Dst] {
			ce.partners[e.Src] = append(ce.partners[e.Src], e.Dst)
		}
	}
	var with []int32
	for x, ys := range ce.partners {
		slices.Sort(ys)
		ce.partners[x] = slices.Compact(ys)
		with = append(with, x)
	}
	slices.Sort(with)
	ce.queries = models.SampleItems(rng, with, n)
	slices.Sort(ce.queries)
	for _, q := range ce.queries {
		ce.rels += int64(len(ce.partners[q]))
	}
	return ce
}

// add appends model's row.
func (ce *coldEval) add(model string, k, cand int, h heldOutScores) {
	m := &ce.met
	m.Model, m.ColdItems, m.Queries = append(m.Model, model), append(m.ColdItems, int32(ce.items)), append(m.Queries, int32(len(ce.queries)))
	m.Relations, m.K, m.Candidates = append(m.Relations, ce.rels), append(m.K, int32(k)), append(m.Candidates, int32(cand))
	m.HitRate, m.Recall, m.NDCG, m.MRR = append(m.HitRate, h.HitRate), append(m.Recall, h.Recall), append(m.NDCG, h.NDCG), append(m.MRR, h.MRR)
}

// coverage is the share of the candidates in any of lists and the Gini
// coefficient of how often each candidate appears in them.
func coverage(lists [][]models.Hit, cand []int32) (share, gini float64) {
	counts := make(map[int32]int, len(cand))
	for _, l := range lists {
		for _, h := range l {
			counts[h.Item]++
		}
	}
	perItem := make([]float64, len(cand))
	for i, c := range cand {
		perItem[i] = float64(counts[c])
	}
	return ratio(float64(len(counts)), float64(len(cand))), models.Gini(perItem)
}

// PopularityModel is the model column of the popularity baseline's row
// in recommend_metrics (models.Popularity): not a registered model.
const PopularityModel = models.PopularityName

func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// RecommendedItem is one line of a `monomer recommend` answer.
type RecommendedItem struct {
	Rank        int     `json:"rank"`
	ASIN        string  `json:"asin"`
	Title       string  `json:"title"`
	Subcategory string  `json:"subcategory"`
	Probability float64 `json:"probability"`
	Distance    float64 `json:"distance"`
	// Space is Monomer's space that put the item in the list (0 otherwise).
	Space int `json:"space"`
}

// RecommendAnswer is the answer to one query.
type RecommendAnswer struct {
	Experiment  string            `json:"experiment"`
	Model       string            `json:"model"`
	ASIN        string            `json:"asin"`
	Title       string            `json:"title"`
	Subcategory string            `json:"subcategory"`
	Cross       bool              `json:"cross"` // the query's own subcategory left out
	Items       []RecommendedItem `json:"items"`
}

// RecommendOne answers one query from a finished run: the k items model
// recommends for asin among every item of experiment with features, or with
// cross among those outside asin's subcategory (the paper's cross-category
// lists, the taxonomy filter LMT needs). Missing run outputs wrap
// pipeline.ErrUsage; an unknown model or ASIN too.
func RecommendOne(ctx context.Context, runDir, experiment, model, asin string, k int, cross bool) (*RecommendAnswer, error) {
	if k <= 0 {
		return nil, fmt.Errorf("%w: --k %d must be positive", pipeline.ErrUsage, k)
	}
	if _, err := models.Lookup(model); err != nil {
		return nil, fmt.Errorf("%w: --model %s is not a model (use %s)", pipeline.ErrUsage, model, RetrievableNames())
	}
	if !retrievable(model) {
		return nil, fmt.Errorf("%w: --model %s ranks subcategories, not items (use %s)", pipeline.ErrUsage, model, RetrievableNames())
	}
	kind, in, err := finishedRun(runDir, experiment, model)
	if err != nil {
		return nil, err
	}
	e, err := openRecExperiment(ctx, in, kind, []string{model})
	if err != nil {
		return nil, err
	}
	defer e.close()
	q := slices.Index(e.it.asin, asin)
	if q < 0 {
		return nil, noItem(asin, experiment, e.it.asin)
	}
	if _, ok := slices.BinarySearch(e.cand, int32(q)); !ok {
		return nil, fmt.Errorf("%w: item %s has no features in experiment %s", pipeline.ErrUsage, asin, experiment)
	}
	ret, err := e.retriever(ctx, model)
	if err != nil {
		return nil, err
	}
	var skip func(x, y int32) bool
	if cross {
		skip = e.it.sameSub
	}
	lists, err := ret.TopKExcept([]int32{int32(q)}, k, 0, skip)
	if err != nil {
		return nil, err
	}
	titles, err := readTitles(ctx, in)
	if err != nil {
		return nil, err
	}
	ans := &RecommendAnswer{Experiment: experiment, Model: model, ASIN: asin, Title: titles[q], Subcategory: e.it.subName[e.it.sub[q]], Cross: cross}
	for i, h := range lists[0] {
		ans.Items = append(ans.Items, RecommendedItem{Rank: i + 1, ASIN: e.it.asin[h.Item], Title: titles[h.Item],
			Subcategory: e.it.subName[e.it.sub[h.Item]], Probability: h.Prob, Distance: h.Dist, Space: h.Space})
	}
	return ans, nil
}

// finishedRun checks that experiment of runDir has finished its ingest,
// features and train.<model> nodes, and returns the kind of its features
// ("bow" or "image", the dense matrix of image features or embeddings) and
// its inputs. What is missing wraps pipeline.ErrUsage.
func finishedRun(runDir, experiment, model string) (string, inputs, error) {
	if fi, err := os.Stat(runDir); err != nil || !fi.IsDir() {
		return "", nil, fmt.Errorf("%w: %s is not a run directory (run `monomer run` first)", pipeline.ErrUsage, runDir)
	}
	expDir := filepath.Join(runDir, experiment)
	if fi, err := os.Stat(expDir); err != nil || !fi.IsDir() || experiment == "" || strings.ContainsAny(experiment, `/\`) {
		return "", nil, fmt.Errorf("%w: unknown experiment %q; the run directory %s has %s", pipeline.ErrUsage, experiment, runDir, runExperiments(runDir))
	}
	for _, st := range []string{"ingest", "features"} {
		if _, err := os.Stat(filepath.Join(expDir, st, "manifest.json")); err != nil {
			return "", nil, fmt.Errorf("%w: %s: stage %s has not finished (run `monomer run` first)", pipeline.ErrUsage, filepath.Join(expDir, st), st)
		}
	}
	// The models trained are the train.<model> nodes that finished, not
	// a later seed's replicas (train.<model>.s2, job.Job.SeedTag).
	var have []string
	done, _ := filepath.Glob(filepath.Join(expDir, pipeline.PartName(Train{}.Name(), "*"), cache.ManifestName))
	for _, p := range done {
		if m, err := cache.ReadManifest(filepath.Dir(p)); err == nil && m.Inputs.Replica != "" {
			continue
		}
		have = append(have, strings.TrimPrefix(filepath.Base(filepath.Dir(p)), Train{}.Name()+"."))
	}
	slices.Sort(have)
	if !slices.Contains(have, model) {
		return "", nil, fmt.Errorf("%w: experiment %s has no trained %s (trained: %v)", pipeline.ErrUsage, experiment, model, have)
	}
	kind := "bow"
	if _, err := os.Stat(filepath.Join(expDir, "features", imageMatrixFile)); err == nil {
		kind = "image"
	}
	return kind, runInputs(runDir, experiment), nil
}

// runExperiments lists the experiments of a run directory, the
// subdirectories with a finished ingest, as "a, b" ("no experiment" when
// there is none).
func runExperiments(runDir string) string {
	done, _ := filepath.Glob(filepath.Join(runDir, "*", Ingest{}.Name(), cache.ManifestName))
	var names []string
	for _, p := range done {
		names = append(names, filepath.Base(filepath.Dir(filepath.Dir(p))))
	}
	if len(names) == 0 {
		return "no experiment (run `monomer run` first)"
	}
	slices.Sort(names)
	return "experiments " + strings.Join(names, ", ")
}

// readTitles reads the items' titles, in item order (under context.TODO:
// see readItems).
func readTitles(ctx context.Context, in inputs) ([]string, error) {
	path, err := in.file("ingest", "items.parquet")
	if err != nil {
		return nil, err
	}
	var c schema.ItemsCols
	err = schema.ReadFields(ctx, path, &c, &c.Title)
	return c.Title, err
}

// noItem is recommend's error for an asin that is not an item of the
// experiment, naming the item it is a slip of (an ASIN in the wrong case).
func noItem(asin, experiment string, items []string) error {
	hint := ""
	if near, ok := nearest.Slip(asin, items); ok {
		hint = "; did you mean " + near + "?"
	}
	return fmt.Errorf("%w: no item %s in experiment %s%s", pipeline.ErrUsage, asin, experiment, hint)
}

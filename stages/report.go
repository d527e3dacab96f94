package stages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"monomer/job"
	"monomer/models"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/report"
	"monomer/schema"
)

// Report is the job-level stage: one metrics table across experiments,
// report/tables.md laid out like the paper's Tables 2 and 4, with the
// published figures beside ours, and report/index.html, the visual report
// with its PNGs beside it. It reads each experiment's tables into a
// report.Input and writes what package report makes of them
// (report.Assemble, Markdown, Write).
type Report struct{}

var _ JobStage[reportParams] = Report{}

// Publish puts the job-level metrics table at the run directory's root,
// and the paired tests of its models.
func (Report) Publish() []string { return []string{"metrics.parquet", "comparisons.parquet"} }

func (Report) Name() string { return "report" }
func (Report) Deps() []string {
	return []string{"ingest", "features", "train", "evaluate", "recommend"}
}

// reportParams is what the report reads of the job: its name, seed (as
// the job file gives it, 0 when unset) and hash, which the report shows,
// and what it reads of each experiment.
type reportParams struct {
	Job  string `json:"job"`
	Seed uint64 `json:"seed"`
	// Seeds are the job's seeds: (job.Job.Seeds), nil for a job of one
	// seed; SeedTags the node-name tags of the second and later
	// (job.Job.SeedTag), whose evaluate nodes the report reads too.
	Seeds       []uint64    `json:"seeds,omitempty"`
	SeedTags    []string    `json:"seed_tags,omitempty"`
	JobHash     string      `json:"job_hash"`
	Experiments []reportExp `json:"experiments"`
}

// reportExp is what the report reads of one resolved experiment.
type reportExp struct {
	Name     string         `json:"name"`
	Category string         `json:"category"`
	Graph    string         `json:"graph"`
	Features string         `json:"features"`
	Models   []string       `json:"models"`
	Settings reportSettings `json:"settings"`
}

type reportSettings struct {
	RecommendK     int `json:"recommend_k"`
	ReportMapItems int `json:"report_map_items"`
}

func (Report) Params(j *job.Job) reportParams {
	p := reportParams{Job: j.Name, Seed: j.Seed, JobHash: jobHash(j)}
	if len(j.Seeds) > 0 {
		p.Seeds = j.Seeds
		for _, s := range j.Seeds[1:] {
			p.SeedTags = append(p.SeedTags, j.SeedTag(s))
		}
	}
	for i := range j.Experiments {
		r := j.Resolve(i)
		p.Experiments = append(p.Experiments, reportExp{Name: r.Name, Category: r.Category, Graph: r.Graph, Features: r.Features,
			Models: r.Models, Settings: reportSettings{RecommendK: r.Settings.RecommendK, ReportMapItems: r.Settings.ReportMapItems}})
	}
	return p
}

// firstSeed is the seed of the job's first nodes: what the report shows
// and draws its maps with (Seed as the job file gives it, for a job of
// one seed).
func (p *reportParams) firstSeed() uint64 {
	if len(p.Seeds) > 0 {
		return p.Seeds[0]
	}
	return p.Seed
}

// jobHash is the hex sha256 of the job's JSON with the file locations
// (data_dir, data, the job file's path) left out: the same job on the same
// data hashes alike wherever the files lie, as the cache keys do.
func jobHash(j *job.Job) string {
	c := *j
	c.DataDir, c.Data, c.Path = "", job.Data{}, ""
	c.Experiments = slices.Clone(j.Experiments)
	for i := range c.Experiments {
		c.Experiments[i].Data = job.Data{}
	}
	b, err := json.Marshal(c)
	if err != nil {
		panic(err) // plain values and Opt, which marshals its value
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (Report) Run(ctx context.Context, env *pipeline.Env, p reportParams) (*pipeline.Result, error) {
	page := &report.Page{Job: p.Job, Markers: report.MarkerLegend()}
	var (
		rows     []report.JobMetric
		warnings []pipeline.Warning
	)
	bar := env.Track("report: projecting items", int64(len(p.Experiments)))
	for i := range p.Experiments {
		r := &p.Experiments[i]
		pipeline.Describe(bar, "report: projecting the items of "+r.Name)
		in, err := reportInput(ctx, env, r)
		if err != nil {
			bar.Done()
			return nil, err
		}
		a, err := report.Assemble(in)
		if err != nil {
			bar.Done()
			return nil, fmt.Errorf("stages: report %s: %w", r.Name, err)
		}
		bar.Add(1)
		rows = append(rows, a.Metrics...)
		page.Experiments = append(page.Experiments, a.Page)
		if a.SmallData != "" {
			warnings = append(warnings, pipeline.Warning{Msg: a.SmallData, Attrs: map[string]any{
				"experiment": r.Name, "train_pairs": a.TrainPairs, "crossover_pairs": a.Crossover}})
		}
		if a.Coverage != "" {
			warnings = append(warnings, pipeline.Warning{Msg: a.Coverage, Attrs: map[string]any{"experiment": r.Name}})
		}
	}
	bar.Done()
	spreads, seeds, err := seedsOf(ctx, env, &p)
	if err != nil {
		return nil, err
	}
	prov := &report.Provenance{Job: p.Job, JobHash: p.JobHash, Seed: p.firstSeed(), BLAS: blasEnv()}
	n, err := schema.Write(filepath.Join(env.OutDir, "metrics.parquet"), jobMetricsTable(prov, rows, spreads))
	if err != nil {
		return nil, err
	}
	nc, err := writeComparisons(env.OutDir, prov, seeds.Comparisons)
	if err != nil {
		return nil, err
	}
	page.Provenance, page.Seeds = prov, seeds
	// tables.md and index.html draw their tables from the same page.
	if err := os.WriteFile(filepath.Join(env.OutDir, "tables.md"), []byte(report.Markdown(page)), 0o644); err != nil {
		return nil, err
	}
	// The t-SNE maps take most of the stage's time: a bar on a terminal.
	var mapBar pipeline.Tracker
	var drawn int64
	progress := func(step string, done, total int64) {
		if mapBar == nil {
			mapBar = env.Track("report", total)
		}
		pipeline.Describe(mapBar, "report "+step)
		mapBar.Add(done - drawn)
		drawn = done
	}
	w, err := report.Write(ctx, env.OutDir, page, report.Options{Seed: p.firstSeed(), Progress: progress})
	if mapBar != nil {
		mapBar.Done()
	}
	if err != nil {
		return nil, err
	}
	return &pipeline.Result{Rows: map[string]int64{"metrics": n, "comparisons": nc},
		Stats: map[string]any{"experiments": len(page.Experiments), "report_files": len(w.Files), "report_skipped": w.Skipped,
			"job_hash": prov.JobHash, "version": cache.Version()},
		Warnings: warnings}, nil
}

// reportInput reads what the report shows of experiment r from the tables
// of its stages.
func reportInput(ctx context.Context, env *pipeline.Env, r *reportExp) (*report.Input, error) {
	in := expInputs(env, r.Name)
	out := &report.Input{Name: r.Name, Category: r.Category, Graph: r.Graph, Features: r.Features, Models: r.Models,
		RecommendK: r.Settings.RecommendK, MapItems: r.Settings.ReportMapItems,
		Flags: map[string][]string{}, Fits: map[string]*report.Fit{}, Rand: env.RNG("map sample/" + r.Name)}
	// The fits, the largest of these tables, are read on a goroutine of
	// their own beside the others; their error is returned where they were
	// read in turn before.
	var fits map[string]*savedFit
	var errFits error
	fitsRead := make(chan struct{})
	go func() {
		defer close(fitsRead)
		fits, errFits = readTrainedFits(ctx, in, r.Models)
	}()
	defer func() { <-fitsRead }()
	it, err := readItems(ctx, in)
	if err != nil {
		return nil, err
	}
	titles, err := readTitles(ctx, in)
	if err != nil {
		return nil, err
	}
	out.Catalog = &report.Catalog{ASIN: it.asin, Title: titles, Sub: it.sub, SubNames: it.subName}
	edges, err := in.file("ingest", "edges.parquet")
	if err != nil {
		return nil, err
	}
	if out.Edges, err = schema.NumRows(edges); err != nil {
		return nil, err
	}
	recMetrics, err := in.file("recommend", "recommend_metrics.parquet")
	if err != nil {
		return nil, err
	}
	if out.Claims, err = readRecMetrics(ctx, recMetrics); err != nil {
		return nil, err
	}
	for _, m := range learned(r.Models) {
		dir, err := trainDir(in, m)
		if err != nil {
			return nil, err
		}
		if err := readFlags(ctx, filepath.Join(dir, "fits.parquet"), out.Flags); err != nil {
			return nil, err
		}
		out.Trace = append(out.Trace, readTrace(ctx, filepath.Join(dir, "trace.parquet"))...)
	}
	metrics, err := in.file("evaluate", "metrics.parquet")
	if err != nil {
		return nil, err
	}
	if out.Metrics, err = readMetrics(ctx, metrics); err != nil {
		return nil, err
	}
	<-fitsRead
	if errFits != nil {
		return nil, errFits
	}
	for m, f := range fits {
		out.Fits[m] = &report.Fit{C: f.c, Params: f.params, Grid: f.grid, Lambda: f.lambda, Gate: f.gate}
	}
	recs, err := in.file("recommend", "recommendations.parquet")
	if err != nil {
		return nil, err
	}
	if out.Recommendations, err = readRecommendations(ctx, recs); err != nil {
		return nil, err
	}
	if r.Features == "embeddings" {
		keep, err := readFeatureItems(ctx, in, len(it.asin))
		if err != nil {
			return nil, err
		}
		for _, k := range keep {
			if k {
				out.FeatureItems++
			}
		}
	}
	out.OpenFeatures = func() (models.Features, []int32, func(), error) {
		keep, err := readFeatureItems(ctx, in, len(it.asin))
		if err != nil {
			return nil, nil, nil, err
		}
		var cand []int32
		for i, k := range keep {
			if k {
				cand = append(cand, int32(i))
			}
		}
		feat, _, closeFeat, err := loadFeatures(ctx, in, r.Features, false)
		return feat, cand, closeFeat, err
	}
	return out, nil
}

// readFlags adds the flags of each model's chosen fit in the fits table
// at path to flags.
func readFlags(ctx context.Context, path string, flags map[string][]string) error {
	var c schema.FitsCols
	if err := schema.ReadFields(ctx, path, &c, &c.Model, &c.Selected, &c.Flags); err != nil {
		return err
	}
	for i := range c.Model {
		if c.Selected[i] && c.Flags[i] != "" {
			flags[c.Model[i]] = strings.Split(c.Flags[i], ",")
		}
	}
	return nil
}

// readMetrics reads the evaluate stage's metrics table.
func readMetrics(ctx context.Context, path string) ([]report.Metric, error) {
	var c schema.MetricsCols
	if err := schema.ReadFields(ctx, path, &c, &c.Model, &c.Split, &c.Error, &c.AUC, &c.LogLikelihood,
		&c.Pairs, &c.Lambda, &c.K, &c.N, &c.Iterations, &c.Selected); err != nil {
		return nil, err
	}
	out := make([]report.Metric, len(c.Model))
	for i := range c.Model {
		out[i] = report.Metric{Model: c.Model[i], Split: c.Split[i], Error: c.Error[i], AUC: c.AUC[i], LogLikelihood: c.LogLikelihood[i],
			Pairs: c.Pairs[i], Lambda: c.Lambda[i], K: c.K[i], N: c.N[i], Iterations: c.Iterations[i], Selected: c.Selected[i]}
	}
	return out, nil
}

// jobMetricsTable is the job metrics table. Every row names the job and
// its hash, so rows of many runs' tables can be told apart; the build and
// the BLAS are left out, so that two builds (or, with diff's tolerance,
// two kernels) can be compared on the numbers.
//
// seeds, error_mean and error_sd are the spread of the row's error over the
// job's seeds (seedsOf).
func jobMetricsTable(p *report.Provenance, rows []report.JobMetric, spreads map[seedKey]report.Spread) schema.JobMetricsCols {
	var c schema.JobMetricsCols
	for _, r := range rows {
		s := spreads[seedKey{r.Experiment, r.Model, r.Split}]
		c.Seeds, c.ErrorMean, c.ErrorSD = append(c.Seeds, int32(s.Seeds)), append(c.ErrorMean, s.Mean), append(c.ErrorSD, s.SD)
		c.Job, c.JobHash = append(c.Job, p.Job), append(c.JobHash, p.JobHash)
		c.Experiment, c.Model, c.Split = append(c.Experiment, r.Experiment), append(c.Model, r.Model), append(c.Split, r.Split)
		c.Error, c.AUC, c.LogLikelihood = append(c.Error, r.Error), append(c.AUC, r.AUC), append(c.LogLikelihood, r.LogLikelihood)
		c.Pairs, c.Lambda = append(c.Pairs, r.Pairs), append(c.Lambda, r.Lambda)
		c.K, c.N, c.Iterations = append(c.K, r.K), append(c.N, r.N), append(c.Iterations, r.Iterations)
		c.Dataset, c.Graph, c.Features = append(c.Dataset, r.Dataset), append(c.Graph, r.Graph), append(c.Features, r.Features)
		c.PaperError = append(c.PaperError, r.PaperError)
		cl := r.Claims
		c.SameSubcategory, c.DistinctSubcategories = append(c.SameSubcategory, cl.Same), append(c.DistinctSubcategories, cl.Distinct)
		c.Coverage, c.Gini = append(c.Coverage, cl.Coverage), append(c.Gini, cl.Gini)
		c.CoverageCross, c.GiniCross = append(c.CoverageCross, cl.CoverageCross), append(c.GiniCross, cl.GiniCross)
		c.HitRate, c.Recall = append(c.HitRate, cl.HitRate), append(c.Recall, cl.Recall)
	}
	return c
}

// readTrace reads a train node's per-iteration record if there is one:
// columns iteration, objective and valid_error, and model and lambda when
// the trace holds several fits (without them it is one curve, its model
// ""). A missing or unreadable trace leaves the curves out of the page.
// It reads by column name on purpose: traces of several layouts (one fit
// or many, int32 or int64 iterations) are all drawn.
func readTrace(ctx context.Context, path string) []report.TracePoint {
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	tb, err := schema.Open(ctx, path)
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
		out[i] = report.TracePoint{Model: model[i], Lambda: lambda[i], Iteration: int(iter[i]), Objective: obj[i], ValidError: verr[i]}
	}
	return out
}

// readRecommendations reads the recommend stage's lists; a missing table
// is none.
func readRecommendations(ctx context.Context, path string) ([]report.Recommendation, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	var c schema.RecommendationsCols
	if err := schema.ReadFields(ctx, path, &c, &c.Model, &c.Query, &c.Item, &c.Probability, &c.Distance,
		&c.SameSubcategory, &c.Space); err != nil {
		return nil, err
	}
	out := make([]report.Recommendation, len(c.Model))
	for i := range c.Model {
		out[i] = report.Recommendation{Model: c.Model[i], Query: c.Query[i], Item: c.Item[i], Prob: c.Probability[i], Dist: c.Distance[i],
			Same: c.SameSubcategory[i], Space: int(c.Space[i])}
	}
	return out, nil
}

// readRecMetrics reads recommend_metrics.parquet by model; a missing file
// (a run directory from before the stage existed) is no metrics, and
// missing cross-subcategory columns (before recommend 1.1.0) are NaN.
func readRecMetrics(ctx context.Context, path string) (map[string]report.Claims, error) {
	out := map[string]report.Claims{}
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return out, nil
	}
	c, err := schema.ReadAll[schema.RecommendMetricsCols](ctx, path)
	if err != nil {
		return nil, err
	}
	covX, giniX := c.CoverageCross, c.GiniCross
	if covX == nil { // before recommend 1.1.0
		covX = make([]float64, len(c.Model))
		for i := range covX {
			covX[i] = math.NaN()
		}
		giniX = covX
	}
	for i, m := range c.Model {
		out[m] = report.Claims{Queries: int(c.Queries[i]), TestQueries: int(c.TestQueries[i]), Same: c.SameSubcategory[i], Distinct: c.DistinctSubcategories[i],
			Coverage: c.Coverage[i], Gini: c.Gini[i], HitRate: c.HitRate[i], Recall: c.Recall[i], CoverageCross: covX[i], GiniCross: giniX[i]}
	}
	return out, nil
}

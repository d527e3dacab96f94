package stages

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"monomer/graph"
	"monomer/job"
	"monomer/models"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/report"
	"monomer/schema"
)

// The report is two stages. ReportSection, one node per experiment, reads
// the experiment's tables into a report.Input and draws its part of the
// report (report.Assemble, report.WriteSection): the t-SNE maps, the
// projections and the plots, the report's cost. Report, the job-level
// stage, only assembles the sections (and the publish gates' answers)
// into one page, so a run in which one experiment changed redraws that
// experiment's section alone.

// ReportSection is an experiment's part of the report: its PNGs and
// section.gob, what the job-level report assembles (the experiment's part
// of the page and of the metrics table, and the pictures' names).
type ReportSection struct{}

var _ ExpStage[sectionParams] = ReportSection{}

func (ReportSection) Name() string { return "report-section" }
func (ReportSection) Deps() []string {
	return []string{"ingest", "features", "negatives", "split", "train", "evaluate", "recommend"}
}

// sectionFile is the file a section node writes for the job's report.
const sectionFile = "section.gob"

// sectionParams is what a section reads of its experiment. Index, the
// experiment's place in the job, seeds its maps as the job-level report
// seeded them before the split (report.WriteSection), so that the split
// left every picture as it was; moving an experiment within the job
// redraws its maps.
type sectionParams struct {
	Name     string         `json:"name"`
	Category string         `json:"category"`
	Graph    string         `json:"graph"`
	Features string         `json:"features"`
	Models   []string       `json:"models"`
	Settings reportSettings `json:"settings"`
	Index    int            `json:"index"`
}

type reportSettings struct {
	RecommendK     int `json:"recommend_k"`
	ReportMapItems int `json:"report_map_items"`
	// Grouped is split: grouped, which the page names beside the share of
	// reversed test positives.
	Grouped bool `json:"grouped,omitempty"`
}

func (ReportSection) Params(e *job.Resolved) sectionParams {
	return sectionParams{Name: e.Name, Category: e.Category, Graph: e.Graph, Features: e.Features, Models: e.Models,
		Settings: reportSettings{RecommendK: e.Settings.RecommendK, ReportMapItems: e.Settings.ReportMapItems,
			Grouped: e.Settings.Split.Get() == graph.SplitGrouped}, Index: e.Index}
}

// section is section.gob: the experiment's report.Assembled (its page
// without the vectors the maps were drawn from) and the pictures drawn.
// Gob, not JSON: the figures hold NaN (no paper figure, no claim), which
// JSON cannot, and gob round-trips every float64 exactly, so the page
// assembled from it is the page of drawing it whole.
type section struct {
	Assembled *report.Assembled
	Section   *report.Section
}

func (ReportSection) Run(ctx context.Context, env *pipeline.Env, p sectionParams) (*pipeline.Result, error) {
	bar := env.Track("report-section: projecting items", 1)
	// The sample mapped is the job-level report's stream of before the
	// split (its node: experiment "", stage report).
	in, err := reportInput(ctx, env.InDir, &p, pipeline.StageRNG(env.Seed, "", Report{}.Name(), "map sample/"+p.Name))
	if err != nil {
		bar.Done()
		return nil, err
	}
	a, err := report.Assemble(in)
	bar.Done()
	if err != nil {
		return nil, fmt.Errorf("stages: report %s: %w", p.Name, err)
	}
	// The t-SNE maps take most of the stage's time: a bar on a terminal.
	var mapBar pipeline.Tracker
	var drawn int64
	progress := func(step string, done, total int64) {
		if mapBar == nil {
			mapBar = env.Track("report-section", total)
		}
		pipeline.Describe(mapBar, "report "+step)
		mapBar.Add(done - drawn)
		drawn = done
	}
	sec, err := report.WriteSection(ctx, env.OutDir, "", a.Page, p.Index, report.Options{Seed: env.Seed, Progress: progress})
	if mapBar != nil {
		mapBar.Done()
	}
	if err != nil {
		return nil, err
	}
	// What the page shows of the maps is in the pictures: the vectors,
	// the largest part of the experiment, stay out of the file.
	a.Page.Spaces, a.Page.Fits, a.Page.Trace, a.Page.SubNames = nil, nil, nil, nil
	if err := writeSection(filepath.Join(env.OutDir, sectionFile), &section{Assembled: a, Section: sec}); err != nil {
		return nil, err
	}
	var warnings []pipeline.Warning
	if a.SmallData != "" {
		warnings = append(warnings, pipeline.Warning{Msg: a.SmallData, Attrs: map[string]any{"train_pairs": a.TrainPairs, "crossover_pairs": a.Crossover}})
	}
	for _, w := range a.FitWarnings {
		warnings = append(warnings, pipeline.Warning{Msg: w})
	}
	if a.Reverse != "" {
		warnings = append(warnings, pipeline.Warning{Msg: a.Reverse})
	}
	if a.Coverage != "" {
		warnings = append(warnings, pipeline.Warning{Msg: a.Coverage})
	}
	return &pipeline.Result{Stats: map[string]any{"report_files": len(sec.Files), "report_skipped": sec.Skipped}, Warnings: warnings}, nil
}

// gob numbers a stream's types in the order the process first met them
// (package-wide), so section.gob's bytes would depend on what the process
// had decoded before: a features node's bag of words reads the tagger's
// model with gob, and a whole run draws its sections after it, an Airflow
// task without it. Meeting the section's types at init, before anything
// runs, numbers them alike in every process of a build
// (TestSectionBytesAnyProcess).
func init() {
	if err := gob.NewEncoder(io.Discard).Encode(&section{}); err != nil {
		panic(err)
	}
}

func writeSection(path string, s *section) error {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(s); err != nil {
		return fmt.Errorf("stages: %s: %w", path, err)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func readSection(path string) (*section, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var s section
	if err := gob.NewDecoder(bufio.NewReader(f)).Decode(&s); err != nil {
		return nil, fmt.Errorf("stages: %s: %w", path, err)
	}
	if s.Assembled == nil || s.Assembled.Page == nil || s.Section == nil {
		return nil, fmt.Errorf("stages: %s: not a report section", path)
	}
	return &s, nil
}

// Report is the job-level stage: one metrics table across experiments,
// report/tables.md laid out like the paper's Tables 2 and 4, with the
// published figures beside ours, and report/index.html, the visual report
// with its PNGs beside it. It assembles the experiments' sections
// (ReportSection) and, for an experiment with a publish node, the gate's
// answer (gate.json), marking an experiment whose gate refused the run; it
// draws nothing.
type Report struct{}

var _ JobStage[reportParams] = Report{}

// Publish puts the job-level metrics table at the run directory's root,
// and the paired tests of its models.
func (Report) Publish() []string { return []string{"metrics.parquet", "comparisons.parquet"} }

func (Report) Name() string { return "report" }

// Deps: publish runs after the sections' inputs, and a refused publish
// fails its node by its After alone, which blocks nothing downstream
// (pipeline.Node.After): the report still runs, and marks it.
// Every seed's evaluate nodes, for the spread over seeds and the paired
// tests (seedsOf).
func (Report) Deps() []string {
	return []string{ReportSection{}.Name(), Publish{}.Name(), Evaluate{}.Name()}
}

// reportParams is what the report reads of the job: its name, seed (as
// the job file gives it, 0 when unset) and hash, which the report shows,
// and its experiments in job order, whose sections it assembles.
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

// reportExp names one experiment of the report, and whether it has a
// publish node, whose gate the page shows.
type reportExp struct {
	Name    string `json:"name"`
	Publish bool   `json:"publish"`
	// Models are those whose paired tests the report gives (seedsOf).
	Models []string `json:"models"`
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
		p.Experiments = append(p.Experiments, reportExp{Name: r.Name, Publish: Publish{}.active(&r), Models: r.Models})
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
		sections []*report.Section
		files    []string
		skipped  []string
		refused  []string
	)
	for i, r := range p.Experiments {
		dir, err := env.StageDir(r.Name, ReportSection{}.Name())
		if err != nil {
			return nil, err
		}
		s, err := readSection(filepath.Join(dir, sectionFile))
		if err != nil {
			return nil, err
		}
		if r.Publish {
			pub, err := env.StageDir(r.Name, Publish{}.Name())
			if err != nil {
				return nil, err
			}
			g, err := readGate(filepath.Join(pub, gateFile))
			if err != nil {
				return nil, err
			}
			s.Assembled.Page.Publish = g.forReport()
			if s.Assembled.Page.Publish.Refused() && g.Promotable {
				refused = append(refused, r.Name)
			}
		}
		// The page names experiment i's pictures e<i>-<name>, as when it
		// was drawn whole.
		prefix := fmt.Sprintf("e%d-", i)
		for _, f := range s.Section.Files {
			if err := cache.CopyFile(filepath.Join(dir, f), filepath.Join(env.OutDir, prefix+f)); err != nil {
				return nil, fmt.Errorf("stages: report: %w", err)
			}
		}
		sec := s.Section.Renamed(func(f string) string { return prefix + f })
		sections = append(sections, sec)
		files, skipped = append(files, sec.Files...), append(skipped, sec.Skipped...)
		rows = append(rows, s.Assembled.Metrics...)
		page.Experiments = append(page.Experiments, s.Assembled.Page)
	}
	if slices.ContainsFunc(page.Experiments, func(e *report.Experiment) bool { return e.Uniform }) {
		page.Markers += " " + report.UniformLegend()
	}
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
	if err := report.WritePage(env.OutDir, page, sections); err != nil {
		return nil, err
	}
	files = append(files, "index.html")
	stats := map[string]any{"experiments": len(page.Experiments), "report_files": len(files), "report_skipped": skipped,
		"job_hash": prov.JobHash, "version": cache.Version()}
	if len(refused) > 0 {
		stats["not_promoted"] = refused
	}
	return &pipeline.Result{Rows: map[string]int64{"metrics": n, "comparisons": nc}, Stats: stats}, nil
}

// forReport is the gate as the report shows it.
func (g *gateReport) forReport() *report.PublishGate {
	out := &report.PublishGate{Model: g.Model, Decision: g.Decision, Reason: g.Reason, Previous: g.Previous, Promotable: g.Promotable}
	for _, c := range g.Checks {
		out.Checks = append(out.Checks, report.GateCheck{Name: c.Name, Value: c.Value, Threshold: c.Threshold, Pass: c.Pass})
	}
	return out
}

// reportInput reads what the report shows of experiment r from the tables
// of its stages (in), drawing the items it projects and maps from rng.
func reportInput(ctx context.Context, in inputs, r *sectionParams, rng *rand.Rand) (*report.Input, error) {
	out := &report.Input{Name: r.Name, Category: r.Category, Graph: r.Graph, Features: r.Features, Models: r.Models,
		RecommendK: r.Settings.RecommendK, MapItems: r.Settings.ReportMapItems,
		Flags: map[string][]string{}, Fits: map[string]*report.Fit{}, Rand: rng}
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
	if out.Slices, err = readSlices(ctx, in); err != nil {
		return nil, err
	}
	pairs, err := readPairs(ctx, in)
	if err != nil {
		return nil, err
	}
	rev := graph.ReverseInTrain(pairs)
	if out.Negatives, err = negativesUsed(in); err != nil {
		return nil, err
	}
	out.Reverse = report.ReverseShare{TestPositives: rev.TestPositives, ReverseInTrain: rev.ReverseInTrain, Grouped: r.Settings.Grouped}
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
		c.NDCG, c.MRR = append(c.NDCG, cl.NDCG), append(c.MRR, cl.MRR)
		c.Negatives = append(c.Negatives, r.Negatives)
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
	ndcg, mrr, share := orNaN(c.NDCG, len(c.Model)), orNaN(c.MRR, len(c.Model)), orNaN(c.TopItemShare, len(c.Model)) // before recommend 1.4.0
	for i, m := range c.Model {
		out[m] = report.Claims{Queries: int(c.Queries[i]), TestQueries: int(c.TestQueries[i]), Same: c.SameSubcategory[i], Distinct: c.DistinctSubcategories[i],
			Coverage: c.Coverage[i], Gini: c.Gini[i], HitRate: c.HitRate[i], Recall: c.Recall[i], CoverageCross: covX[i], GiniCross: giniX[i],
			NDCG: ndcg[i], MRR: mrr[i], TopShare: share[i], Dominated: c.Dominated != nil && c.Dominated[i]}
	}
	return out, nil
}

// orNaN is col, or n NaNs for a column the file does not have.
func orNaN(col []float64, n int) []float64 {
	if col != nil {
		return col
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

// readSlices reads evaluate's slices.parquet; a run from before evaluate
// 1.5.0 has none.
func readSlices(ctx context.Context, in inputs) ([]report.SliceRow, error) {
	path, err := in.file("evaluate", "slices.parquet")
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil, nil
	}
	c, err := schema.ReadAll[schema.SlicesCols](ctx, path)
	if err != nil {
		return nil, err
	}
	out := make([]report.SliceRow, len(c.Model))
	for i := range out {
		out[i] = report.SliceRow{Model: c.Model[i], Slice: c.Slice[i], Group: c.Group[i], Pairs: c.Pairs[i], Positives: c.Positives[i],
			Error: c.Error[i], AUC: c.AUC[i], Heterogeneity: c.Heterogeneity[i]}
	}
	return out, nil
}

// negativesUsed is the method the negatives stage used (its stats'
// method_used: rewire or uniform, auto's fallback included), "" for a
// manifest without it.
func negativesUsed(in inputs) (string, error) {
	dir, err := in("negatives")
	if err != nil {
		return "", err
	}
	m, err := cache.ReadManifest(dir)
	if err != nil {
		return "", err
	}
	s, _ := m.Stats["method_used"].(string)
	return s, nil
}

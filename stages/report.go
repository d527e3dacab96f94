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

	"monomer/amazon"
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
// (package report) with its PNGs beside it.
type Report struct{}

var _ JobStage[reportParams] = Report{}

// Publish puts the job-level metrics table at the run directory's root.
func (Report) Publish() []string { return []string{"metrics.parquet"} }

func (Report) Name() string { return "report" }
func (Report) Deps() []string {
	return []string{"ingest", "features", "train", "evaluate", "recommend"}
}

// reportParams is what the report reads of the job: its name, seed (as
// the job file gives it, 0 when unset) and hash, which the report shows,
// and what it reads of each experiment.
type reportParams struct {
	Job         string      `json:"job"`
	Seed        uint64      `json:"seed"`
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
	for i := range j.Experiments {
		r := j.Resolve(i)
		p.Experiments = append(p.Experiments, reportExp{Name: r.Name, Category: r.Category, Graph: r.Graph, Features: r.Features,
			Models: r.Models, Settings: reportSettings{RecommendK: r.Settings.RecommendK, ReportMapItems: r.Settings.ReportMapItems}})
	}
	return p
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

// modelOrder is the column order of the tables (the paper's letters).
var modelOrder = []string{"wnn", "ct", "lda", "lmt", "monomer"}

var modelTitle = map[string]string{"wnn": "WNN", "ct": "CT", "lda": "LDA", "lmt": "LMT", "monomer": "Monomer"}

type expReport struct {
	r        reportExp
	paper    paperRow
	hasPaper bool
	subcats  int
	items    int
	edges    int64
	flags    map[string][]string // model -> what is degenerate about the chosen fit
	rec      map[string]recMetrics
	// trainPairs is Monomer's training pairs (metrics' train split), 0
	// without Monomer.
	trainPairs int64
}

// monomerCrossover is, per feature type, the number of training pairs
// where Monomer overtook LMT on issue 28's learning curve
// (models.TestLearningCurve: synth's Men top at F = 256, LMT K 40 against
// Monomer K 8, N 4, λ from {1e-5, 1e-4, 1e-3}, seeds 1-3; BENCHMARKS.md,
// "Learning curve"): the smallest size measured from which on Monomer's
// mean test error is below LMT's at every larger size. Image: 1,000
// (−0.008; +0.005 at 500); bag of words: 8,000 (−0.017; +0.006 at 4,000,
// +0.033 at 2,000).
var monomerCrossover = map[string]int64{"image": 1000, "bow": 8000}

// smallDataWarning says when the experiment trains Monomer and LMT on fewer
// pairs than monomerCrossover, "" otherwise.
func (er *expReport) smallDataWarning() string {
	min, ok := monomerCrossover[er.r.Features]
	if !ok || er.trainPairs == 0 || er.trainPairs >= min || !slices.Contains(er.r.Models, "lmt") {
		return ""
	}
	return fmt.Sprintf("%s: %d training pairs, below the %d from which Monomer beat LMT on planted %s data with rewired negatives (BENCHMARKS.md, \"Learning curve\"): there, with fewer pairs, Monomer's N+1 embeddings and gate were fitted from too little data and LMT did as well or better, so this comparison may reflect the data size more than the models",
		er.r.Name, er.trainPairs, min, er.r.Features)
}

// dataset is the experiment's data set name, the same in tables.md and
// metrics.parquet: the paper's name where the paper has the category, else
// the category's last level ("Women").
func (er *expReport) dataset() string {
	if er.hasPaper {
		return er.paper.dataset
	}
	levels := amazon.CategoryPrefix(er.r.Category)
	return levels[len(levels)-1]
}

// The markers of degenerate fits in the report's tables, with their legend.
var flagMarks = []struct{ flag, mark, legend string }{
	{models.FlagConstant, "†", fmt.Sprintf("constant predictor: the chosen fit's validation probabilities span less than %g, so it predicts the same for every pair", models.ConstantSpread)},
	{models.FlagEarlyLineSearchEnd, "‡", fmt.Sprintf("L-BFGS stopped on a line-search failure in its first %d iterations", models.EarlyStopIters)},
	{models.FlagKeptStart, "§", "no iteration beat the random starting point on validation, so the start was kept"},
}

// marks returns the markers of a model's chosen fit, " †" or "".
func (er *expReport) marks(model string) string {
	var b strings.Builder
	for _, f := range flagMarks {
		if slices.Contains(er.flags[model], f.flag) {
			b.WriteString(f.mark)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return " " + b.String()
}

// markerLegend is the legend of flagMarks.
func markerLegend() string {
	var b strings.Builder
	for _, f := range flagMarks {
		fmt.Fprintf(&b, "%s %s. ", f.mark, f.legend)
	}
	b.WriteString("The train stage's WARN lines and fits.parquet (columns valid_spread, flags) name every λ affected.")
	return b.String()
}

// readFlags reads the flags of each model's chosen fit from fits.parquet.
func (er *expReport) readFlags(path string) error {
	return schema.Read(path, func(t *schema.Cols) error {
		model, sel, flags := t.Strings("model"), t.Bools("selected"), t.Strings("flags")
		if err := t.Err(); err != nil {
			return err
		}
		for i := range model {
			if sel[i] && flags[i] != "" {
				er.flags[model[i]] = strings.Split(flags[i], ",")
			}
		}
		return nil
	})
}

func (Report) Run(ctx context.Context, env *pipeline.Env, p reportParams) (*pipeline.Result, error) {
	var (
		cols    jobMetricCols
		reports []expReport
	)
	for _, r := range p.Experiments {
		er := expReport{r: r, flags: map[string][]string{}}
		er.paper, er.hasPaper = paperFor(r.Category, r.Features)
		in := expInputs(env, r.Name)
		it, err := readItems(in)
		if err != nil {
			return nil, err
		}
		er.items, er.subcats = len(it.asin), len(it.subName)
		edges, err := in.file("ingest", "edges.parquet")
		if err != nil {
			return nil, err
		}
		if er.edges, err = schema.NumRows(edges); err != nil {
			return nil, err
		}
		recMetrics, err := in.file("recommend", "recommend_metrics.parquet")
		if err != nil {
			return nil, err
		}
		if er.rec, err = readRecMetrics(recMetrics); err != nil {
			return nil, err
		}
		for _, m := range learned(r.Models) {
			dir, err := trainDir(in, m)
			if err != nil {
				return nil, err
			}
			if err := er.readFlags(filepath.Join(dir, "fits.parquet")); err != nil {
				return nil, err
			}
		}
		metrics, err := in.file("evaluate", "metrics.parquet")
		if err != nil {
			return nil, err
		}
		if err := cols.add(&er, metrics); err != nil {
			return nil, err
		}
		reports = append(reports, er)
	}
	prov := &report.Provenance{Job: p.Job, JobHash: p.JobHash, Seed: p.Seed, BLAS: blasEnv()}
	rows, err := schema.Write(filepath.Join(env.OutDir, "metrics.parquet"), cols.table(prov))
	if err != nil {
		return nil, err
	}
	page, err := reportPage(env, p, reports)
	if err != nil {
		return nil, err
	}
	page.Provenance = prov
	// tables.md and index.html draw their tables from the same page.
	if err := os.WriteFile(filepath.Join(env.OutDir, "tables.md"), []byte(report.Markdown(page)), 0o644); err != nil {
		return nil, err
	}
	// The t-SNE maps take most of the stage's time: a bar on a terminal.
	var bar pipeline.Tracker
	var drawn int64
	progress := func(step string, done, total int64) {
		if bar == nil {
			bar = env.Track("report", total)
		}
		pipeline.Describe(bar, "report "+step)
		bar.Add(done - drawn)
		drawn = done
	}
	w, err := report.Write(ctx, env.OutDir, page, report.Options{Seed: p.Seed, Progress: progress})
	if bar != nil {
		bar.Done()
	}
	if err != nil {
		return nil, err
	}
	var warnings []pipeline.Warning
	for _, r := range reports {
		if msg := r.smallDataWarning(); msg != "" {
			warnings = append(warnings, pipeline.Warning{Msg: msg, Attrs: map[string]any{
				"experiment": r.r.Name, "train_pairs": r.trainPairs, "crossover_pairs": monomerCrossover[r.r.Features]}})
		}
	}
	return &pipeline.Result{Rows: map[string]int64{"metrics": rows},
		Stats: map[string]any{"experiments": len(reports), "report_files": len(w.Files), "report_skipped": w.Skipped,
			"job_hash": prov.JobHash, "version": cache.Version()},
		Warnings: warnings}, nil
}

type jobMetricCols struct {
	exp, dataset, graph, features, model, split []string
	errs, auc, ll, lambda, paper                []float64
	pairs                                       []int64
	k, n, iters                                 []int32
	recCols                                     [8][]float64
}

// table is the job metrics table; recCols are in recMetrics.values' order.
// Every row names the job and its hash, so rows of many runs' tables can be
// told apart; the build and the BLAS are left out, so that two builds (or,
// with diff's tolerance, two kernels) can be compared on the numbers.
func (c *jobMetricCols) table(p *report.Provenance) schema.JobMetricsCols {
	job, hash := make([]string, len(c.exp)), make([]string, len(c.exp))
	for i := range job {
		job[i], hash[i] = p.Job, p.JobHash
	}
	return schema.JobMetricsCols{Job: job, JobHash: hash,
		Experiment: c.exp, Model: c.model, Split: c.split, Error: c.errs, AUC: c.auc, LogLikelihood: c.ll,
		Pairs: c.pairs, Lambda: c.lambda, K: c.k, N: c.n, Iterations: c.iters,
		Dataset: c.dataset, Graph: c.graph, Features: c.features, PaperError: c.paper,
		SameSubcategory: c.recCols[0], DistinctSubcategories: c.recCols[1], Coverage: c.recCols[2],
		Gini: c.recCols[3], CoverageCross: c.recCols[4], GiniCross: c.recCols[5], HitRate: c.recCols[6], Recall: c.recCols[7],
	}
}

// add appends the chosen-lambda rows of one experiment's metrics table.
func (c *jobMetricCols) add(er *expReport, path string) error {
	return schema.Read(path, func(cols *schema.Cols) error {
		c.addRows(er, cols)
		return nil
	})
}

func (c *jobMetricCols) addRows(er *expReport, t *schema.Cols) {
	model, split, errs, auc, ll := t.Strings("model"), t.Strings("split"), t.Float64s("error"), t.Float64s("auc"), t.Float64s("log_likelihood")
	pairs, lambda, k, n, iters, sel := t.Int64s("pairs"), t.Float64s("lambda"), t.Int32s("k"), t.Int32s("n"), t.Int32s("iterations"), t.Bools("selected")
	if t.Err() != nil {
		return
	}
	dataset := er.dataset()
	for i := range model {
		if !sel[i] {
			continue
		}
		paper := math.NaN()
		if er.hasPaper && split[i] == "test" {
			if v, ok := er.paper.errorPct[er.r.Graph][model[i]]; ok {
				paper = v / 100
			}
		}
		if split[i] == "train" && model[i] == "monomer" {
			er.trainPairs = pairs[i]
		}
		c.exp = append(c.exp, er.r.Name)
		c.dataset = append(c.dataset, dataset)
		c.graph = append(c.graph, er.r.Graph)
		c.features = append(c.features, er.r.Features)
		c.model = append(c.model, model[i])
		c.split = append(c.split, split[i])
		c.errs = append(c.errs, errs[i])
		c.auc = append(c.auc, auc[i])
		c.ll = append(c.ll, ll[i])
		c.pairs = append(c.pairs, pairs[i])
		c.lambda = append(c.lambda, lambda[i])
		c.k = append(c.k, k[i])
		c.n = append(c.n, n[i])
		c.iters = append(c.iters, iters[i])
		c.paper = append(c.paper, paper)
		rm, ok := er.rec[model[i]]
		for j, v := range rm.values() {
			if !ok || split[i] != "test" {
				v = math.NaN()
			}
			c.recCols[j] = append(c.recCols[j], v)
		}
	}
}

package stages

import (
	"bufio"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"monomer/internal/sidefile"
	"monomer/job"
	"monomer/models"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// Publish writes, for every item with features (or every id of
// publish.queries), the exact top-k of one trained model after the rules of
// the job's publish: block, the whole-catalogue table a shop loads; then the
// churn against the experiment's published run and the promotion gate's
// figures. Its node's After moves the run root's published/<experiment>
// link to this run when the gate passes (docs/publishing.md). An
// experiment without a publish: block has no publish node.
type Publish struct{}

var _ ExpStage[publishParams] = Publish{}

func (Publish) Name() string { return "publish" }
func (Publish) Deps() []string {
	return []string{"ingest", "features", "split", "train", "evaluate", "recommend"}
}

// ErrNotPromoted marks a publish node whose gate refused this run: the
// published link is left where it was (exit 6: neither a retry nor a data
// fix changes the answer).
var ErrNotPromoted = errors.New("not promoted")

// publishParams are the resolved publish: block and the identity of the
// published run compared with.
type publishParams struct {
	Model    string  `json:"model"`
	Features string  `json:"features"`
	K        int     `json:"k"`
	Cross    bool    `json:"cross_subcategory"`
	MinProb  float64 `json:"min_probability"`
	// HasExclude and HasQueries say which of the tables below is given,
	// whose content (not path) the key holds.
	HasExclude bool       `json:"exclude"`
	HasQueries bool       `json:"queries_table"`
	Gate       gateParams `json:"gate"`
	// RunRoot says whether the run has a root of runs (--run-id), without
	// which nothing is compared or promoted.
	RunRoot bool `json:"run_root"`
	// Previous is the run id of the experiment's published run ("" for
	// none); its table and gate.json are hashed into the key (Files), so a
	// changed predecessor recomputes churn and gate.
	Previous string `json:"previous"`

	Exclude, Queries    string `json:"-"`
	PrevTable, PrevGate string `json:"-"`
}

type gateParams struct {
	MaxErrorIncrease *float64 `json:"max_error_increase"`
	MinCoverage      *float64 `json:"min_coverage"`
	MaxChurn         *float64 `json:"max_churn"`
}

func (p publishParams) Files() []string {
	var f []string
	for _, s := range []string{p.Exclude, p.Queries, p.PrevTable, p.PrevGate} {
		if s != "" {
			f = append(f, s)
		}
	}
	return f
}

// active reports whether experiment e has a publish node.
func (Publish) active(e *job.Resolved) bool { return e.Publish != nil }

// after is the node's After: promote.
func (Publish) after(e *job.Resolved) func(dir string) error { return promote(e) }

func (Publish) Params(e *job.Resolved) publishParams {
	b := e.Publish
	if b == nil {
		return publishParams{}
	}
	opt := func(o job.Opt[float64]) *float64 {
		if !o.IsSet() {
			return nil
		}
		v := o.Get()
		return &v
	}
	p := publishParams{Model: b.Model, Features: e.Features, K: b.K.Get(), Cross: b.CrossSubcategory.Get(),
		MinProb: b.MinProbability.Get(), Exclude: b.Exclude, HasExclude: b.Exclude != "",
		Gate:    gateParams{opt(b.Gate.MaxErrorIncrease), opt(b.Gate.MinCoverage), opt(b.Gate.MaxChurn)},
		RunRoot: e.RunRoot != ""}
	if b.Queries != job.PublishAll {
		p.Queries, p.HasQueries = b.Queries, true
	}
	if e.RunRoot != "" {
		p.Previous = previousRun(e.RunRoot, e.RunID, e.Name)
		if p.Previous != "" {
			dir := filepath.Join(e.RunRoot, p.Previous, e.Name, Publish{}.Name())
			p.PrevTable, p.PrevGate = filepath.Join(dir, publishedFile), filepath.Join(dir, gateFile)
		}
	}
	return p
}

// The files of a publish node.
const (
	publishedFile = "recommendations.parquet"
	churnFile     = "churn.parquet"
	gateFile      = "gate.json"
)

// linkPath is experiment exp's published link in root.
func linkPath(root, exp string) string { return filepath.Join(root, job.ReservedName, exp) }

// linkTarget is where a run's link points: relative, so the root can move.
func linkTarget(runID, exp string) string { return filepath.Join("..", runID, exp) }

// previousRun is the published run this run of experiment exp compares
// with: the one its own gate.json records if it has run before (so a
// rerun, a restore or verify keys as the first run did, whatever the link
// names since), else the run the experiment's link names. "" when there is
// none, or its publish table is gone.
func previousRun(root, runID, exp string) string {
	finished := func(id string) bool {
		dir := filepath.Join(root, id, exp, Publish{}.Name())
		_, err1 := os.Stat(filepath.Join(dir, publishedFile))
		_, err2 := os.Stat(filepath.Join(dir, gateFile))
		return err1 == nil && err2 == nil
	}
	if g, err := readGate(filepath.Join(root, runID, exp, Publish{}.Name(), gateFile)); err == nil && (g.Previous == "" || finished(g.Previous)) {
		return g.Previous
	}
	target, err := os.Readlink(linkPath(root, exp))
	if err != nil {
		return ""
	}
	if id := filepath.Base(filepath.Dir(target)); id != runID && finished(id) {
		return id
	}
	return ""
}

// gateReport is gate.json: the decision and every figure against its
// threshold.
type gateReport struct {
	Model string `json:"model"`
	// Previous is the published run compared with ("" for none).
	Previous string `json:"previous"`
	// Decision is "promote" or "refuse"; Promotable is false when the run
	// has no root of runs, which nothing is promoted in.
	Decision   string      `json:"decision"`
	Promotable bool        `json:"promotable"`
	Reason     string      `json:"reason"`
	Checks     []gateCheck `json:"checks"`
	// The figures, null when not defined (no predecessor, no test pairs).
	TestError     *float64 `json:"test_error"`
	PreviousError *float64 `json:"previous_test_error"`
	Coverage      float64  `json:"coverage"`
	Churn         *float64 `json:"churn"`
	Queries       int      `json:"queries"`
	Candidates    int      `json:"candidates"`
}

type gateCheck struct {
	Name      string  `json:"name"`
	Value     float64 `json:"value"`
	Threshold float64 `json:"threshold"`
	Pass      bool    `json:"pass"`
}

func readGate(path string) (*gateReport, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var g gateReport
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("stages: %s: %w", path, err)
	}
	return &g, nil
}

// publishBlock bounds the queries of one block: their lists are one row
// group, and memory holds one block of lists.
func publishBlock(k int) int { return max(1, min(4096, (1<<16)/k)) }

func (Publish) Run(ctx context.Context, env *pipeline.Env, p publishParams) (*pipeline.Result, error) {
	if link := servedBy(env); link != "" {
		// The runner would swap the new lists in under the link while a
		// shop reads it, before any gate looked at them.
		return nil, fmt.Errorf("%w: %s serves this run's lists, which a rerun would rewrite in place before the gate: run under a new --run-id", pipeline.ErrUsage, link)
	}
	e, err := openRecExperiment(ctx, env.InDir, p.Features, []string{p.Model})
	if err != nil {
		return nil, err
	}
	defer e.close()
	// The retriever breaks ties by item index and the table is sorted by
	// query index: both are id order (byte order) only because ingest
	// keeps items sorted by id (amazon.Keep).
	if !slices.IsSorted(e.it.asin) {
		return nil, errors.New("stages: publish: the items table is not in id order")
	}
	r, err := e.retriever(ctx, p.Model)
	if err != nil {
		return nil, fmt.Errorf("stages: publish %s: %w", p.Model, err)
	}
	stats := map[string]any{"candidates": len(e.cand)}
	queries := e.cand
	if p.HasQueries {
		var unknown int
		if queries, unknown, err = idTable(ctx, p.Queries, e); err != nil {
			return nil, err
		}
		stats["queries_unknown"] = unknown
	}
	var excluded func(x, y int32) bool
	if p.HasExclude {
		ex, unknown, err := idTable(ctx, p.Exclude, e)
		if err != nil {
			return nil, err
		}
		out := make([]bool, len(e.it.asin))
		for _, x := range ex {
			out[x] = true
		}
		excluded = func(_, y int32) bool { return out[y] }
		stats["excluded"], stats["exclude_unknown"] = len(ex), unknown
	}
	w, err := schema.NewWriter[schema.PublishedCols](filepath.Join(env.OutDir, publishedFile), schema.RowGroupRows)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	seen := make([]bool, len(e.it.asin))
	var short, empty int
	bar := env.Track("publish: scoring lists", int64(len(queries)))
	defer bar.Done()
	err = publishLists(r, e.it, queries, p, excluded, func(q int32, list []models.Hit) error {
		if len(list) < p.K {
			short++
		}
		if len(list) == 0 {
			empty++
		}
		for _, h := range list {
			seen[h.Item] = true
		}
		return nil
	}, func(c schema.PublishedCols, n int) error {
		if err := ctx.Err(); err != nil {
			return err // checked between blocks
		}
		bar.Add(int64(n))
		if err := w.Append(c); err != nil {
			return err
		}
		return w.EndGroup()
	})
	if err != nil {
		return nil, err
	}
	rows, err := w.Close()
	if err != nil {
		return nil, err
	}
	covered := 0
	for _, s := range seen {
		if s {
			covered++
		}
	}
	g := &gateReport{Model: p.Model, Previous: p.Previous, Promotable: p.RunRoot, Queries: len(queries),
		Candidates: len(e.cand), Coverage: ratio(float64(covered), float64(len(e.cand)))}
	if math.IsNaN(g.Coverage) {
		g.Coverage = 0
	}
	stats["queries"], stats["short_lists"], stats["empty_lists"], stats["coverage"] = len(queries), short, empty, g.Coverage
	if stats["held_out"], err = publishHeldOut(ctx, env, r, e, queries, p, excluded); err != nil {
		return nil, err
	}
	out := map[string]int64{"recommendations": rows}
	if testErr, ok, err := modelTestError(ctx, env.InDir, p.Model); err != nil {
		return nil, err
	} else if ok {
		g.TestError = &testErr
	}
	if p.PrevTable != "" {
		cs, n, err := writeChurn(ctx, p.PrevTable, filepath.Join(env.OutDir, publishedFile), filepath.Join(env.OutDir, churnFile), p.K)
		if err != nil {
			return nil, err
		}
		out["churn"] = n
		churn := 1 - cs.MeanJaccard
		if cs.Common+cs.Removed == 0 {
			churn = 1
		}
		g.Churn = &churn
		stats["churn"] = map[string]any{"changed_share": cs.ChangedShare, "mean_jaccard": cs.MeanJaccard,
			"added": cs.Added, "removed": cs.Removed, "common": cs.Common}
		prev, err := readGate(p.PrevGate)
		if err != nil {
			return nil, fmt.Errorf("stages: publish: the published run %s: %w", p.Previous, err)
		}
		g.PreviousError = prev.TestError
	}
	decide(g, p.Gate)
	var warnings []pipeline.Warning
	if !p.RunRoot {
		warnings = append(warnings, pipeline.Warning{Msg: "not promoted: a run without --run-id has no root of runs to publish in",
			Attrs: map[string]any{"gate": g.Decision}})
	}
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(env.OutDir, gateFile), append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	stats["gate"] = g.Decision
	return &pipeline.Result{Rows: out, Stats: stats, Warnings: warnings}, nil
}

// publishLists computes the lists of queries in blocks (publishBlock) with
// the recommend stage's retrieval (Retriever.TopKLists, the one code path
// of both), applies the rules of p and hands each block to write as rows of
// whole lists, n queries; each list also goes to each. excluded, if not
// nil, leaves y out of x's list (publish.exclude; monomer score adds a new
// item's twin in the run).
func publishLists(r *models.Retriever, it *items, queries []int32, p publishParams, excluded func(x, y int32) bool,
	each func(q int32, list []models.Hit) error, write func(c schema.PublishedCols, n int) error) error {
	skip := publishSkip(it, p, excluded)
	bs := publishBlock(p.K)
	for lo := 0; lo < len(queries); lo += bs {
		block := queries[lo:min(lo+bs, len(queries))]
		lists, err := r.TopKLists(block, p.K, 0, skip)
		if err != nil {
			return fmt.Errorf("stages: publish %s: %w", p.Model, err)
		}
		var c schema.PublishedCols
		for qi, q := range block {
			list := lists[0][qi]
			// P(related) falls with the rank, so the items above the
			// threshold are a prefix of the list.
			n := len(list)
			for n > 0 && list[n-1].Prob < p.MinProb {
				n--
			}
			list = list[:n]
			if err := each(q, list); err != nil {
				return err
			}
			for rank, h := range list {
				c.Query = append(c.Query, it.asin[q])
				c.Rank = append(c.Rank, int32(rank+1))
				c.Item = append(c.Item, it.asin[h.Item])
				c.Probability = append(c.Probability, h.Prob)
				c.Space = append(c.Space, int32(h.Space))
				c.SameSubcategory = append(c.SameSubcategory, it.sameSub(q, h.Item))
			}
		}
		if err := write(c, len(block)); err != nil {
			return err
		}
	}
	return nil
}

// publishSkip is the filter of the publish rules cross_subcategory and
// exclude (nil for neither).
func publishSkip(it *items, p publishParams, excluded func(x, y int32) bool) func(x, y int32) bool {
	switch {
	case p.Cross && excluded != nil:
		return func(x, y int32) bool { return excluded(x, y) || it.sameSub(x, y) }
	case p.Cross:
		return it.sameSub
	case excluded != nil:
		return excluded
	}
	return nil
}

// publishHeldOutQueries bounds the query items publish scores its
// held-out metrics on: a seeded sample of that many when more have test
// positives, so the figures cost a fraction of the lists.
const publishHeldOutQueries = 2000

// publishHeldOut is heldOutScores of the publish model's lists under the
// publish rules (the filters and min_probability) over the queries with
// test positives, with train and validation positives left out: how well
// the lists a shop loads find relations the model never saw.
func publishHeldOut(ctx context.Context, env *pipeline.Env, r *models.Retriever, e *recExperiment, queries []int32, p publishParams, excluded func(x, y int32) bool) (map[string]any, error) {
	pairs, err := readPairs(ctx, env.InDir)
	if err != nil {
		return nil, err
	}
	test, known := heldOutPairs(pairs, e.cand)
	var withTest []int32
	for _, q := range queries {
		if len(test[q]) > 0 {
			withTest = append(withTest, q)
		}
	}
	withTest = models.SampleItems(env.RNG("held_out_queries"), withTest, publishHeldOutQueries)
	var lists [][]models.Hit
	if len(withTest) > 0 {
		if lists, err = r.TopKExcept(withTest, p.K+heldOutExtra(withTest, known), 0, publishSkip(e.it, p, excluded)); err != nil {
			return nil, fmt.Errorf("stages: publish %s: %w", p.Model, err)
		}
	}
	for qi, l := range lists {
		n := 0 // items above min_probability: a prefix, as in publishLists
		for n < len(l) && l[n].Prob >= p.MinProb {
			n++
		}
		lists[qi] = l[:n]
	}
	s := scoreHeldOut(lists, withTest, test, known, p.K)
	num := func(v float64) any { // JSON has no NaN
		if math.IsNaN(v) {
			return nil
		}
		return v
	}
	return map[string]any{"test_queries": len(withTest), "k": p.K, "hit_rate": num(s.HitRate), "recall": num(s.Recall),
		"ndcg": num(s.NDCG), "mrr": num(s.MRR)}, nil
}

// idTable reads a publish table of item ids (a CSV file: a header line,
// then an id in the first column of each line) and returns the ids that are
// items of e with features, as item indices ascending without repeats, and
// how many were not. An empty id is bad data, named by its line.
func idTable(ctx context.Context, path string, e *recExperiment) ([]int32, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("stages: publish: %w", err)
	}
	defer f.Close()
	row := e.it.rows()
	var out []int32
	unknown, line := 0, 0
	// CSV as the catalogue's tables are read: a quoted id may hold commas,
	// quotes or a line break; the first column is the id, trimmed.
	r := csv.NewReader(bufio.NewReader(f))
	r.FieldsPerRecord, r.ReuseRecord, r.TrimLeadingSpace = -1, true, true
	for n := 0; ; n++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil { // a *csv.ParseError names its line
			return nil, 0, fmt.Errorf("%w: %s: %v", pipeline.ErrBadInput, path, err)
		}
		line, _ = r.FieldPos(0)
		if n == 0 {
			continue // the header
		}
		if n%4096 == 0 && ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		id := strings.TrimSpace(rec[0])
		if id == "" {
			return nil, 0, fmt.Errorf("%w: %s line %d: empty item id", pipeline.ErrBadInput, path, line)
		}
		i, ok := row[id]
		if !ok {
			unknown++
			continue
		}
		if _, has := slices.BinarySearch(e.cand, i); !has {
			unknown++
			continue
		}
		out = append(out, i)
	}
	if line == 0 {
		return nil, 0, fmt.Errorf("%w: %s: empty file (want a header line, then one id a line)", pipeline.ErrBadInput, path)
	}
	slices.Sort(out)
	return slices.Compact(out), unknown, nil
}

// modelTestError is the model's test error at its selected λ, from the
// evaluate stage's metrics.
func modelTestError(ctx context.Context, in inputs, model string) (float64, bool, error) {
	path, err := in.file("evaluate", "metrics.parquet")
	if err != nil {
		return 0, false, err
	}
	var c schema.MetricsCols
	if err := schema.ReadFields(ctx, path, &c, &c.Model, &c.Split, &c.Error, &c.Selected); err != nil {
		return 0, false, err
	}
	for i := range c.Model {
		if c.Model[i] == model && c.Split[i] == "test" && c.Selected[i] && !math.IsNaN(c.Error[i]) {
			return c.Error[i], true, nil
		}
	}
	return 0, false, nil
}

// decide fills g's checks and decision from its figures and the gate's
// thresholds. A run with no predecessor passes: it has nothing to be worse
// than (coverage is still checked).
func decide(g *gateReport, t gateParams) {
	check := func(name string, v, threshold float64, pass bool) {
		g.Checks = append(g.Checks, gateCheck{name, v, threshold, pass})
	}
	if t.MinCoverage != nil {
		check("coverage", g.Coverage, *t.MinCoverage, g.Coverage >= *t.MinCoverage)
	}
	if g.Previous != "" {
		if t.MaxErrorIncrease != nil && g.TestError != nil && g.PreviousError != nil {
			d := *g.TestError - *g.PreviousError
			check("test_error_increase", d, *t.MaxErrorIncrease, d <= *t.MaxErrorIncrease)
		}
		if t.MaxChurn != nil && g.Churn != nil {
			check("churn", *g.Churn, *t.MaxChurn, *g.Churn <= *t.MaxChurn)
		}
	}
	g.Decision, g.Reason = "promote", "every threshold holds"
	if g.Previous == "" {
		g.Reason = "no published run to compare with"
		if len(g.Checks) > 0 && g.Checks[0].Pass {
			g.Reason += "; coverage holds"
		}
	}
	for _, c := range g.Checks {
		if !c.Pass {
			g.Decision = "refuse"
			g.Reason = fmt.Sprintf("%s %.6g against the threshold %.6g", c.Name, c.Value, c.Threshold)
			break
		}
	}
}

// churnStats summarises churn.parquet.
type churnStats struct {
	Common, Added, Removed int
	// ChangedShare is the share of the previous run's queries whose list
	// changed, MeanJaccard their mean Jaccard@k: a query whose list is gone
	// (no longer a query, or emptied by the rules) counts as changed with
	// Jaccard 0, so lists that vanish move the churn as much as lists
	// that change. Queries new tonight are counted in Added only.
	ChangedShare, MeanJaccard float64
}

// writeChurn compares the published table prev with cur (both sorted by
// query, each list whole and by rank) query by query, streaming both, into
// churn.parquet at out.
func writeChurn(ctx context.Context, prev, cur, out string, k int) (churnStats, int64, error) {
	var cs churnStats
	w, err := schema.NewWriter[schema.ChurnCols](out, schema.RowGroupRows)
	if err != nil {
		return cs, 0, err
	}
	defer w.Close()
	pnext, pstop := iter.Pull2(lists(ctx, prev))
	defer pstop()
	cnext, cstop := iter.Pull2(lists(ctx, cur))
	defer cstop()
	pl, perr, pok := pnext()
	cl, cerr, cok := cnext()
	var c schema.ChurnCols
	var jsum float64
	changed := 0
	for pok || cok {
		if perr != nil {
			return cs, 0, fmt.Errorf("stages: publish: the published run's table: %w", perr)
		}
		if cerr != nil {
			return cs, 0, cerr
		}
		var ov int32
		var jac float64
		var inP, inC bool
		var q string
		switch {
		case pok && (!cok || pl.query < cl.query):
			q, inP = pl.query, true
			cs.Removed++
			pl, perr, pok = pnext()
		case cok && (!pok || cl.query < pl.query):
			q, inC = cl.query, true
			cs.Added++
			cl, cerr, cok = cnext()
		default:
			q, inP, inC = cl.query, true, true
			o, j := overlap(pl.items[:min(k, len(pl.items))], cl.items[:min(k, len(cl.items))])
			ov, jac = int32(o), j
			cs.Common++
			jsum += j
			if !slices.Equal(pl.items, cl.items) {
				changed++
			}
			pl, perr, pok = pnext()
			cl, cerr, cok = cnext()
		}
		c.Query, c.Overlap, c.Jaccard = append(c.Query, q), append(c.Overlap, ov), append(c.Jaccard, jac)
		c.InPrevious, c.InCurrent = append(c.InPrevious, inP), append(c.InCurrent, inC)
		if len(c.Query) >= 4096 {
			if err := w.Append(c); err != nil {
				return cs, 0, err
			}
			c = schema.ChurnCols{}
		}
	}
	if err := w.Append(c); err != nil {
		return cs, 0, err
	}
	n, err := w.Close()
	if n := cs.Common + cs.Removed; n > 0 {
		cs.ChangedShare, cs.MeanJaccard = float64(changed+cs.Removed)/float64(n), jsum/float64(n)
	}
	return cs, n, err
}

// overlap is |a ∩ b| and |a ∩ b| / |a ∪ b| (1 when both are empty) of two
// lists of distinct items.
func overlap(a, b []string) (int, float64) {
	in := make(map[string]bool, len(a))
	for _, x := range a {
		in[x] = true
	}
	n := 0
	for _, y := range b {
		if in[y] {
			n++
		}
	}
	u := len(a) + len(b) - n
	if u == 0 {
		return 0, 1
	}
	return n, float64(n) / float64(u)
}

// queryList is one query's items of a published table, by rank.
type queryList struct {
	query string
	items []string
}

// lists iterates over a published table's lists in order, reading one row
// group at a time; an error is yielded once and ends it.
func lists(ctx context.Context, path string) iter.Seq2[queryList, error] {
	return func(yield func(queryList, error) bool) {
		var cur queryList
		for b, err := range schema.Batches[schema.PublishedCols](ctx, path) {
			if err != nil {
				yield(queryList{}, err)
				return
			}
			for i := range b.Query {
				if b.Query[i] != cur.query && cur.items != nil {
					if !yield(cur, nil) {
						return
					}
					cur.items = nil
				}
				cur.query, cur.items = b.Query[i], append(cur.items, b.Item[i])
			}
		}
		if cur.items != nil {
			yield(cur, nil)
		}
	}
}

// promote is the publish node's After: with a root of runs and a gate that
// passed, it points the experiment's link at this run; a refused gate
// fails the node with ErrNotPromoted (also when it is up to date or
// restored, so a rerun answers as the first run did). Without a root it
// does nothing, whatever the gate says.
func promote(e *job.Resolved) func(dir string) error {
	return func(dir string) error {
		if e.RunRoot == "" {
			return nil // nothing to promote in: Run warned so
		}
		g, err := readGate(filepath.Join(dir, gateFile))
		if err != nil {
			return err
		}
		if g.Decision != "promote" {
			// The runner prefixes the node's ID.
			return fmt.Errorf("%w: %s (see %s; published/%s stays at %s)", ErrNotPromoted, g.Reason,
				filepath.Join(dir, gateFile), e.Name, cmp.Or(g.Previous, "no run"))
		}
		return pointLink(e.RunRoot, e.RunID, e.Name, g.Previous)
	}
}

// pointLink makes root/published/exp a relative symbolic link to
// ../<runID>/<exp>: a new link under a temporary name renamed over the old
// one, so a reader finds the old target or the new one and never neither.
// It holds root/published/.lock meanwhile, so experiments promoted at once
// by several processes do not race on the directory; each moves only its
// own link. It moves the link only from prev, the run this one's gate was
// compared with ("" for none): when the link has moved on since (a rerun
// of an older night, an Airflow clear of last week's task), moving it
// back would publish lists no gate compared with what is served, so that
// is ErrNotPromoted. Anything but monomer's own link at the name (a file,
// a directory a user put there) is refused, never replaced.
func pointLink(root, runID, exp, prev string) error {
	dir := filepath.Join(root, job.ReservedName)
	// The directory itself is monomer's: never a link followed elsewhere.
	switch fi, err := os.Lstat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %v", pipeline.ErrUsage, err)
		}
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("%w: %s is not a directory monomer made", pipeline.ErrUsage, dir)
		}
	case err != nil:
		return fmt.Errorf("%w: %v", pipeline.ErrUsage, err)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is %s, not the directory of published links monomer makes: not used", pipeline.ErrUsage, dir, sidefile.Kind(fi.Mode()))
	}
	l, err := lockPublished(dir)
	if err != nil {
		return err
	}
	defer l.Close() // drops the lock
	// A promotion killed between its two steps left its temporary link;
	// only a holder of the lock makes one, so none is live.
	stale, _ := filepath.Glob(filepath.Join(dir, "."+exp+".tmp-*"))
	for _, p := range stale {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			os.Remove(p) // a link only monomer makes; anything else stays
		}
	}
	link, target := linkPath(root, exp), linkTarget(runID, exp)
	switch fi, err := os.Lstat(link); {
	case errors.Is(err, fs.ErrNotExist):
		if prev != "" {
			return fmt.Errorf("%w: %s is gone since this run was compared with %s: not recreated by a run compared with another", ErrNotPromoted, link, prev)
		}
	case err != nil:
		return fmt.Errorf("stages: publish: %w", err)
	case fi.Mode()&os.ModeSymlink == 0:
		return fmt.Errorf("%w: %s is %s, not the link monomer makes: not replaced", pipeline.ErrUsage, link, sidefile.Kind(fi.Mode()))
	default:
		t, err := os.Readlink(link)
		if err != nil {
			return fmt.Errorf("stages: publish: %w", err)
		}
		if t == target {
			return nil
		}
		id, ok := linkRun(t, exp)
		if !ok {
			return fmt.Errorf("%w: %s names %s, not a run of this root (../RUN/%s): not monomer's link, not replaced", pipeline.ErrUsage, link, t, exp)
		}
		if _, err := os.Stat(filepath.Join(root, id, exp)); errors.Is(err, fs.ErrNotExist) {
			break // its run was deleted: nothing is served, so this one is
		}
		if prev == "" || t != linkTarget(prev, exp) {
			was := "nothing (it was the first)"
			if prev != "" {
				was = linkTarget(prev, exp)
			}
			return fmt.Errorf("%w: %s names %s, but this run was compared with %s: another run was published since; not moved",
				ErrNotPromoted, link, t, was)
		}
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.tmp-%d", exp, os.Getpid()))
	if err := os.Symlink(target, tmp); err != nil {
		return fmt.Errorf("stages: publish: %w", err)
	}
	promoteHook("linked", exp)
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("stages: publish: %w", err)
	}
	return cache.SyncDir(dir)
}

// lockPublished takes dir's lock, waiting for a concurrent promotion
// (which holds it for one rename) rather than failing. The lock file
// stays: removing it would let a waiter lock a file no longer there.
func lockPublished(dir string) (*os.File, error) {
	// Not through a link, and only an empty regular file: the lock is
	// monomer's own and it writes nothing into it.
	name := filepath.Join(dir, pipeline.LockName)
	f, err := sidefile.Open(name, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, sidefile.ErrForeign) {
		return nil, fmt.Errorf("%w: %v", pipeline.ErrUsage, err)
	}
	if err != nil {
		return nil, fmt.Errorf("stages: publish: %w", err)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != 0 {
		f.Close()
		return nil, fmt.Errorf("%w: %s is not monomer's lock (an empty file): not used", pipeline.ErrUsage, name)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stages: publish: lock %s: %w", f.Name(), err)
	}
	return f, nil
}

// servedBy is the published link that serves this node's run (RUNS/
// published/E naming ../RUN/E, RUN this run's directory), or "". It is
// found from where the node's inputs are, not from its parameters, so
// serving a run does not change its nodes' keys.
func servedBy(env *pipeline.Env) string {
	d, err := env.InDir("evaluate") // RUN/E/evaluate
	if err != nil {
		return ""
	}
	run := filepath.Dir(filepath.Dir(d))
	link := linkPath(filepath.Dir(run), env.Experiment)
	if t, err := os.Readlink(link); err == nil && t == linkTarget(filepath.Base(run), env.Experiment) {
		return link
	}
	return ""
}

// linkRun is the run id a published link's target names, when it is
// ../<id>/<exp> with id a run id monomer takes.
func linkRun(target, exp string) (string, bool) {
	rest, ok := strings.CutPrefix(target, ".."+string(filepath.Separator))
	if !ok {
		return "", false
	}
	id, e, ok := strings.Cut(rest, string(filepath.Separator))
	if !ok || e != exp || id == "" || id == "." || id == ".." || id == job.ReservedName || strings.ContainsAny(id, "/\\") {
		return "", false
	}
	return id, true
}

// promoteHook, when set by tests, is called at each step of a promotion.
var promoteHook = func(point, what string) {}

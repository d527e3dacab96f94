package stages

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"monomer/amazon"
	"monomer/graph"
	"monomer/imagefeat"
	"monomer/internal/par"
	"monomer/job"
	"monomer/pipeline"
	"monomer/schema"
)

// Ingest scopes an experiment: it reads the raw metadata, keeps the items
// under the category prefix that have a subcategory at the configured depth
// and a feature source (an image record, or at least one review), and keeps
// the edges of the experiment's graph between two such items of different
// subcategories (amazon.Subcategory, amazon.Keep, graph.CrossEdges). For a
// bag-of-words experiment it also
// keeps the reviews of those items, the only read of the raw reviews file.
// The co_review graph is derived here from that same read (graph.CoReview)
// and then filtered like the lists of the metadata.
type Ingest struct{}

var _ ExpStage[ingestParams] = Ingest{}

func (Ingest) Name() string   { return "ingest" }
func (Ingest) Deps() []string { return nil }

type ingestParams struct {
	Category    string  `json:"category"`
	Depth       int     `json:"depth"`
	Graph       string  `json:"graph"`
	Features    string  `json:"features"`
	RejectRatio float64 `json:"reject_ratio"`
	// Omitted when empty, so the keys of the 2014 and 2018 experiments
	// with a list graph are what they were before these fields existed.
	Format   string          `json:"format,omitempty"`
	CoReview *coReviewParams `json:"co_review,omitempty"`
	// The raw files, keyed by their content (Files), not by where they lie.
	// With data.format: catalogue, Meta is the items table and Reviews the
	// text table, read where the releases' files are (ingest_catalogue.go).
	Meta          string `json:"-"`
	Reviews       string `json:"-"` // "" without reviews
	ImageFeatures string `json:"-"` // "" but for image features
	Relations     string `json:"-"` // the catalogue's relations table; "" for a release
}

// Files are the metadata, the reviews and the image features, those given.
func (p ingestParams) Files() []string {
	files := []string{p.Meta}
	if p.Reviews != "" {
		files = append(files, p.Reviews)
	}
	if p.ImageFeatures != "" {
		files = append(files, p.ImageFeatures)
	}
	if p.Relations != "" {
		files = append(files, p.Relations)
	}
	return files
}

// coReviewParams are the co_review settings, keyed only by experiments
// whose graph is co_review.
type coReviewParams struct {
	WindowDays   int `json:"window_days"`
	MinUsers     int `json:"min_users"`
	MaxUserItems int `json:"max_user_items"`
}

func coReviewOf(e *job.Resolved) *coReviewParams {
	if e.Graph != coReviewGraph {
		return nil
	}
	s := e.Settings
	return &coReviewParams{s.CoReviewWindow.Get(), s.CoReviewMinUsers.Get(), s.CoReviewMaxUserItems.Get()}
}

// coReviewGraph is the graph derived from the reviews rather than read
// from the metadata's lists.
const coReviewGraph = "co_review"

func (Ingest) Params(e *job.Resolved) ingestParams {
	p := ingestParams{Category: e.Category, Depth: e.Depth.Get(), Graph: e.Graph, Features: e.Features,
		RejectRatio: e.Settings.RejectRatio.Get(), Format: e.Data.Format, CoReview: coReviewOf(e),
		Meta: e.Data.Meta, Reviews: e.Data.Reviews}
	if e.Features == "image" {
		p.ImageFeatures = e.Data.ImageFeatures
	}
	if e.Data.Format == job.FormatCatalogue {
		p.Meta, p.Reviews, p.Relations = e.Data.Items, e.Data.Text, e.Data.Relations
	}
	return p
}

// scopedItem is an item of the experiment while ingest collects them.
type scopedItem struct {
	asin, title, brand, sub, path string
	related                       []string
	nReviews                      int32
	hasImage                      bool
	id                            int32 // order of appearance in the metadata: co_review's item index
}

// rejectSink collects the rejects of the files a stage reads. Each file
// has its own counter (file), and reject_ratio applies to each file
// against its own lines: a file of a few thousand lines losing 1 % of
// them is not diluted by a reviews file a hundred times longer.
type rejectSink struct {
	rows  []amazon.Reject
	files []*fileRejects // in the order first named
	// catalogue: the rejects table has the catalogue's id and detail
	// columns (schema.CatalogueRejectsCols).
	catalogue bool
}

// fileRejects counts one input file's rejects and lines; its add is the
// reject callback of the file's reader.
type fileRejects struct {
	sink    *rejectSink
	path    string
	lines   int64 // once read: the denominator of the ratio
	rejects int64
	// firstRej is the file's first reject. It is kept here, not looked up
	// in sink.rows, whose File is a base name that two inputs in different
	// folders may share.
	firstRej amazon.Reject
}

// file is path's counter, made on first use.
func (r *rejectSink) file(path string) *fileRejects {
	for _, f := range r.files {
		if f.path == path {
			return f
		}
	}
	f := &fileRejects{sink: r, path: path}
	r.files = append(r.files, f)
	return f
}

func (f *fileRejects) add(j amazon.Reject) {
	if f.rejects == 0 {
		f.firstRej = j
	}
	f.rejects++
	f.sink.rows = append(f.sink.rows, j)
}

// first is the file's first reject (the zero Reject if it has none).
func (f *fileRejects) first() amazon.Reject {
	return f.firstRej
}

func (r *rejectSink) write(path string) (int64, error) {
	n := len(r.rows)
	file, errs, excerpt := make([]string, n), make([]string, n), make([]string, n)
	line, off := make([]int64, n), make([]int64, n)
	var id, detail []string
	if r.catalogue {
		id, detail = make([]string, n), make([]string, n)
	}
	for i, j := range r.rows {
		file[i], line[i], off[i], errs[i], excerpt[i] = j.File, j.Line, j.Offset, j.Err, j.Excerpt
		if r.catalogue {
			id[i], detail[i] = j.ID, j.Detail
		}
	}
	if r.catalogue {
		return schema.Write(path, schema.CatalogueRejectsCols{File: file, Line: line, Offset: off, Error: errs, Excerpt: excerpt, ID: id, Detail: detail})
	}
	return schema.Write(path, schema.RejectsCols{File: file, Line: line, Offset: off, Error: errs, Excerpt: excerpt})
}

// rejectPlace is where a reject sits: a line and byte of a text file, or
// a row of a table (a catalogue's Parquet file has no byte offsets).
func rejectPlace(j amazon.Reject) string {
	if j.Offset < 0 {
		return fmt.Sprintf("row %d", j.Line)
	}
	return fmt.Sprintf("line %d (byte %d)", j.Line, j.Offset)
}

// check fails with ErrBadInput once a file's rejects exceed ratio of its
// lines (a negative ratio never fails), leaving the rejects table at
// env.FailurePath so none is lost.
func (r *rejectSink) check(env *pipeline.Env, ratio float64) error {
	for _, f := range r.files {
		if ratio < 0 || f.rejects == 0 || float64(f.rejects) <= ratio*float64(f.lines) {
			continue
		}
		j := f.first()
		err := fmt.Errorf("%w: %s: %d of %d lines rejected (over reject_ratio %g); first: %s: %s%s",
			pipeline.ErrBadInput, filepath.Base(f.path), f.rejects, f.lines, ratio, rejectPlace(j), j.Why(), formatHint(j))
		path := env.FailurePath("rejects.parquet")
		if werr := writeAtomic(path, func(tmp string) error { _, err := r.write(tmp); return err }); werr != nil {
			return fmt.Errorf("%w (and the rejects table could not be kept: %v)", err, werr)
		}
		return fmt.Errorf("%w; all rejects in %s", err, path)
	}
	return nil
}

// warnings are one WARN line for each file with rejects, however few: a
// run under the ratio still lost those lines.
func (r *rejectSink) warnings(stage string) []pipeline.Warning {
	var ws []pipeline.Warning
	for _, f := range r.files {
		if f.rejects == 0 {
			continue
		}
		j := f.first()
		ws = append(ws, pipeline.Warning{
			Msg: fmt.Sprintf("%s: %d of %d lines rejected (first: %s: %s); see %s's rejects.parquet",
				filepath.Base(f.path), f.rejects, f.lines, rejectPlace(j), j.Why(), stage),
			Attrs: map[string]any{"file": f.path, "rejects": f.rejects, "lines": f.lines},
		})
	}
	return ws
}

// formatHint names the setting a user most likely got wrong when a reject
// looks like a 2023 metadata line read as 2014 or 2018 (its flat
// "categories" list where 2014 has a list of paths, or no asin at all), or
// the other way round (no parent_asin, or 2014's list of paths).
func formatHint(j amazon.Reject) string {
	if j.Err == "missing asin" || strings.HasPrefix(j.Err, "field categories: expected a list, found a string") {
		return ` (a file of the 2023 release? set data.format: "2023")`
	}
	if j.Err == "missing parent_asin" || strings.HasPrefix(j.Err, "field categories: expected a string, found a list") {
		return " (a file of the 2014 or 2018 release? leave data.format unset)"
	}
	return ""
}

// pathSet collects the distinct category paths cut to a depth, bounded so
// that a file with very many distinct paths cannot grow it without limit.
type pathSet struct {
	depth int
	seen  map[string]struct{}
	buf   []byte
}

// maxPaths bounds pathSet: far above the few thousand category paths of a
// whole Amazon release at any depth.
const maxPaths = 100_000

func newPathSet(depth int) *pathSet { return &pathSet{depth: depth, seen: map[string]struct{}{}} }

func (s *pathSet) add(paths [][]string) {
	for _, p := range paths {
		if len(p) < s.depth || len(s.seen) >= maxPaths {
			continue
		}
		s.buf = s.buf[:0]
		for i, c := range p[:s.depth] {
			if i > 0 {
				s.buf = append(s.buf, " > "...)
			}
			s.buf = append(s.buf, c...)
		}
		if _, ok := s.seen[string(s.buf)]; !ok {
			s.seen[string(s.buf)] = struct{}{}
		}
	}
}

func (s *pathSet) list() []string { return slices.Collect(maps.Keys(s.seen)) }

func (Ingest) Run(ctx context.Context, env *pipeline.Env, e ingestParams) (*pipeline.Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	in := &ingestion{env: env, exp: e, stats: map[string]any{}}
	in.rej.catalogue = e.Format == job.FormatCatalogue
	in.startReads(ctx)
	defer func() { cancel(); in.bg.Wait() }() // an early return leaves no read running
	sc, err := in.scopeItems(ctx)
	if err != nil {
		return nil, err
	}
	nReviews, err := in.reviews(ctx, sc)
	if err != nil {
		return nil, err
	}
	if err := in.images(sc); err != nil {
		return nil, err
	}
	kept, err := in.keep(sc)
	if err != nil {
		return nil, err
	}
	if err := in.writeItems(kept); err != nil {
		return nil, err
	}
	nEdges, err := in.writeEdges(sc, kept)
	if err != nil {
		return nil, err
	}
	nRejects, err := in.writeRejects()
	if err != nil {
		return nil, err
	}
	rows := map[string]int64{"items": int64(len(kept)), "edges": nEdges, "rejects": nRejects}
	if in.exp.Features == "bow" {
		rows["reviews"] = nReviews
	}
	ws := append(in.rej.warnings("ingest"), in.catalogueWarnings()...)
	return &pipeline.Result{Rows: rows, Stats: in.stats, Warnings: ws}, nil
}

// ingestion is one run of ingest: its experiment, and what its steps
// count as they go.
type ingestion struct {
	env   *pipeline.Env
	exp   ingestParams
	stats map[string]any
	rej   rejectSink

	// The reads that need nothing of the metadata run beside it
	// (startReads); bg joins them.
	bg     sync.WaitGroup
	scan   *asinScan     // the image features' ASINs; nil without image features
	counts *reviewCounts // the reviews, when only counted; nil otherwise

	// A catalogue's pairs of the experiment's relation and documents read,
	// and the rows among them naming no item (ingest_catalogue.go).
	pairs, docs  int64
	drops        catalogueDrops
	utf8Warnings []pipeline.Warning
}

// startReads starts, beside the metadata's read, the reads that do not
// depend on it: the ASINs of the image-feature file, and the reviews file
// of an experiment that only counts each item's reviews (image features
// and a list graph). Their results, rejects and errors are taken where the
// serial order reaches them (reviews, images), so the outputs, the order
// of the rejects and the error reported when several files are bad are
// those of reading one file after the other.
func (in *ingestion) startReads(ctx context.Context) {
	if in.exp.Features == "image" {
		s := &asinScan{}
		in.scan = s
		in.bg.Go(func() { s.asins, s.err = imagefeat.ScanASINs(ctx, in.exp.ImageFeatures) })
	}
	if in.exp.Reviews != "" && in.exp.Format != job.FormatCatalogue && in.exp.Features != "bow" && in.exp.CoReview == nil {
		c := &reviewCounts{scope: make(chan scopeReady, 1), pending: map[string]int32{}}
		in.counts = c
		in.bg.Go(func() { c.read(ctx, in.exp) })
	}
}

// asinScan is imagefeat.ScanASINs of the image features, read beside the
// metadata.
type asinScan struct {
	asins []string
	err   error
}

// scope is the metadata's items in the experiment's category scope, and
// what the scoping counted for a message on an empty scope.
type scope struct {
	byASIN            map[string]*scopedItem
	inOrder           []*scopedItem // by id
	meta              amazon.Stats
	outOfScope, noSub int64
	others            *pathSet            // for "did you mean" when nothing matches
	deepest           int                 // levels below the prefix, over its items
	ids               map[string]struct{} // catalogue: every item of the items table
	rejected          map[string]struct{} // catalogue: the ids of rejected items rows, and of no item
	prefix            []string            // the experiment's category, by level
	// outside holds idHash of each item outside the scope, sorted once
	// the metadata is read (a release's; a catalogue has ids), so that
	// class can tell a target outside the scope from one in no metadata
	// line. srcOutside counts the related entries of those items: pairs
	// whose source leaves the scope.
	outside    []uint64
	srcOutside int64
}

// scopeItems reads the metadata and keeps the items in the category scope
// that have a subcategory at the experiment's depth (amazon.Subcategory).
func (in *ingestion) scopeItems(ctx context.Context) (*scope, error) {
	if in.exp.Format == job.FormatCatalogue {
		return in.scopeCatalogue(ctx)
	}
	exp := in.exp
	sc := newScope(exp)
	tr := in.env.Track("read "+filepath.Base(exp.Meta), 0)
	rej := in.rej.file(exp.Meta)
	ms, err := amazon.ReadMetaFormat(ctx, exp.Format, exp.Meta, func(p *amazon.Product) error {
		tr.Add(1)
		sc.add(p, exp, p.Related(exp.Graph))
		return nil
	}, rej.add)
	tr.Done()
	if err != nil {
		return nil, err
	}
	if ms.Records == 0 {
		msg := fmt.Sprintf("%s holds no product records (%d lines)", exp.Meta, ms.Lines)
		if rej.rejects > 0 {
			j := rej.first()
			msg += fmt.Sprintf("; first reject: line %d: %s%s", j.Line, j.Err, formatHint(j))
		}
		return nil, fmt.Errorf("%w: %s", pipeline.ErrBadInput, msg)
	}
	slices.Sort(sc.outside)
	sc.meta = ms
	rej.lines = ms.Lines
	in.stats["meta_lines"] = ms.Lines
	in.stats["meta_duplicates"] = ms.Duplicates
	in.stats["items_out_of_scope"] = sc.outOfScope
	in.stats["items_dropped_no_subcategory"] = sc.noSub
	return sc, nil
}

func newScope(exp ingestParams) *scope {
	prefix := amazon.CategoryPrefix(exp.Category)
	return &scope{byASIN: map[string]*scopedItem{}, others: newPathSet(len(prefix)), prefix: prefix}
}

// add scopes p: an item of the experiment if it lies under the category
// prefix with a subcategory at the depth (amazon.Subcategory), counted
// otherwise; related is its related list of the experiment's graph.
func (sc *scope) add(p *amazon.Product, exp ingestParams, related []string) {
	sub, path, matched, ok := amazon.Subcategory(p.Categories, sc.prefix, exp.Depth)
	if !ok {
		sc.srcOutside += int64(len(related))
		if sc.ids == nil {
			sc.outside = append(sc.outside, idHash(p.ASIN))
		}
	}
	switch {
	case !matched:
		sc.outOfScope++
		sc.others.add(p.Categories)
		return
	case !ok:
		sc.noSub++
		sc.deepest = max(sc.deepest, strings.Count(path, " > ")+1-len(sc.prefix))
		return
	}
	it := &scopedItem{
		asin: p.ASIN, title: p.Title, brand: p.Brand, sub: sub, path: path,
		related: slices.Clone(related), id: int32(len(sc.inOrder)),
	}
	sc.byASIN[p.ASIN] = it
	sc.inOrder = append(sc.inOrder, it)
}

// reviews counts each scoped item's reviews; a bag-of-words experiment
// needs at least one, and keeps the in-scope reviews for features and
// bow-shard, which then need not read the raw file again: each of them is
// an item of the experiment, having a review. A co_review experiment
// derives its graph from them. It returns the number of reviews kept.
func (in *ingestion) reviews(ctx context.Context, sc *scope) (int64, error) {
	var co *coReviews
	if p := in.exp.CoReview; p != nil {
		co = &coReviews{params: *p, users: map[string]int32{}}
	}
	var nKept int64
	switch {
	case in.counts != nil:
		if err := in.countedReviews(sc); err != nil {
			return 0, err
		}
	case in.exp.Reviews != "":
		var err error
		if nKept, err = in.readReviews(ctx, sc, co); err != nil {
			return 0, err
		}
	}
	if err := in.rej.check(in.env, in.exp.RejectRatio); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if co != nil {
		if err := co.derive(ctx, sc.inOrder, in.stats); err != nil {
			return 0, err
		}
	}
	return nKept, nil
}

// readReviews is the one read of the raw reviews file (see reviews).
func (in *ingestion) readReviews(ctx context.Context, sc *scope, co *coReviews) (int64, error) {
	exp := in.exp
	var kept *reviewSink
	if exp.Features == "bow" {
		w, err := schema.NewWriter[schema.ReviewsCols](filepath.Join(in.env.OutDir, reviewsFile), reviewGroupRows)
		if err != nil {
			return 0, err
		}
		kept = newReviewSink(w)
		defer kept.abort() // on an early return; the checked close is below
	}
	tr := in.env.Track("read "+filepath.Base(exp.Reviews), 0)
	var rs amazon.Stats
	var n int64
	rej := in.rej.file(exp.Reviews)
	// co_review relates items through each review's user and time: a
	// review without them is a reject here, not a review of nobody at
	// 1970 (amazon.ReviewOptions). Text alone needs neither.
	opts := amazon.ReviewOptions{Format: exp.Format, UserTime: co != nil}
	docs := reviewsOf(opts, exp.Reviews, rej.add, &rs)
	if exp.Format == job.FormatCatalogue {
		docs = in.catalogueDocs(ctx, sc, &rs)
	}
	for r, err := range docs {
		if errors.Is(err, amazon.ErrTimeUnit) {
			err = fmt.Errorf("%w: %w", pipeline.ErrBadInput, err)
		}
		if err == nil && n%4096 == 0 {
			err = ctx.Err()
		}
		if it := sc.byASIN[r.ASIN]; err == nil && it != nil {
			it.nReviews++
			if kept != nil {
				err = kept.add(&r)
			}
			if co != nil {
				co.add(it.id, &r)
			}
		}
		if err != nil {
			tr.Done()
			return 0, kept.before(err)
		}
		n++
		tr.Add(1)
	}
	tr.Done()
	if err := kept.before(nil); err != nil {
		return 0, err
	}
	if err := in.noReviews(rs, rej); err != nil {
		return 0, err
	}
	var nKept int64
	if kept != nil {
		var err error
		if nKept, err = kept.close(); err != nil {
			return 0, err
		}
	}
	rej.lines = rs.Lines
	in.stats["review_lines"] = rs.Lines
	return nKept, nil
}

// noReviews is the error of a reviews file without a review record, nil
// if it has one.
func (in *ingestion) noReviews(rs amazon.Stats, rej *fileRejects) error {
	if rs.Records > 0 {
		return nil
	}
	msg := fmt.Sprintf("%s holds no review records (%d lines)", in.exp.Reviews, rs.Lines)
	if in.exp.Format == job.FormatCatalogue {
		msg = fmt.Sprintf("%s holds no documents (%d rows read)", in.exp.Reviews, rs.Lines) // a text table: rows, not reviews
	}
	if rej.rejects > 0 {
		j := rej.first()
		msg += fmt.Sprintf("; %d rejects, the first: %s: %s%s", rej.rejects, rejectPlace(j), j.Why(), formatHint(j))
	}
	return fmt.Errorf("%w: %s", pipeline.ErrBadInput, msg)
}

// reviewCounts reads the reviews file beside the metadata when each item
// only needs its number of reviews. Until the metadata's scope arrives it
// counts every ASIN in pending; from then on it counts straight into the
// scoped items, so pending holds only the ASINs read while the metadata
// was (the reviews file is the longer one).
type reviewCounts struct {
	scope   chan scopeReady // the scope, once the metadata is read
	pending map[string]int32
	rejects []amazon.Reject // in file order, for the sink once the metadata's are in
	stats   amazon.Stats
	err     error
}

// scopeReady hands the scope over to the reviews' read, with the tracker
// of that read (a bar drawn only once the metadata's is done).
type scopeReady struct {
	sc *scope
	tr pipeline.Tracker
}

// read is readReviews without a table or co_review: the same context
// checks, errors and counts.
func (c *reviewCounts) read(ctx context.Context, exp ingestParams) {
	var (
		sc *scope
		tr pipeline.Tracker
		n  int64
	)
	opts := amazon.ReviewOptions{Format: exp.Format}
	reject := func(j amazon.Reject) { c.rejects = append(c.rejects, j) }
	for r, err := range reviewsOf(opts, exp.Reviews, reject, &c.stats) {
		if errors.Is(err, amazon.ErrTimeUnit) {
			err = fmt.Errorf("%w: %w", pipeline.ErrBadInput, err)
		}
		if err == nil && n%4096 == 0 {
			err = ctx.Err()
			if sc == nil {
				select {
				case s := <-c.scope:
					sc, tr = s.sc, s.tr
					c.flush(sc)
					tr.Add(n)
				default:
				}
			}
		}
		if err != nil {
			c.err = err
			return
		}
		if sc == nil {
			c.pending[r.ASIN]++
		} else {
			if it := sc.byASIN[r.ASIN]; it != nil {
				it.nReviews++
			}
			tr.Add(1)
		}
		n++
	}
}

// flush adds the pending counts to the scoped items.
func (c *reviewCounts) flush(sc *scope) {
	for a, k := range c.pending {
		if it := sc.byASIN[a]; it != nil {
			it.nReviews += k
		}
	}
	c.pending = nil
}

// countedReviews takes the reviews counted beside the metadata: it hands
// them the scope, waits for the end of their read and then does what
// readReviews does after its loop.
func (in *ingestion) countedReviews(sc *scope) error {
	c := in.counts
	tr := in.env.Track("read "+filepath.Base(in.exp.Reviews), 0)
	c.scope <- scopeReady{sc, tr}
	in.bg.Wait() // the image features' scan too, which images waits for anyway
	tr.Done()
	if c.err != nil {
		return c.err
	}
	if c.pending != nil { // read before the scope was handed over
		c.flush(sc)
	}
	rej := in.rej.file(in.exp.Reviews)
	for _, j := range c.rejects {
		rej.add(j)
	}
	if err := in.noReviews(c.stats, rej); err != nil {
		return err
	}
	rej.lines = c.stats.Lines
	in.stats["review_lines"] = c.stats.Lines
	return nil
}

// images marks the scoped items having an image-feature record, for an
// image experiment: only their presence matters here. A repeated ASIN is a
// reject (the first record is the one used).
func (in *ingestion) images(sc *scope) error {
	if in.exp.Features != "image" {
		return nil
	}
	path := in.exp.ImageFeatures
	in.bg.Wait() // for in.scan, started by startReads
	asins, err := in.scan.asins, in.scan.err
	if err != nil {
		return err
	}
	if len(asins) == 0 {
		return fmt.Errorf("%w: %s holds no image-feature records", pipeline.ErrBadInput, path)
	}
	first := make(map[string]int, len(asins))
	rej := in.rej.file(path)
	for k, a := range asins {
		if j, dup := first[a]; dup {
			rej.add(amazon.Reject{
				File: filepath.Base(path), Line: int64(k + 1),
				Offset: int64(k) * int64(imagefeat.RecordSize(imagefeat.Dim)),
				Err:    fmt.Sprintf("duplicate asin %s (first at record %d)", a, j+1), Excerpt: a,
			})
			continue
		}
		first[a] = k
		if it := sc.byASIN[a]; it != nil {
			it.hasImage = true
		}
	}
	rej.lines = int64(len(asins))
	in.stats["image_records"] = len(asins)
	return in.rej.check(in.env, in.exp.RejectRatio)
}

// need is the feature source the experiment's items must have.
func need(features string) amazon.Need {
	switch features {
	case "image":
		return amazon.NeedImage
	case "bow":
		return amazon.NeedReview
	}
	return amazon.NeedNothing
}

// keep applies the feature-source rule (amazon.Keep): the items of the
// experiment, in item order. An empty scope is bad input (a typo, the wrong
// file), failed here rather than after three empty stages.
func (in *ingestion) keep(sc *scope) ([]*scopedItem, error) {
	cands := make([]amazon.Candidate, len(sc.inOrder))
	for k, it := range sc.inOrder {
		cands[k] = amazon.Candidate{ASIN: it.asin, HasImage: it.hasImage, Reviews: it.nReviews}
	}
	idx, noImage, noReviews := amazon.Keep(cands, need(in.exp.Features))
	in.stats["items_dropped_no_image"] = noImage
	in.stats["items_dropped_no_reviews"] = noReviews
	if len(idx) == 0 {
		return nil, sc.emptyError(in.env.Experiment, in.exp, noImage, noReviews)
	}
	kept := make([]*scopedItem, len(idx))
	for i, k := range idx {
		kept[i] = sc.inOrder[k]
	}
	return kept, nil
}

// emptyError says why an experiment has no items, with the category paths
// of the file closest to its category when none matched.
func (sc *scope) emptyError(name string, exp ingestParams, noImage, noReviews int64) error {
	msg := fmt.Sprintf("experiment %s has no items in scope: category %q in %s: of %d products, %d outside the prefix, %d without a subcategory at depth %d",
		name, exp.Category, filepath.Base(exp.Meta), sc.meta.Records, sc.outOfScope, sc.noSub, exp.Depth)
	if sc.noSub > 0 {
		msg += fmt.Sprintf(" (the deepest path goes %d levels below the prefix)", sc.deepest)
	}
	msg += fmt.Sprintf(", %d without an image, %d without reviews", noImage, noReviews)
	if sc.outOfScope == sc.meta.Records {
		var quoted []string
		for _, p := range amazon.ClosestPaths(exp.Category, sc.others.list(), 3) {
			quoted = append(quoted, strconv.Quote(p))
		}
		if len(quoted) > 0 {
			msg += "; closest category paths in the file: " + strings.Join(quoted, ", ")
		}
	}
	return fmt.Errorf("%w: %s", pipeline.ErrBadInput, msg)
}

// writeItems writes the items table, row i item i.
func (in *ingestion) writeItems(kept []*scopedItem) error {
	n := len(kept)
	asin, title, brand, sub, path := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	nrev, hasImg := make([]int32, n), make([]bool, n)
	subs := map[string]bool{}
	for i, it := range kept {
		asin[i], title[i], brand[i], sub[i], path[i], nrev[i], hasImg[i] = it.asin, it.title, it.brand, it.sub, it.path, it.nReviews, it.hasImage
		subs[it.sub] = true
	}
	in.stats["subcategories"] = len(subs)
	in.stats["items"] = n
	_, err := schema.Write(filepath.Join(in.env.OutDir, "items.parquet"), schema.ItemsCols{ASIN: asin, Title: title, Brand: brand,
		Subcategory: sub, CategoryPath: path, NReviews: nrev, HasImage: hasImg})
	return err
}

// writeEdges writes the edges of the experiment's graph between its items
// (graph.CrossEdges) and returns their number. Its stats count every
// related entry dropped, by the first rule it breaks: its source or its
// target is outside the scope, in it without a feature source, in no row
// of the input (or, for a catalogue, only in rejected items rows), then
// CrossEdges' own rules.
func (in *ingestion) writeEdges(sc *scope, kept []*scopedItem) (int64, error) {
	its := &items{asin: make([]string, len(kept))}
	sub := make([]string, len(kept))
	at := make([]int, len(kept)+1) // where each item's targets start in all
	for i, it := range kept {
		its.asin[i], sub[i] = it.asin, it.sub
		at[i+1] = at[i] + len(it.related)
	}
	index := its.rows()
	// The targets' rows looked up on all cores (the maps are only read),
	// each item's into its own stretch of one array: a serial second at
	// Women's size. A target that is no item is classed in its span.
	const span = 4096
	related, all := make([][]int32, len(kept)), make([]int32, at[len(kept)])
	classes := make([][idUnknown + 1]int64, (len(kept)+span-1)/span)
	par.Spans(len(kept), span, 0, func(lo, hi int) {
		c := &classes[lo/span]
		for i := lo; i < hi; i++ {
			row := all[at[i]:at[i+1]:at[i+1]]
			for k, b := range kept[i].related {
				j, ok := index[b]
				if !ok {
					j = graph.NotItem
					c[sc.class(b)]++
				}
				row[k] = j
			}
			related[i] = row
		}
	})
	var notItem [idUnknown + 1]int64
	for _, c := range classes {
		for k := range c {
			notItem[k] += c[k]
		}
	}
	var srcNoFeature int64
	for _, it := range sc.inOrder {
		srcNoFeature += int64(len(it.related))
	}
	srcNoFeature -= int64(at[len(kept)])
	edges, st := graph.CrossEdges(related, sub)
	in.stats["edges"] = len(edges)
	in.stats["edges_dropped_source_out_of_scope"] = sc.srcOutside
	in.stats["edges_dropped_source_no_feature"] = srcNoFeature
	in.stats["edges_dropped_target_out_of_scope"] = notItem[idOutside]
	in.stats["edges_dropped_target_no_feature"] = notItem[idInScope]
	in.stats["edges_dropped_target_unknown"] = notItem[idUnknown]
	if in.exp.Format == job.FormatCatalogue {
		in.stats["edges_dropped_target_rejected"] = notItem[idRejected]
	}
	in.stats["edges_dropped_self_loop"] = st.SelfLoop
	in.stats["edges_dropped_same_subcategory"] = st.SameSubcategory
	in.stats["edges_dropped_duplicate"] = st.Duplicate
	left := sc.srcOutside + srcNoFeature + notItem[idOutside] + notItem[idInScope]
	if err := in.catalogueGraph(len(edges), st, left, notItem[idUnknown]+notItem[idRejected]+in.drops.srcUnknown+in.drops.srcRejected); err != nil {
		return 0, err
	}
	return writeEdges(filepath.Join(in.env.OutDir, "edges.parquet"), its, in.exp.Graph, edges)
}

// writeRejects writes every reject of the run, superseding a previous
// failure's evidence, and returns their number.
func (in *ingestion) writeRejects() (int64, error) {
	n, err := in.rej.write(filepath.Join(in.env.OutDir, "rejects.parquet"))
	if err != nil {
		return 0, err
	}
	in.stats["rejects"] = n
	os.Remove(in.env.FailurePath("rejects.parquet")) // a previous failure's evidence, now superseded
	return n, nil
}

// reviewsOf is amazon.ReviewsWith, the one door to the reviews file; a
// test counts the reads through it.
var reviewsOf = amazon.ReviewsWith

// coReviews collects the review events of in-scope items for the co_review
// graph: 16 bytes a review, plus each distinct reviewer's id once.
type coReviews struct {
	params coReviewParams
	users  map[string]int32
	events []graph.Review
}

// add takes a review read with amazon.ReviewOptions.UserTime: it has a
// reviewer and a time in the release's span.
func (c *coReviews) add(item int32, r *amazon.Review) {
	u, ok := c.users[r.ReviewerID]
	if !ok {
		u = int32(len(c.users))
		c.users[r.ReviewerID] = u
	}
	c.events = append(c.events, graph.Review{User: u, Item: item, Time: r.UnixReviewTime})
}

// derive sets each scoped item's related list to its co-review targets;
// the filter every graph goes through then keeps the edges between items
// of the experiment in different subcategories.
func (c *coReviews) derive(ctx context.Context, items []*scopedItem, stats map[string]any) error {
	const day = 24 * 60 * 60
	n := len(c.events)
	edges, st, err := graph.CoReview(ctx, c.events, graph.CoReviewConfig{
		Window: int64(c.params.WindowDays) * day, MinUsers: c.params.MinUsers, MaxUserItems: c.params.MaxUserItems,
	})
	if err != nil {
		return err
	}
	c.events = nil
	for _, e := range edges {
		src := items[e.Src]
		src.related = append(src.related, items[e.Dst].asin)
	}
	stats["co_review_reviews"] = n
	stats["co_review_users"] = st.Users
	stats["co_review_users_skipped"] = st.UsersSkipped
	stats["co_review_repeat_reviews"] = st.RepeatReviews
	stats["co_review_user_pairs"] = st.UserPairs
	stats["co_review_pairs"] = st.Pairs
	stats["co_review_pairs_kept"] = st.Edges
	return nil
}

// reviewsFile is the in-scope reviews of a bag-of-words experiment, among
// ingest's outputs.
const reviewsFile = "reviews.parquet"

// reviewGroupRows is the reviews table's row-group length: its writer and
// each reader hold one group whatever the number of reviews (an estimated
// 5 to 10 MB of text at a few hundred bytes a review; not measured on the
// real files).
const reviewGroupRows = 1 << 14

// reviewBatch is how many reviews ingest collects before handing them to
// the table's writer.
const reviewBatch = 1024

// reviewSink writes the in-scope reviews as ingest reads them, in batches
// encoded and compressed beside the read (schema.Queue; for a
// bag-of-words experiment that is a third of ingest's CPU). A batch's
// failed write comes before whatever the read met after it (before).
type reviewSink struct {
	q     *schema.Queue[schema.ReviewsCols]
	batch schema.ReviewsCols // filling, on the reading goroutine
}

// sinkBatches is how many full batches may wait for the writer.
const sinkBatches = 4

func newReviewSink(w *schema.Writer[schema.ReviewsCols]) *reviewSink {
	return &reviewSink{q: schema.NewQueue(w, sinkBatches)}
}

func (s *reviewSink) add(r *amazon.Review) error {
	b := &s.batch
	b.ASIN, b.Summary, b.Text = append(b.ASIN, r.ASIN), append(b.Summary, r.Summary), append(b.Text, r.ReviewText)
	if len(b.ASIN) < reviewBatch {
		return nil
	}
	full := s.batch
	s.batch = schema.ReviewsCols{}
	return s.q.Append(full)
}

// before waits for the batches sent to be written and returns the first
// write error, or err if they were written: a nil sink returns err.
func (s *reviewSink) before(err error) error {
	if s == nil {
		return err
	}
	if werr := s.q.Wait(); werr != nil {
		return werr
	}
	return err
}

// close writes the last batch and finishes the table: its rows.
func (s *reviewSink) close() (int64, error) {
	if len(s.batch.ASIN) > 0 {
		if err := s.q.Append(s.batch); err != nil {
			s.q.Close()
			return 0, err
		}
		s.batch = schema.ReviewsCols{}
	}
	return s.q.Close()
}

// abort ends the writing goroutine and closes the file (after close too).
func (s *reviewSink) abort() { s.q.Close() }

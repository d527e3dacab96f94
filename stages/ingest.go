package stages

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"monomer/amazon"
	"monomer/graph"
	"monomer/imagefeat"
	"monomer/job"
	"monomer/pipeline"
	"monomer/schema"
)

// Ingest scopes an experiment: it reads the raw metadata, keeps the items
// under the category prefix that have a subcategory at the configured depth
// and a feature source (an image record, or at least one review), and keeps
// the edges of the experiment's graph between two such items of different
// subcategories (SPEC section 2). For a bag-of-words experiment it also
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
	Meta          string `json:"-"`
	Reviews       string `json:"-"` // "" without reviews
	ImageFeatures string `json:"-"` // "" but for image features
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
	return &coReviewParams{s.CoReviewWindow.Get(), s.CoReviewMinUsers, s.CoReviewMaxUserItems}
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

func related(p *amazon.Product, graph string) []string {
	switch graph {
	case "also_bought":
		return p.AlsoBought
	case "also_viewed":
		return p.AlsoViewed
	case "bought_together":
		return p.BoughtTogether
	}
	return nil
}

// rejectSink collects rejects of all files read by a stage.
type rejectSink struct {
	rows []amazon.Reject
}

func (r *rejectSink) add(j amazon.Reject) { r.rows = append(r.rows, j) }

func (r *rejectSink) write(path string) (int64, error) {
	n := len(r.rows)
	file, errs, excerpt := make([]string, n), make([]string, n), make([]string, n)
	line, off := make([]int64, n), make([]int64, n)
	for i, j := range r.rows {
		file[i], line[i], off[i], errs[i], excerpt[i] = j.File, j.Line, j.Offset, j.Err, j.Excerpt
	}
	return schema.Write(path, schema.RejectsCols{File: file, Line: line, Offset: off, Error: errs, Excerpt: excerpt})
}

// check fails with ErrBadInput once rejects exceed ratio of the lines read,
// leaving the rejects table at env.FailurePath so none is lost.
func (r *rejectSink) check(env *pipeline.Env, lines int64, ratio float64) error {
	if ratio < 0 || len(r.rows) == 0 || float64(len(r.rows)) <= ratio*float64(lines) {
		return nil
	}
	j := r.rows[0]
	err := fmt.Errorf("%w: %d of %d lines rejected (over %g); first: %s line %d (byte %d): %s%s",
		pipeline.ErrBadInput, len(r.rows), lines, ratio, j.File, j.Line, j.Offset, j.Err, formatHint(j))
	path := env.FailurePath("rejects.parquet")
	if werr := writeAtomic(path, func(tmp string) error { _, err := r.write(tmp); return err }); werr != nil {
		return fmt.Errorf("%w (and the rejects table could not be kept: %v)", err, werr)
	}
	return fmt.Errorf("%w; all rejects in %s", err, path)
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
	prefix := amazon.CategoryPrefix(e.Category)
	stats := map[string]any{}
	var rej rejectSink
	var lines int64

	// Metadata: scope the items.
	scoped := map[string]*scopedItem{}
	var inOrder []*scopedItem // scoped by id
	var outOfScope, noSub int64
	others := newPathSet(len(prefix)) // for "did you mean" when nothing matches
	deepest := 0                      // levels below the prefix, over its items
	tr := env.Track("read "+filepath.Base(e.Meta), 0)
	ms, err := amazon.ReadMetaFormat(ctx, e.Format, e.Meta, func(p *amazon.Product) error {
		tr.Add(1)
		sub, path, matched, ok := amazon.Subcategory(p.Categories, prefix, e.Depth)
		switch {
		case !matched:
			outOfScope++
			others.add(p.Categories)
			return nil
		case !ok:
			noSub++
			deepest = max(deepest, strings.Count(path, " > ")+1-len(prefix))
			return nil
		}
		it := &scopedItem{
			asin: p.ASIN, title: p.Title, brand: p.Brand, sub: sub, path: path,
			related: slices.Clone(related(p, e.Graph)), id: int32(len(inOrder)),
		}
		scoped[p.ASIN] = it
		inOrder = append(inOrder, it)
		return nil
	}, rej.add)
	tr.Done()
	if err != nil {
		return nil, err
	}
	if ms.Records == 0 {
		msg := fmt.Sprintf("%s holds no product records (%d lines)", e.Meta, ms.Lines)
		if len(rej.rows) > 0 {
			j := rej.rows[0]
			msg += fmt.Sprintf("; first reject: line %d: %s%s", j.Line, j.Err, formatHint(j))
		}
		return nil, fmt.Errorf("%w: %s", pipeline.ErrBadInput, msg)
	}
	lines += ms.Lines
	stats["meta_lines"] = ms.Lines
	stats["meta_duplicates"] = ms.Duplicates
	stats["items_out_of_scope"] = outOfScope
	stats["items_dropped_no_subcategory"] = noSub

	// Reviews: counted per item; bow experiments need at least one, and
	// keep the in-scope reviews for features and bow-shard, which then need
	// not read the raw file again: each of them is an item of the
	// experiment, having a review.
	var nKept int64
	var co *coReviews
	if p := e.CoReview; p != nil {
		co = &coReviews{params: *p, users: map[string]int32{}}
	}
	if e.Reviews != "" {
		var kept *reviewSink
		if e.Features == "bow" {
			w, err := schema.NewWriter[schema.ReviewsCols](filepath.Join(env.OutDir, reviewsFile), reviewGroupRows)
			if err != nil {
				return nil, err
			}
			defer w.Close() // on an early return; the checked Close is below
			kept = &reviewSink{w: w}
		}
		tr := env.Track("read "+filepath.Base(e.Reviews), 0)
		var rs amazon.Stats
		var n int64
		for r, err := range reviewsOf(e.Format, e.Reviews, rej.add, &rs) {
			if err == nil && n%4096 == 0 {
				err = ctx.Err()
			}
			if it := scoped[r.ASIN]; err == nil && it != nil {
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
				return nil, err
			}
			n++
			tr.Add(1)
		}
		tr.Done()
		if rs.Records == 0 {
			return nil, fmt.Errorf("%w: %s holds no review records (%d lines)", pipeline.ErrBadInput, e.Reviews, rs.Lines)
		}
		if kept != nil {
			var err error
			if nKept, err = kept.close(); err != nil {
				return nil, err
			}
		}
		lines += rs.Lines
		stats["review_lines"] = rs.Lines
	}
	if err := rej.check(env, lines, e.RejectRatio); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if co != nil {
		if err := co.derive(ctx, inOrder, stats); err != nil {
			return nil, err
		}
	}

	// Image records: only their presence matters here. A repeated ASIN is a
	// reject (the first record is the one used).
	if e.Features == "image" {
		asins, err := imagefeat.ScanASINs(ctx, e.ImageFeatures)
		if err != nil {
			return nil, err
		}
		if len(asins) == 0 {
			return nil, fmt.Errorf("%w: %s holds no image-feature records", pipeline.ErrBadInput, e.ImageFeatures)
		}
		first := make(map[string]int, len(asins))
		for k, a := range asins {
			if j, dup := first[a]; dup {
				rej.add(amazon.Reject{
					File: filepath.Base(e.ImageFeatures), Line: int64(k + 1),
					Offset: int64(k) * int64(imagefeat.RecordSize(imagefeat.Dim)),
					Err:    fmt.Sprintf("duplicate asin %s (first at record %d)", a, j+1), Excerpt: a,
				})
				continue
			}
			first[a] = k
			if it := scoped[a]; it != nil {
				it.hasImage = true
			}
		}
		lines += int64(len(asins))
		stats["image_records"] = len(asins)
	}
	if err := rej.check(env, lines, e.RejectRatio); err != nil {
		return nil, err
	}

	// Keep items with a feature source, in ASIN order so the item index does
	// not depend on the file's line order.
	asins := make([]string, 0, len(scoped))
	var noImage, noReviews int64
	for a, it := range scoped {
		switch {
		case e.Features == "image" && !it.hasImage:
			noImage++
		case e.Features == "bow" && it.nReviews == 0:
			noReviews++
		default:
			asins = append(asins, a)
		}
	}
	slices.Sort(asins)
	stats["items_dropped_no_image"] = noImage
	stats["items_dropped_no_reviews"] = noReviews
	if len(asins) == 0 {
		// Nothing downstream can work on an empty scope: fail here, as bad
		// input (a typo, the wrong file), not after three empty stages.
		msg := fmt.Sprintf("experiment %s has no items in scope: category %q in %s: of %d products, %d outside the prefix, %d without a subcategory at depth %d",
			env.Experiment, e.Category, filepath.Base(e.Meta), ms.Records, outOfScope, noSub, e.Depth)
		if noSub > 0 {
			msg += fmt.Sprintf(" (the deepest path goes %d levels below the prefix)", deepest)
		}
		msg += fmt.Sprintf(", %d without an image, %d without reviews", noImage, noReviews)
		if outOfScope == ms.Records {
			var quoted []string
			for _, p := range amazon.ClosestPaths(e.Category, others.list(), 3) {
				quoted = append(quoted, strconv.Quote(p))
			}
			if len(quoted) > 0 {
				msg += "; closest category paths in the file: " + strings.Join(quoted, ", ")
			}
		}
		return nil, fmt.Errorf("%w: %s", pipeline.ErrBadInput, msg)
	}
	kept := &items{asin: asins}
	index := kept.rows()

	n := len(asins)
	title, brand, sub, path := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	nrev, hasImg := make([]int32, n), make([]bool, n)
	subs := map[string]bool{}
	for i, a := range asins {
		it := scoped[a]
		title[i], brand[i], sub[i], path[i], nrev[i], hasImg[i] = it.title, it.brand, it.sub, it.path, it.nReviews, it.hasImage
		subs[it.sub] = true
	}
	stats["subcategories"] = len(subs)
	stats["items"] = n
	if _, err := schema.Write(filepath.Join(env.OutDir, "items.parquet"), schema.ItemsCols{ASIN: asins, Title: title, Brand: brand,
		Subcategory: sub, CategoryPath: path, NReviews: nrev, HasImage: hasImg}); err != nil {
		return nil, err
	}

	// Edges of the graph between valid items of different subcategories.
	var edges []graph.Edge
	seen := map[graph.Edge]bool{}
	var notItem, sameSub, selfLoop, dup int64
	for i, a := range asins {
		for _, b := range scoped[a].related {
			j, ok := index[b]
			e := graph.Edge{Src: int32(i), Dst: j}
			switch {
			case !ok:
				notItem++
			case int(j) == i:
				selfLoop++
			case sub[j] == sub[i]:
				sameSub++
			case seen[e]:
				dup++
			default:
				seen[e] = true
				edges = append(edges, e)
			}
		}
	}
	// Rows in (src, dst) order, whatever the order of the related lists.
	slices.SortFunc(edges, func(x, y graph.Edge) int {
		if x.Src != y.Src {
			return int(x.Src - y.Src)
		}
		return int(x.Dst - y.Dst)
	})
	stats["edges"] = len(edges)
	stats["edges_dropped_target_not_item"] = notItem
	stats["edges_dropped_same_subcategory"] = sameSub
	stats["edges_dropped_self_loop"] = selfLoop
	stats["edges_dropped_duplicate"] = dup
	m, err := writeEdges(filepath.Join(env.OutDir, "edges.parquet"), kept, e.Graph, edges)
	if err != nil {
		return nil, err
	}
	nrej, err := rej.write(filepath.Join(env.OutDir, "rejects.parquet"))
	if err != nil {
		return nil, err
	}
	stats["rejects"] = nrej
	os.Remove(env.FailurePath("rejects.parquet")) // a previous failure's evidence, now superseded
	rows := map[string]int64{"items": int64(n), "edges": m, "rejects": nrej}
	if e.Features == "bow" {
		rows["reviews"] = nKept
	}
	return &pipeline.Result{Rows: rows, Stats: stats}, nil
}

// reviewsOf is amazon.ReviewsFormat, the one door to the reviews file; a
// test counts the reads through it.
var reviewsOf = amazon.ReviewsFormat

// coReviews collects the review events of in-scope items for the co_review
// graph: 16 bytes a review, plus each distinct reviewer's id once.
type coReviews struct {
	params coReviewParams
	users  map[string]int32
	events []graph.Review
}

func (c *coReviews) add(item int32, r *amazon.Review) {
	if r.ReviewerID == "" {
		return // nobody to relate the item through
	}
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

// reviewSink writes the in-scope reviews as ingest reads them.
type reviewSink struct {
	w     *schema.Writer[schema.ReviewsCols]
	batch schema.ReviewsCols
}

func (s *reviewSink) add(r *amazon.Review) error {
	b := &s.batch
	b.ASIN, b.Summary, b.Text = append(b.ASIN, r.ASIN), append(b.Summary, r.Summary), append(b.Text, r.ReviewText)
	if len(b.ASIN) < reviewBatch {
		return nil
	}
	return s.flush()
}

func (s *reviewSink) flush() error {
	err := s.w.Append(s.batch)
	b := &s.batch
	b.ASIN, b.Summary, b.Text = b.ASIN[:0], b.Summary[:0], b.Text[:0]
	return err
}

func (s *reviewSink) close() (int64, error) {
	if err := s.flush(); err != nil {
		return 0, err
	}
	return s.w.Close()
}

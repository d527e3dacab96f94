package stages

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"monomer/amazon"
	"monomer/catalogue"
	"monomer/graph"
	"monomer/job"
	"monomer/pipeline"
)

// A catalogue (data.format: catalogue) reaches ingest as tables: the
// items table where the metadata is read, the text table where the
// reviews are, and the relations table for the graph's lists. Its items
// go through the same scope, feature-source rule and edge filter as a
// release's products (scope.add, keep, writeEdges), so the same data
// gives the same items, edges and reviews tables (TestCatalogueTwoDoors).

// scopeCatalogue is scopeItems for a catalogue: the items table in place
// of the metadata, then the pairs of the experiment's relation as each
// item's related list, in the relations table's order.
//
// A pair naming an id that is no item of the items table is dropped and
// counted, not rejected: a shop's relations table holds pairs of items
// retired or out of the export, as a 2014 related list names ASINs
// outside the metadata, which the Amazon path drops the same way
// (writeEdges). A pair naming an item row that was rejected is dropped
// too, and counted under that row's reject, so that one bad items row is
// not weighed again against the other tables' reject_ratio.
func (in *ingestion) scopeCatalogue(ctx context.Context) (*scope, error) {
	exp := in.exp
	sc := newScope(exp)
	sc.ids = map[string]struct{}{}
	sc.rejected = map[string]struct{}{}
	tr := in.env.Track("read "+filepath.Base(exp.Meta), 0)
	var p amazon.Product
	itemRej := in.rej.file(exp.Meta)
	st, err := catalogue.ReadItems(ctx, exp.Meta, func(it *catalogue.Item) error {
		tr.Add(1)
		sc.ids[it.ID] = struct{}{}
		p = amazon.Product{ASIN: it.ID, Title: it.Title, Brand: it.Brand, Categories: it.Categories}
		sc.add(&p, exp, nil)
		return nil
	}, func(j amazon.Reject) {
		if j.ID != "" {
			sc.rejected[j.ID] = struct{}{}
		}
		itemRej.add(j)
	})
	tr.Done()
	if err != nil {
		return nil, tableError(err)
	}
	if st.Records == 0 {
		return nil, noRows(itemRej, "items", st)
	}
	for id := range sc.ids {
		delete(sc.rejected, id) // a duplicate id's rejected row: its first row is the item
	}
	sc.meta = amazon.Stats{Lines: st.Rows, Records: st.Records, Rejected: st.Rejected, Duplicates: st.Duplicates}
	itemRej.lines = st.Rows
	in.stats["items_table"] = st
	in.noteUTF8(exp.Meta, st)
	in.stats["meta_lines"] = st.Rows
	in.stats["meta_duplicates"] = st.Duplicates
	in.stats["items_out_of_scope"] = sc.outOfScope
	in.stats["items_dropped_no_subcategory"] = sc.noSub

	tr = in.env.Track("read "+filepath.Base(exp.Relations), 0)
	relRej := in.rej.file(exp.Relations)
	var drop catalogueDrops
	rst, err := catalogue.ReadRelations(ctx, exp.Relations, exp.Graph, func(r *catalogue.Relation) error {
		tr.Add(1)
		switch src := sc.class(r.Src); {
		case src == idRejected:
			drop.srcRejected++
		case src == idUnknown:
			drop.srcUnknown++
		case src == idOutside:
			sc.srcOutside++
		default:
			sc.byASIN[r.Src].related = append(sc.byASIN[r.Src].related, r.Dst)
		}
		switch sc.class(r.Dst) {
		case idRejected:
			drop.dstRejected++
		case idUnknown:
			drop.dstUnknown++
		}
		return nil
	}, relRej.add)
	tr.Done()
	if err != nil {
		return nil, tableError(err)
	}
	if rst.Records == 0 && rst.Skipped == 0 {
		return nil, noRows(relRej, "pairs", rst)
	}
	// Job validation reads no data, so this is where a graph naming no
	// relation of the table is found (exit 3, before anything is written).
	if rst.Relations[exp.Graph] == 0 {
		return nil, fmt.Errorf("%w: experiment %s: graph %q: %s holds no valid pair of that relation; its relations are %s; set the experiment's graph to one of them (names match exactly)",
			pipeline.ErrBadInput, in.env.Experiment, exp.Graph, filepath.Base(exp.Relations), relationNames(rst.Relations))
	}
	relRej.lines = rst.Rows - rst.Skipped // the rows of other relations are not the experiment's
	in.stats["relations_table"] = rst
	in.noteUTF8(exp.Relations, rst)
	in.stats["edges_dropped_source_unknown"] = drop.srcUnknown
	in.stats["edges_dropped_source_rejected"] = drop.srcRejected
	in.pairs = rst.Records
	in.drops = drop
	return sc, nil
}

// catalogueGraph fails a catalogue experiment whose relation leaves no
// edge, at ingest and in the catalogue's words: the negatives stage would
// fail the same graph after the features stage, pointing at the Amazon
// metadata's lists. A relations table written from one category's order
// lines joins mostly items of one subcategory, and those pairs are
// dropped (graph.CrossEdges): the message counts them first. left counts
// the pairs leaving the scope or its items with features, none those
// naming no item. A graph of a few edges still reaches negatives, which
// says how many a split needs (a small table's ingest alone is useful).
func (in *ingestion) catalogueGraph(n int, st graph.DropStats, left, none int64) error {
	if in.exp.Format != job.FormatCatalogue || n > 0 {
		return nil
	}
	return fmt.Errorf("%w: experiment %s: graph %q: the %d %s pairs of %s leave no edge between two items of the experiment in different subcategories: "+
		"%d join two items of one subcategory (depth %d under %q), %d leave the scope or its items with features, %d name no item of %s, %d pair an item with itself; "+
		"the models learn relations across subcategories, so pair items of different subcategories, set a depth that tells them apart, widen the category or take another relation (ingest's stats count each drop)",
		pipeline.ErrBadInput, in.env.Experiment, in.exp.Graph, in.pairs, in.exp.Graph, filepath.Base(in.exp.Relations),
		st.SameSubcategory, in.exp.Depth, in.exp.Category, left, none, filepath.Base(in.exp.Meta), st.SelfLoop)
}

// catalogueDrops counts the rows of the relations and text tables naming
// no item: an id in no row of the items table (unknown), or in a rejected
// one.
type catalogueDrops struct {
	srcUnknown, srcRejected, dstUnknown, dstRejected int64
	docUnknown, docRejected                          int64
}

// idClass is what an id of the input names (scope.class).
type idClass int8

const (
	idInScope  idClass = iota // an item in the experiment's scope (kept or not)
	idOutside                 // an item outside the scope: another category, no subcategory at the depth
	idRejected                // catalogue: only rejected rows of the items table
	idUnknown                 // no item of the input
)

// class classes id. For a release, whose metadata ingest does not keep
// beyond the scope, an item outside the scope is found by its hash
// (scope.outside): two ASINs sharing one 64-bit hash are so unlikely that
// only a counter could ever be off by one.
func (sc *scope) class(id string) idClass {
	if _, ok := sc.byASIN[id]; ok {
		return idInScope
	}
	if sc.ids != nil {
		if _, ok := sc.ids[id]; ok {
			return idOutside
		}
		if _, ok := sc.rejected[id]; ok {
			return idRejected
		}
		return idUnknown
	}
	if _, ok := slices.BinarySearch(sc.outside, idHash(id)); ok {
		return idOutside
	}
	return idUnknown
}

// noteUTF8 keeps a WARN line for a table holding invalid UTF-8: its
// bytes were read as U+FFFD, which is most often a file exported in
// Latin-1 or Windows-1252 that the user would rather convert.
func (in *ingestion) noteUTF8(path string, st catalogue.Stats) {
	if st.InvalidUTF8 == 0 {
		return
	}
	in.utf8Warnings = append(in.utf8Warnings, pipeline.Warning{
		Msg: fmt.Sprintf("%s: %d of %d rows hold invalid UTF-8, read as U+FFFD (a Latin-1 or Windows-1252 export? convert it to UTF-8 to keep those characters)",
			filepath.Base(path), st.InvalidUTF8, st.Rows),
		Attrs: map[string]any{"file": path, "rows": st.InvalidUTF8},
	})
}

// catalogueWarnings are the WARN lines of a catalogue's drops (rows the
// experiment loses without a reject): ids in no items row, with their
// share, and the rows dropped with a rejected items row, which name the
// items table first since its rejects are their cause.
func (in *ingestion) catalogueWarnings() []pipeline.Warning {
	if in.exp.Format != job.FormatCatalogue {
		return nil
	}
	d := in.drops
	items, rels := filepath.Base(in.exp.Meta), filepath.Base(in.exp.Relations)
	ws := slices.Clone(in.utf8Warnings)
	pct := func(n, of int64) float64 { return 100 * float64(n) / float64(max(of, 1)) }
	if n := d.srcUnknown + d.dstUnknown; n > 0 {
		ws = append(ws, pipeline.Warning{
			Msg: fmt.Sprintf("%s: %d of %d %s pairs (%.1f%%) name an id that is in no row of %s (%d as src, %d as dst); dropped, as a related ASIN outside the metadata is (ingest's stats edges_dropped_source_unknown, edges_dropped_target_unknown)",
				rels, n, in.pairs, in.exp.Graph, pct(n, in.pairs), items, d.srcUnknown, d.dstUnknown),
			Attrs: map[string]any{"file": in.exp.Relations, "pairs": in.pairs, "src_unknown": d.srcUnknown, "dst_unknown": d.dstUnknown, "share": float64(n) / float64(max(in.pairs, 1))},
		})
	}
	if in.docs > 0 && d.docUnknown > 0 {
		ws = append(ws, pipeline.Warning{
			Msg: fmt.Sprintf("%s: %d of %d documents (%.1f%%) name an id that is in no row of %s; dropped, as reviews of ASINs outside the metadata are (ingest's stats text_docs_dropped_unknown)",
				filepath.Base(in.exp.Reviews), d.docUnknown, in.docs, pct(d.docUnknown, in.docs), items),
			Attrs: map[string]any{"file": in.exp.Reviews, "documents": in.docs, "unknown": d.docUnknown},
		})
	}
	if n := d.srcRejected + d.dstRejected + d.docRejected; n > 0 {
		msg := fmt.Sprintf("%s: its rejected rows are named by %s of %s", items, plural(d.srcRejected+d.dstRejected, in.exp.Graph+" pair"), rels)
		if in.exp.Reviews != "" {
			msg += fmt.Sprintf(" and %s of %s", plural(d.docRejected, "document"), filepath.Base(in.exp.Reviews))
		}
		ws = append(ws, pipeline.Warning{
			Msg:   msg + ", dropped with them (fix the items rows to keep them; see ingest's rejects.parquet)",
			Attrs: map[string]any{"file": in.exp.Meta, "pairs": d.srcRejected + d.dstRejected, "documents": d.docRejected},
		})
	}
	return ws
}

// plural is n and what, with an s unless n is 1.
func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// idHash is FNV-1a (64 bits) of id, scope.outside's key: 8 bytes per
// item outside the scope where a set of the ASINs would hold about 60.
func idHash(id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return h
}

// relationNames lists a relations table's names with their pairs, the
// most frequent first, each quoted so that a stray space or another case
// shows.
func relationNames(n map[string]int64) string {
	names := slices.SortedFunc(maps.Keys(n), func(a, b string) int { return cmp.Or(cmp.Compare(n[b], n[a]), strings.Compare(a, b)) })
	var parts []string
	for _, name := range names {
		unit := "pairs"
		if n[name] == 1 {
			unit = "pair"
		}
		parts = append(parts, fmt.Sprintf("%q (%d %s)", name, n[name], unit))
	}
	return strings.Join(parts, ", ")
}

// noRows is the error of a catalogue table without a valid row, f its
// rejects.
func noRows(f *fileRejects, what string, st catalogue.Stats) error {
	msg := fmt.Sprintf("%s holds no %s (%d rows read, %d rejected)", f.path, what, st.Rows, st.Rejected)
	if f.rejects > 0 {
		j := f.first()
		msg += fmt.Sprintf("; first reject: %s: %s", rejectPlace(j), j.Why())
	}
	return fmt.Errorf("%w: %s", pipeline.ErrBadInput, msg)
}

// tableError classes a catalogue reader's error: a file it cannot read as
// a table is bad input.
func tableError(err error) error {
	if errors.Is(err, catalogue.ErrTable) {
		return fmt.Errorf("%w: %w", pipeline.ErrBadInput, err)
	}
	return err
}

// errStopDocs ends a read of the text table when its consumer stops.
var errStopDocs = errors.New("stop")

// catalogueDocs is the text table as the reviews readReviews consumes:
// each document a review of its item, with its summary and text. rs gets
// the table's counts once the loop is over.
func (in *ingestion) catalogueDocs(ctx context.Context, sc *scope, rs *amazon.Stats) iter.Seq2[amazon.Review, error] {
	return func(yield func(amazon.Review, error) bool) {
		st, err := catalogue.ReadText(ctx, in.exp.Reviews, func(d *catalogue.Doc) error {
			switch sc.class(d.ID) {
			case idUnknown:
				in.drops.docUnknown++
				return nil
			case idRejected:
				in.drops.docRejected++
				return nil
			}
			if !yield(amazon.Review{ASIN: d.ID, Summary: d.Summary, ReviewText: d.Text}, nil) {
				return errStopDocs
			}
			return nil
		}, in.rej.file(in.exp.Reviews).add)
		in.docs = st.Records
		in.noteUTF8(in.exp.Reviews, st)
		in.stats["text_docs_dropped_unknown"] = in.drops.docUnknown
		in.stats["text_docs_dropped_rejected"] = in.drops.docRejected
		*rs = amazon.Stats{Lines: st.Rows, Records: st.Records, Rejected: st.Rejected}
		in.stats["text_table"] = st
		if err != nil && !errors.Is(err, errStopDocs) {
			yield(amazon.Review{}, tableError(err))
		}
	}
}

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
func (in *ingestion) scopeCatalogue(ctx context.Context) (*scope, error) {
	exp := in.exp
	sc := newScope(exp)
	sc.ids = map[string]struct{}{}
	tr := in.env.Track("read "+filepath.Base(exp.Meta), 0)
	var p amazon.Product
	itemRej := in.rej.file(exp.Meta)
	st, err := catalogue.ReadItems(ctx, exp.Meta, func(it *catalogue.Item) error {
		tr.Add(1)
		sc.ids[it.ID] = struct{}{}
		p = amazon.Product{ASIN: it.ID, Title: it.Title, Brand: it.Brand, Categories: it.Categories}
		sc.add(&p, exp, nil)
		return nil
	}, itemRej.add)
	tr.Done()
	if err != nil {
		return nil, tableError(err)
	}
	if st.Records == 0 {
		return nil, noRows(itemRej, "items", st)
	}
	sc.meta = amazon.Stats{Lines: st.Rows, Records: st.Records, Rejected: st.Rejected, Duplicates: st.Duplicates}
	itemRej.lines = st.Rows
	in.stats["items_table"] = st
	in.stats["meta_lines"] = st.Rows
	in.stats["meta_duplicates"] = st.Duplicates
	in.stats["items_out_of_scope"] = sc.outOfScope
	in.stats["items_dropped_no_subcategory"] = sc.noSub

	tr = in.env.Track("read "+filepath.Base(exp.Relations), 0)
	relRej := in.rej.file(exp.Relations)
	rst, err := catalogue.ReadRelations(ctx, exp.Relations, sc.known, func(r *catalogue.Relation) error {
		tr.Add(1)
		if it := sc.byASIN[r.Src]; it != nil && r.Name == exp.Graph {
			it.related = append(it.related, r.Dst)
		}
		return nil
	}, relRej.add)
	tr.Done()
	if err != nil {
		return nil, tableError(err)
	}
	if rst.Records == 0 {
		return nil, noRows(relRej, "pairs", rst)
	}
	// Job validation reads no data, so this is where a graph naming no
	// relation of the table is found (exit 3, before anything is written).
	if rst.Relations[exp.Graph] == 0 {
		return nil, fmt.Errorf("%w: experiment %s: graph %q: %s holds no valid pair of that relation; its relations are %s; set the experiment's graph to one of them (names match exactly)",
			pipeline.ErrBadInput, in.env.Experiment, exp.Graph, filepath.Base(exp.Relations), relationNames(rst.Relations))
	}
	relRej.lines = rst.Rows
	in.stats["relations_table"] = rst
	return sc, nil
}

// known reports whether id is an item of the catalogue's items table.
func (sc *scope) known(id string) bool {
	_, ok := sc.ids[id]
	return ok
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
		msg += fmt.Sprintf("; first reject: %s: %s", rejectPlace(j), j.Err)
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
		st, err := catalogue.ReadText(ctx, in.exp.Reviews, sc.known, func(d *catalogue.Doc) error {
			if !yield(amazon.Review{ASIN: d.ID, Summary: d.Summary, ReviewText: d.Text}, nil) {
				return errStopDocs
			}
			return nil
		}, in.rej.file(in.exp.Reviews).add)
		*rs = amazon.Stats{Lines: st.Rows, Records: st.Records, Rejected: st.Rejected}
		in.stats["text_table"] = st
		if err != nil && !errors.Is(err, errStopDocs) {
			yield(amazon.Review{}, tableError(err))
		}
	}
}

package catalogue

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strings"

	"monomer/amazon"
	"monomer/schema"
)

// Item is one row of the items table.
type Item struct {
	ID, Title, Brand string
	// Categories are the item's category paths, each a list of levels
	// from the root, as the 2014 release gives them.
	Categories [][]string
}

// Relation is one row of the relations table: Src is related to Dst by
// the relation Name ("bought_together", "viewed_together", ...).
type Relation struct {
	Src, Dst, Name string
}

// Doc is one row of the text table: a review or a description of item ID.
type Doc struct {
	ID, Summary, Text string
}

// Reject reasons: every Reject.Err, a fixed string to group rejects by
// (what varies, such as the row a duplicate id was first seen at, is in
// Reject.Detail, the row's id in Reject.ID), and the keys of
// Stats.Reasons.
const (
	ReasonBadRow          = "bad row"          // a CSV record that is not a row of the header's fields
	ReasonMissingID       = "missing id"       // an empty or null id
	ReasonMissingSrc      = "missing src"      // an empty or null src
	ReasonMissingDst      = "missing dst"      // an empty or null dst
	ReasonMissingRelation = "missing relation" // an empty relation name
	ReasonNoCategories    = "no categories"    // an empty or null categories cell
	ReasonBadCategories   = "bad categories"   // a cell starting with '[' that is not a JSON list of paths
	ReasonEmptyPath       = "empty path"       // a path without levels, or with an empty level
	ReasonDuplicateID     = "duplicate id"     // an id an earlier row gave other content
)

// ID is an id cell (id, src, dst) as the tables' rules read it: invalid
// UTF-8 already replaced (see readRows), a CR LF made LF as encoding/csv
// makes it in a quoted CSV cell, so that the Parquet and CSV forms of one
// table give one id, and trimmed of surrounding white space (a padded
// " I05 " is I05, one of spaces is missing).
func ID(s string) string {
	if strings.Contains(s, "\r\n") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	return strings.TrimSpace(s)
}

// rejecter hands rejects over and counts them.
type rejecter struct {
	base   string
	st     *Stats
	reject func(amazon.Reject)
	ids    int // the row's first ids cells are its ids (Reject.ID: the first not empty)
}

func (j *rejecter) add(r *row, reason, detail string) {
	j.st.Rejected++
	if j.st.Reasons == nil {
		j.st.Reasons = map[string]int64{}
	}
	j.st.Reasons[reason]++
	rj := r.reject(j.base, reason)
	rj.Detail = detail
	for k := range min(j.ids, len(r.cells)) {
		if rj.ID = ID(r.cells[k].text); rj.ID != "" {
			break
		}
	}
	j.reject(rj)
}

func (j *rejecter) badRow(r *row, msg string) {
	j.add(r, ReasonBadRow, strings.TrimPrefix(msg, ReasonBadRow+": "))
}

// ReadItems reads the items table at path (columns id, title and
// categories; brand optional), calling fn with each item in file order
// (the Item is reused by the next call) and reject with each row that
// breaks the rules: an empty id, categories empty, not a list of paths, or
// holding a path without levels or with an empty level, an id an earlier
// row gave other content. A row repeating an earlier one exactly is
// skipped and counted as a duplicate, as amazon.ReadMeta skips a repeated
// line.
//
// Categories is a list of lists of strings (the item's paths), a list of
// strings (one path) or a string: a JSON list of either (the form a CSV
// cell takes; it starts with '['), or one path with its levels separated
// by '>', each level trimmed of spaces, as a job's category is written.
// Title and brand are taken as they are.
func ReadItems(ctx context.Context, path string, fn func(*Item) error, reject func(amazon.Reject)) (Stats, error) {
	var st Stats
	j := &rejecter{base: filepath.Base(path), st: &st, reject: reject, ids: 1}
	type first struct {
		sum  [16]byte
		line int64
	}
	seen := map[string]first{}
	var it Item
	cols := []column{{name: "id", required: true}, {name: "title", required: true}, {name: "brand"}, {name: "categories", required: true, nested: true}}
	err := readRows(ctx, path, cols, &st, func(r *row) error {
		it.ID, it.Title, it.Brand = ID(r.cells[0].text), r.cells[1].text, r.cells[2].text
		if it.ID == "" {
			j.add(r, ReasonMissingID, "")
			return nil
		}
		var reason, detail string
		it.Categories, reason, detail = categories(&r.cells[3])
		if reason != "" {
			j.add(r, reason, detail)
			return nil
		}
		sum := itemSum(&it)
		if f, ok := seen[it.ID]; ok {
			if f.sum == sum {
				st.Duplicates++
				return nil
			}
			j.add(r, ReasonDuplicateID, fmt.Sprintf("%q first seen at row %d with other content", it.ID, f.line))
			return nil
		}
		seen[it.ID] = first{sum, r.line}
		st.Records++
		return fn(&it)
	}, j.badRow)
	return st, err
}

// itemSum is a digest of an item's content, to tell an exact repeat from
// a conflicting row without keeping the rows.
func itemSum(it *Item) [16]byte {
	h := fnv.New128a()
	put := func(s string) {
		fmt.Fprintf(h, "%d:%s", len(s), s) // length-prefixed: no two contents collide by concatenation
	}
	put(it.ID)
	put(it.Title)
	put(it.Brand)
	for _, p := range it.Categories {
		fmt.Fprintf(h, "[%d", len(p))
		for _, l := range p {
			put(l)
		}
	}
	var s [16]byte
	h.Sum(s[:0])
	return s
}

// categories reads a categories cell (see ReadItems); reason is "" if it is
// valid.
func categories(c *cell) (paths [][]string, reason, detail string) {
	switch c.kind {
	case schema.ListCells:
		paths = [][]string{c.list}
		if c.list == nil {
			paths = nil
		}
	case schema.NestedCells:
		paths = c.nested
	default:
		s := strings.TrimSpace(c.text)
		switch {
		case s == "":
		case s[0] == '[':
			var err error
			if paths, err = jsonPaths(s); err != nil {
				return nil, ReasonBadCategories, err.Error()
			}
		default:
			paths = [][]string{amazon.CategoryPrefix(s)}
		}
	}
	if len(paths) == 0 {
		return nil, ReasonNoCategories, ""
	}
	for k, p := range paths {
		if len(p) == 0 {
			return nil, ReasonEmptyPath, fmt.Sprintf("path %d has no levels", k+1)
		}
		for l, level := range p {
			if strings.TrimSpace(level) == "" {
				return nil, ReasonEmptyPath, fmt.Sprintf("path %d has an empty level %d", k+1, l+1)
			}
		}
	}
	return paths, "", ""
}

// jsonPaths parses a JSON list of paths, or a JSON list of strings (one
// path).
func jsonPaths(s string) ([][]string, error) {
	var paths [][]string
	if err := json.Unmarshal([]byte(s), &paths); err == nil {
		return paths, nil
	}
	var one []string
	if err := json.Unmarshal([]byte(s), &one); err != nil {
		return nil, fmt.Errorf("not a JSON list of paths (lists of strings) or of strings")
	}
	if len(one) == 0 {
		return nil, nil
	}
	return [][]string{one}, nil
}

// ReadRelations reads the relations table at path (columns src, dst and
// relation), calling fn with each pair of the relation only (of every
// relation if only is "") in file order (reused by the next call), and
// reject with each row of it with an empty field (a row without a
// relation name is rejected whatever only is: it may be one of it). Rows
// of other relations are neither checked nor handed over: they are
// counted in Stats.Skipped, so that an experiment never fails on pairs it
// does not read. Whether src and dst name items is the caller's to check:
// a pair naming something else is dropped there, as a related ASIN
// outside the metadata is. Stats.Relations counts the rows of each name
// with both ids, read or skipped.
func ReadRelations(ctx context.Context, path, only string, fn func(*Relation) error, reject func(amazon.Reject)) (Stats, error) {
	st := Stats{Relations: map[string]int64{}}
	j := &rejecter{base: filepath.Base(path), st: &st, reject: reject, ids: 2}
	var rel Relation
	cols := []column{{name: "src", required: true}, {name: "dst", required: true}, {name: "relation", required: true}}
	err := readRows(ctx, path, cols, &st, func(r *row) error {
		rel.Src, rel.Dst, rel.Name = ID(r.cells[0].text), ID(r.cells[1].text), relationName(r.cells[2].text)
		switch {
		case rel.Name == "":
			j.add(r, ReasonMissingRelation, "")
		case only != "" && rel.Name != only:
			st.Skipped++
			if rel.Src != "" && rel.Dst != "" {
				st.Relations[rel.Name]++
			}
		case rel.Src == "":
			j.add(r, ReasonMissingSrc, "")
		case rel.Dst == "":
			j.add(r, ReasonMissingDst, "")
		default:
			st.Records++
			st.Relations[rel.Name]++
			return fn(&rel)
		}
		return nil
	}, j.badRow)
	return st, err
}

// relationName is a relation cell: matched exactly, spaces and case
// included, but with a CR LF made LF as for ids (see ID).
func relationName(s string) string {
	if strings.Contains(s, "\r\n") {
		return strings.ReplaceAll(s, "\r\n", "\n")
	}
	return s
}

// ReadText reads the text table at path (columns id and text; summary
// optional), calling fn with each document in file order (reused by the
// next call) and reject with each row with an empty id. Whether the id
// names an item is the caller's to check, as the Amazon path ignores the
// reviews of ASINs outside its metadata. A document may be empty: it
// still counts as the item's document, as an empty review does.
func ReadText(ctx context.Context, path string, fn func(*Doc) error, reject func(amazon.Reject)) (Stats, error) {
	var st Stats
	j := &rejecter{base: filepath.Base(path), st: &st, reject: reject, ids: 1}
	var d Doc
	cols := []column{{name: "id", required: true}, {name: "text", required: true}, {name: "summary"}}
	err := readRows(ctx, path, cols, &st, func(r *row) error {
		d.ID, d.Text, d.Summary = ID(r.cells[0].text), r.cells[1].text, r.cells[2].text
		if d.ID == "" {
			j.add(r, ReasonMissingID, "")
			return nil
		}
		st.Records++
		return fn(&d)
	}, j.badRow)
	return st, err
}

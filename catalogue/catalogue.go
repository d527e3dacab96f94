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

// Reject reasons: the start of every Reject.Err, and the keys of
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
	ReasonUnknownItem     = "unknown item"     // an id (src, dst) that is no row of the items table
)

// rejecter hands rejects over and counts them.
type rejecter struct {
	base   string
	st     *Stats
	reject func(amazon.Reject)
}

func (j *rejecter) add(r *row, reason, detail string) {
	j.st.Rejected++
	if j.st.Reasons == nil {
		j.st.Reasons = map[string]int64{}
	}
	j.st.Reasons[reason]++
	msg := reason
	if detail != "" {
		msg += ": " + detail
	}
	j.reject(r.reject(j.base, msg))
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
	j := &rejecter{base: filepath.Base(path), st: &st, reject: reject}
	type first struct {
		sum  [16]byte
		line int64
	}
	seen := map[string]first{}
	var it Item
	cols := []column{{name: "id", required: true}, {name: "title", required: true}, {name: "brand"}, {name: "categories", required: true, nested: true}}
	err := readRows(ctx, path, cols, &st, func(r *row) error {
		it.ID, it.Title, it.Brand = r.cells[0].text, r.cells[1].text, r.cells[2].text
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
// relation), calling fn with each pair in file order (reused by the next
// call) and reject with each row with an empty field or naming an item
// that known does not know (known holds the ids of the items table: a
// pair naming something else is a broken reference, not an item outside
// the experiment). Stats.Relations counts the valid rows of each name.
func ReadRelations(ctx context.Context, path string, known func(id string) bool, fn func(*Relation) error, reject func(amazon.Reject)) (Stats, error) {
	st := Stats{Relations: map[string]int64{}}
	j := &rejecter{base: filepath.Base(path), st: &st, reject: reject}
	var rel Relation
	cols := []column{{name: "src", required: true}, {name: "dst", required: true}, {name: "relation", required: true}}
	err := readRows(ctx, path, cols, &st, func(r *row) error {
		rel.Src, rel.Dst, rel.Name = r.cells[0].text, r.cells[1].text, r.cells[2].text
		switch {
		case rel.Src == "":
			j.add(r, ReasonMissingSrc, "")
		case rel.Dst == "":
			j.add(r, ReasonMissingDst, "")
		case rel.Name == "":
			j.add(r, ReasonMissingRelation, "")
		case !known(rel.Src):
			j.add(r, ReasonUnknownItem, fmt.Sprintf("src %q is not in the items table", rel.Src))
		case !known(rel.Dst):
			j.add(r, ReasonUnknownItem, fmt.Sprintf("dst %q is not in the items table", rel.Dst))
		default:
			st.Records++
			st.Relations[rel.Name]++
			return fn(&rel)
		}
		return nil
	}, j.badRow)
	return st, err
}

// ReadText reads the text table at path (columns id and text; summary
// optional), calling fn with each document in file order (reused by the
// next call) and reject with each row with an empty id or one known does
// not know. A document may be empty: it still counts as the item's
// document, as an empty review does.
func ReadText(ctx context.Context, path string, known func(id string) bool, fn func(*Doc) error, reject func(amazon.Reject)) (Stats, error) {
	var st Stats
	j := &rejecter{base: filepath.Base(path), st: &st, reject: reject}
	var d Doc
	cols := []column{{name: "id", required: true}, {name: "text", required: true}, {name: "summary"}}
	err := readRows(ctx, path, cols, &st, func(r *row) error {
		d.ID, d.Text, d.Summary = r.cells[0].text, r.cells[1].text, r.cells[2].text
		switch {
		case d.ID == "":
			j.add(r, ReasonMissingID, "")
		case !known(d.ID):
			j.add(r, ReasonUnknownItem, fmt.Sprintf("id %q is not in the items table", d.ID))
		default:
			st.Records++
			return fn(&d)
		}
		return nil
	}, j.badRow)
	return st, err
}

package schema

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// The catalogue tables a user brings (data.format: catalogue) in the form
// monomer writes them (monomer gen --format catalogue). CellsOf reads
// these and whatever else pandas, pyarrow or polars write with the same
// column names.
type (
	// CatalogueItemsCols: one row per item; categories holds its paths.
	CatalogueItemsCols struct {
		_          keyed
		ID         []string     `col:"id"`
		Title      []string     `col:"title"`
		Brand      []string     `col:"brand"`
		Categories [][][]string `col:"categories"`
	}
	// CatalogueRelationsCols: one row per directed pair of a relation.
	CatalogueRelationsCols struct {
		_        keyed
		Src      []string `col:"src"`
		Dst      []string `col:"dst"`
		Relation []string `col:"relation"`
	}
	// CatalogueTextCols: one row per document of an item.
	CatalogueTextCols struct {
		_       keyed
		ID      []string `col:"id"`
		Summary []string `col:"summary"`
		Text    []string `col:"text"`
	}
)

// ErrCells marks a user's table ReadCells cannot read: not Parquet, a
// column of a type it does not take, or a damaged page.
var ErrCells = errors.New("unreadable table")

// CellKind is how a column of a user's table holds its cells.
type CellKind int8

const (
	// NoCells: the file has no column of that name.
	NoCells CellKind = iota
	// TextCells: a string column (string, large_string, string_view or
	// dictionary of strings), or an integer one, read as its decimal
	// digits (pandas writes integer ids as int64).
	TextCells
	// ListCells: a list (or large list) of strings.
	ListCells
	// NestedCells: a list of lists of strings.
	NestedCells
)

// CellColumn is one column of a CellBatch, in the field its Kind names.
// A null cell is marked in Null and left empty; a null inside a list is
// an empty string.
type CellColumn struct {
	Kind   CellKind
	Null   []bool
	Text   []string
	List   [][]string
	Nested [][][]string
}

// CellBatch is a run of consecutive rows of a user's table.
type CellBatch struct {
	Row  int64 // file row of the first row, counted from 0
	Rows int
	Cols []CellColumn // in the order of the names asked for
}

// cellBatchRows is how many rows ReadCells hands over at a time.
const cellBatchRows = 8192

// ReadCells streams the columns names of the Parquet table at path, in
// file order, a batch at a time (each's batch is reused by the next call);
// columns of other names are ignored, and a name the file lacks gives a
// column of Kind NoCells. Before the first row, even of a table without
// rows, it calls check with the kind of each column, and stops with its
// error. It returns the file's rows. A file that is not
// Parquet, holds two columns of one asked-for name or one of a type other
// than those of CellKind wraps ErrCells, naming the file's base name.
func ReadCells(ctx context.Context, path string, names []string, each func(*CellBatch) error, check func([]CellKind) error) (int64, error) {
	name := filepath.Base(path)
	rdr, err := openParquet(path)
	if err != nil {
		return 0, fmt.Errorf("schema: %s: %w: %w", name, ErrCells, err)
	}
	defer rdr.Close()
	fr, err := newFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: cellBatchRows})
	if err != nil {
		return 0, fmt.Errorf("schema: %s: %w: %w", name, ErrCells, err)
	}
	sc, err := fr.Schema()
	if err != nil {
		return 0, fmt.Errorf("schema: %s: %w: %w", name, ErrCells, err)
	}
	b := &CellBatch{Cols: make([]CellColumn, len(names))}
	field := make([]int, len(names)) // the file field of each name, -1 if none
	for k, n := range names {
		field[k] = -1
		switch ix := sc.FieldIndices(n); len(ix) {
		case 0:
			continue
		case 1:
			field[k] = ix[0]
		default:
			return 0, fmt.Errorf("schema: %s: %w: %d columns named %s; keep one", name, ErrCells, len(ix), n)
		}
		kind := cellKind(sc.Field(field[k]).Type)
		if kind == NoCells {
			return 0, fmt.Errorf("schema: %s: %w: column %s is %s, want strings (or integers), a list of strings or a list of lists of strings",
				name, ErrCells, n, sc.Field(field[k]).Type)
		}
		b.Cols[k].Kind = kind
	}
	kinds := make([]CellKind, len(names))
	for k := range b.Cols {
		kinds[k] = b.Cols[k].Kind
	}
	if err := check(kinds); err != nil {
		return 0, err
	}
	rows := rdr.NumRows()
	present := slices.Sorted(slices.Values(slices.DeleteFunc(slices.Clone(field), func(f int) bool { return f < 0 })))
	if rows == 0 || len(present) == 0 {
		return rows, nil
	}
	var leaves []int
	for _, f := range present {
		leaves = append(leaves, leafColumns(&fr.Manifest.Fields[f])...)
	}
	rr, err := guard(func() (pqarrow.RecordReader, error) { return fr.GetRecordReader(ctx, leaves, nil) })
	if err != nil {
		return 0, readError(ctx, name, 0, ErrCells, err)
	}
	defer rr.Release()
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		rec, err := readRecord(rr)
		if err == io.EOF || rec == nil && err == nil {
			break
		}
		if err != nil {
			return 0, readError(ctx, name, b.Row, ErrCells, err)
		}
		b.Rows = int(rec.NumRows())
		for k, f := range field {
			if f >= 0 {
				// The reader's record holds the present columns in file order.
				b.Cols[k].fill(rec.Column(slices.Index(present, f)), b.Rows)
			}
		}
		if err := each(b); err != nil {
			return 0, err
		}
		b.Row += rec.NumRows()
	}
	return rows, nil
}

// cellKind is how a column of type t holds its cells; NoCells if not in a
// way ReadCells reads.
func cellKind(t arrow.DataType) CellKind {
	if isText(t) {
		return TextCells
	}
	if e, ok := listElem(t); ok {
		if isText(e) {
			return ListCells
		}
		if e2, ok := listElem(e); ok && isText(e2) {
			return NestedCells
		}
	}
	return NoCells
}

func isText(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW,
		arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	case arrow.DICTIONARY:
		return isText(t.(*arrow.DictionaryType).ValueType)
	}
	return false
}

func listElem(t arrow.DataType) (arrow.DataType, bool) {
	switch lt := t.(type) {
	case *arrow.ListType:
		return lt.Elem(), true
	case *arrow.LargeListType:
		return lt.Elem(), true
	}
	return nil, false
}

// fill sets c's cells from one record batch's column a of n rows.
func (c *CellColumn) fill(a arrow.Array, n int) {
	c.Null = c.Null[:0]
	for i := range n {
		c.Null = append(c.Null, a.IsNull(i))
	}
	switch c.Kind {
	case TextCells:
		c.Text = c.Text[:0]
		for i := range n {
			c.Text = append(c.Text, textAt(a, i))
		}
	case ListCells:
		c.List = c.List[:0]
		for i := range n {
			c.List = append(c.List, listAt(a, i))
		}
	case NestedCells:
		c.Nested = c.Nested[:0]
		for i := range n {
			var paths [][]string
			if !a.IsNull(i) {
				vals, lo, hi := listRange(a, i)
				paths = make([][]string, 0, hi-lo)
				for j := lo; j < hi; j++ {
					paths = append(paths, listAt(vals, j))
				}
			}
			c.Nested = append(c.Nested, paths)
		}
	}
}

// textAt is cell i of a text column, "" if null; copied, as the reader
// reuses its buffers.
func textAt(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return ""
	}
	switch v := a.(type) {
	case *array.Dictionary:
		return textAt(v.Dictionary(), v.GetValueIndex(i))
	case interface{ Value(int) string }:
		return strings.Clone(v.Value(i))
	case *array.Int8:
		return strconv.FormatInt(int64(v.Value(i)), 10)
	case *array.Int16:
		return strconv.FormatInt(int64(v.Value(i)), 10)
	case *array.Int32:
		return strconv.FormatInt(int64(v.Value(i)), 10)
	case *array.Int64:
		return strconv.FormatInt(v.Value(i), 10)
	case *array.Uint8:
		return strconv.FormatUint(uint64(v.Value(i)), 10)
	case *array.Uint16:
		return strconv.FormatUint(uint64(v.Value(i)), 10)
	case *array.Uint32:
		return strconv.FormatUint(uint64(v.Value(i)), 10)
	case *array.Uint64:
		return strconv.FormatUint(v.Value(i), 10)
	}
	return "" // cellKind admits no other type
}

// listRange is the values array of list column a and row i's range in it.
func listRange(a arrow.Array, i int) (arrow.Array, int, int) {
	l := a.(interface {
		ListValues() arrow.Array
		ValueOffsets(int) (int64, int64)
	})
	lo, hi := l.ValueOffsets(i)
	return l.ListValues(), int(lo), int(hi)
}

// listAt is row i of a list-of-text column; nil if null.
func listAt(a arrow.Array, i int) []string {
	if a.IsNull(i) {
		return nil
	}
	vals, lo, hi := listRange(a, i)
	out := make([]string, 0, hi-lo)
	for j := lo; j < hi; j++ {
		out = append(out, textAt(vals, j))
	}
	return out
}

// CatalogueEmbeddingsCols is the embeddings table of a catalogue (a job's
// data.embeddings) as monomer gen --format catalogue writes it: keyed by
// the catalogue's id (ReadVectors takes CatalogueIDColumn).
type CatalogueEmbeddingsCols struct {
	_         keyed
	ID        []string    `col:"id"`
	Embedding [][]float32 `col:"embedding"`
}

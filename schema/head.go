package schema

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Head reads the first n rows of the Parquet table at path (every row when
// n < 0): it calls start with the table's row count and schema, from the
// footer, then each with the rows batch by batch, in order, the last batch
// cut at the n-th row. Row groups after the one holding the n-th row are
// not read, so the head of a table of millions of rows costs a row group.
// A batch is released when each returns.
func Head(ctx context.Context, path string, n int64, start func(rows int64, sc *arrow.Schema) error, each func(arrow.RecordBatch) error) error {
	rdr, err := openPages(path, func(rdr *file.Reader) []int { return headGroups(rdr, n) })
	if err != nil {
		return fmt.Errorf("schema: %s: %w", path, err)
	}
	defer rdr.Close()
	fr, err := newFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1024})
	if err != nil {
		return fmt.Errorf("schema: %s: %w", path, err)
	}
	stored, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("schema: %s: %w", path, damage(err))
	}
	sc, views := shownSchema(stored, fr)
	if err := start(rdr.NumRows(), sc); err != nil {
		return err
	}
	groups := headGroups(rdr, n)
	if len(groups) == 0 || sc.NumFields() == 0 {
		return nil // pqarrow's reader of no columns never ends
	}
	rr, err := guard(func() (pqarrow.RecordReader, error) { return fr.GetRecordReader(ctx, nil, groups) })
	if err != nil {
		return fmt.Errorf("schema: %s: %w", path, err)
	}
	defer rr.Release()
	for left := n; n < 0 || left > 0; {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := readRecord(rr)
		if errors.Is(err, io.EOF) || rec == nil && err == nil {
			break
		}
		if err != nil {
			return fmt.Errorf("schema: %s: %w", path, err)
		}
		rec = view(rec, sc, views)
		if n >= 0 && rec.NumRows() > left {
			cut := rec.NewSlice(0, left)
			err = each(cut)
			cut.Release()
		} else {
			err = each(rec)
		}
		left -= rec.NumRows()
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// shownSchema is the schema Head hands over: the stored one, but for a
// column pqarrow cannot read, which newFileReader reads as its Parquet
// type instead. A duration is then shown as itself again (views marks its
// column: the int64 values read are a duration's), any other such type as
// the Parquet type read.
func shownSchema(stored *arrow.Schema, fr *pqarrow.FileReader) (*arrow.Schema, []bool) {
	fields := stored.Fields()
	views := make([]bool, len(fields))
	for i := range fields {
		got := fr.Manifest.Fields[i].Field.Type
		switch {
		case arrow.TypeEqual(got, fields[i].Type):
		case fields[i].Type.ID() == arrow.DURATION && got.ID() == arrow.INT64:
			views[i] = true
		default:
			fields[i].Type = got
		}
	}
	md := stored.Metadata()
	return arrow.NewSchema(fields, &md), views
}

// view is rec with the columns views marks given sc's type, which has
// their layout; the result is a new reference, for the caller to release.
func view(rec arrow.RecordBatch, sc *arrow.Schema, views []bool) arrow.RecordBatch {
	cols := slices.Clone(rec.Columns())
	for c, v := range views {
		if v {
			d := rec.Column(c).Data()
			nd := array.NewData(sc.Field(c).Type, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
			cols[c] = array.MakeFromData(nd)
			nd.Release()
			defer cols[c].Release()
		}
	}
	return array.NewRecordBatch(sc, cols, rec.NumRows())
}

// headGroups are the row groups holding the first n rows (all when n < 0).
func headGroups(rdr *file.Reader, n int64) []int {
	groups := []int{}
	for g, seen := 0, int64(0); g < rdr.NumRowGroups() && (n < 0 || seen < n); g++ {
		groups = append(groups, g)
		seen += rdr.MetaData().RowGroup(g).NumRows()
	}
	return groups
}

// CellText is cell i of a as diff prints it: null, a number in the fewest
// digits that read back to it, a string quoted, anything else (a list) as
// Arrow writes it, cut at 200 characters.
func CellText(a arrow.Array, i int) string { return cellString(a, i) }

// CellRaw is cell i of a for a CSV field: CellText without the quotes
// around a string and without the cut.
func CellRaw(a arrow.Array, i int) string {
	switch x := a.(type) {
	case *array.String:
		if !x.IsNull(i) {
			return x.Value(i)
		}
	case *array.Float32:
		if !x.IsNull(i) {
			return strconv.FormatFloat(float64(x.Value(i)), 'g', -1, 32)
		}
	case *array.Float64:
		if !x.IsNull(i) {
			return strconv.FormatFloat(x.Value(i), 'g', -1, 64)
		}
	}
	if a.IsNull(i) {
		return ""
	}
	return a.ValueStr(i)
}

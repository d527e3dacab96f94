package schema

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// TableDiff is what Compare found between two tables.
type TableDiff struct {
	// Row is the first row with a cell that differs beyond the tolerance,
	// Column the first such column in it, A and B both values as text. Row
	// is -1 when no cell differs.
	Row    int64
	Column string
	A, B   string
	// Detail describes a difference that is not a cell: another column
	// count, column name or type, or row count.
	Detail string
	// Largest is the largest relative difference between float cells seen
	// (with a tolerance only), and where.
	Largest            float64
	LargestRow         int64
	LargestColumn      string
	LargestA, LargestB string
}

// Differ reports whether the tables differ beyond the tolerance.
func (d *TableDiff) Differ() bool { return d.Row >= 0 || d.Detail != "" }

// Compare compares two tables cell by cell. tol is a relative tolerance for
// floating-point cells, |a-b| <= tol*max(|a|,|b|); with 0, cells must be
// bitwise identical (NaN equals NaN, 0 differs from -0) and Compare stops at
// the first differing row. Errors are ReadTable's.
func Compare(ctx context.Context, pa, pb string, tol float64) (*TableDiff, error) {
	ta, err := ReadTable(ctx, pa)
	if err != nil {
		return nil, err
	}
	defer ta.Release()
	tb, err := ReadTable(ctx, pb)
	if err != nil {
		return nil, err
	}
	defer tb.Release()
	d := &TableDiff{Row: -1, LargestRow: -1}
	if ta.NumCols() != tb.NumCols() {
		d.Detail = fmt.Sprintf("%d columns vs %d", ta.NumCols(), tb.NumCols())
		return d, nil
	}
	for c := 0; c < int(ta.NumCols()); c++ {
		fa, fb := ta.Schema().Field(c), tb.Schema().Field(c)
		if fa.Name != fb.Name || !arrow.TypeEqual(fa.Type, fb.Type) {
			d.Detail = fmt.Sprintf("column %d is %s %s vs %s %s", c, fa.Name, fa.Type, fb.Name, fb.Type)
			return d, nil
		}
	}
	rows := min(ta.NumRows(), tb.NumRows())
	for c := 0; c < int(ta.NumCols()); c++ {
		name := ta.Schema().Field(c).Name
		limit := rows
		if d.Row >= 0 && tol == 0 {
			limit = d.Row // a difference in an earlier row is already known
		}
		ca, cb := newCursor(ta.Column(c).Data()), newCursor(tb.Column(c).Data())
		for r := int64(0); r < limit; r++ {
			xa, ia := ca.at(r)
			xb, ib := cb.at(r)
			eq, rel := valueEqual(xa, ia, xb, ib, tol)
			if rel > d.Largest {
				d.Largest, d.LargestRow, d.LargestColumn = rel, r, name
				d.LargestA, d.LargestB = cellString(xa, ia), cellString(xb, ib)
			}
			if !eq && (d.Row < 0 || r < d.Row) {
				d.Row, d.Column, d.A, d.B = r, name, cellString(xa, ia), cellString(xb, ib)
				if tol == 0 {
					break
				}
			}
		}
	}
	if d.Row < 0 && ta.NumRows() != tb.NumRows() {
		d.Detail = fmt.Sprintf("%d rows vs %d (the first %d are equal)", ta.NumRows(), tb.NumRows(), rows)
	}
	return d, nil
}

// cursor walks a chunked column by global row, forward.
type cursor struct {
	chunks []arrow.Array
	k      int
	base   int64
}

func newCursor(ch *arrow.Chunked) *cursor { return &cursor{chunks: ch.Chunks()} }

func (c *cursor) at(r int64) (arrow.Array, int) {
	for c.k < len(c.chunks) && r >= c.base+int64(c.chunks[c.k].Len()) {
		c.base += int64(c.chunks[c.k].Len())
		c.k++
	}
	return c.chunks[c.k], int(r - c.base)
}

// valueEqual compares a[i] with b[j] (same type). It returns whether they
// are equal within tol and the largest relative difference between float
// values in them.
func valueEqual(a arrow.Array, i int, b arrow.Array, j int, tol float64) (bool, float64) {
	if a.IsNull(i) || b.IsNull(j) {
		return a.IsNull(i) && b.IsNull(j), 0
	}
	switch x := a.(type) {
	case *array.Float32:
		return floatEqual(float64(x.Value(i)), float64(b.(*array.Float32).Value(j)), tol)
	case *array.Float64:
		return floatEqual(x.Value(i), b.(*array.Float64).Value(j), tol)
	case *array.String:
		return x.Value(i) == b.(*array.String).Value(j), 0
	case *array.Int32:
		return x.Value(i) == b.(*array.Int32).Value(j), 0
	case *array.Int64:
		return x.Value(i) == b.(*array.Int64).Value(j), 0
	case *array.Int8:
		return x.Value(i) == b.(*array.Int8).Value(j), 0
	case *array.Boolean:
		return x.Value(i) == b.(*array.Boolean).Value(j), 0
	case array.ListLike:
		y := b.(array.ListLike)
		sa, ea := x.ValueOffsets(i)
		sb, eb := y.ValueOffsets(j)
		if ea-sa != eb-sb {
			return false, 0
		}
		eq, worst := true, 0.0
		va, vb := x.ListValues(), y.ListValues()
		for k := int64(0); k < ea-sa; k++ {
			e, r := valueEqual(va, int(sa+k), vb, int(sb+k), tol)
			eq = eq && e
			worst = max(worst, r)
			if !eq && tol == 0 {
				break
			}
		}
		return eq, worst
	}
	return a.ValueStr(i) == b.ValueStr(j), 0
}

// floatEqual compares within relative tolerance tol (bitwise when 0).
func floatEqual(x, y, tol float64) (bool, float64) {
	switch {
	case math.IsNaN(x) || math.IsNaN(y):
		return math.IsNaN(x) && math.IsNaN(y), 0
	case tol == 0:
		return math.Float64bits(x) == math.Float64bits(y), 0
	case x == y:
		return true, 0
	case math.IsInf(x, 0) || math.IsInf(y, 0):
		return false, math.Inf(1)
	}
	rel := math.Abs(x-y) / max(math.Abs(x), math.Abs(y))
	return rel <= tol, rel
}

func cellString(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "null"
	}
	switch x := a.(type) {
	case *array.Float32:
		return strconv.FormatFloat(float64(x.Value(i)), 'g', -1, 32)
	case *array.Float64:
		return strconv.FormatFloat(x.Value(i), 'g', -1, 64)
	case *array.String:
		return strconv.Quote(x.Value(i))
	}
	s := a.ValueStr(i)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

package schema

import (
	"context"
	"fmt"
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
)

// A list column of numbers (a bag of words' term ids and weights, LDA's
// topic proportions) is decoded here with arrow-go's typed column-chunk
// readers straight into one Go array of the size the footer gives, rather
// than through pqarrow: its record reader grows the values and both level
// buffers by doubling (parquet/file/record_reader.go), copying a column of
// tens of millions of values several times into fresh memory, and the
// Arrow arrays were then copied once more into Go slices. Each row group's
// chunk of each column is a task of its own on all cores; the values land
// where the footer's counts put them, so the result does not depend on
// which goroutine decodes what.

// listLevelBatch is how many levels a chunk decodes at a time: two int16
// buffers of it per task in flight.
const listLevelBatch = 1 << 16

// maxListValues bounds the values a footer may announce for one list
// column (16 GB of float64, 50 times Electronics' bag of words), so a
// corrupt count fails as an error before it is allocated; a count below
// it that the pages do not hold fails after (the memory was never
// touched).
const maxListValues = 1 << 31

// batchReader is what file.Int32ColumnChunkReader and its kin share.
type batchReader[T any] interface {
	HasNext() bool
	ReadBatch(batchSize int64, values []T, defLvls, repLvls []int16) (int64, int, error)
}

// numericList reports whether t is a list of numbers, the columns
// decoded here.
func numericList(t arrow.DataType) bool {
	l, ok := t.(*arrow.ListType)
	if !ok {
		return false
	}
	switch l.Elem().ID() {
	case arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

// listChunk is one row group's part of a list column: where its rows and
// values go in the column's arrays.
type listChunk struct {
	rg            int
	row, rows     int64 // first row and row count
	value, values int64 // first value slot and the footer's value count (levels)
}

// listPlan lays a list column's chunks out in its arrays from the footer:
// row counts from the row groups, value slots from each chunk's value
// count (a count of levels, so empty lists leave a few slots unused).
func listPlan(rdr *file.Reader, path, name string, leaf int) ([]listChunk, int64, error) {
	md := rdr.MetaData()
	chunks := make([]listChunk, md.NumRowGroups())
	var row, value int64
	for g := range chunks {
		rg := md.RowGroup(g)
		cc, err := rg.ColumnChunk(leaf)
		if err != nil {
			return nil, 0, fmt.Errorf("schema: %s column %s row group %d: %w", path, name, g, err)
		}
		nv := cc.NumValues()
		// Every row of a list column has at least one level.
		if nv < 0 || rg.NumRows() < 0 || rg.NumRows() > nv || nv > maxListValues-value {
			return nil, 0, fmt.Errorf("schema: %s column %s row group %d: footer gives %d values for %d rows", path, name, g, nv, rg.NumRows())
		}
		chunks[g] = listChunk{rg: g, row: row, rows: rg.NumRows(), value: value, values: nv}
		row += rg.NumRows()
		value += nv
	}
	if row != rdr.NumRows() {
		return nil, 0, fmt.Errorf("schema: %s: row groups hold %d rows, footer says %d", path, row, rdr.NumRows())
	}
	return chunks, value, nil
}

// nonEmptyLevel is the definition level at which a leaf's list holds an
// element (null or not): the level of its repeated node. Below it the
// list is empty or null; from it up to the maximum the element is null.
// ok is false for a leaf under no repeated node (not a list).
func nonEmptyLevel(rdr *file.Reader, leaf int) (level int16, ok bool) {
	var up []pqschema.Node // leaf to the root's child
	for n := rdr.MetaData().Schema.Column(leaf).SchemaNode(); n != nil && n.Parent() != nil; n = n.Parent() {
		up = append(up, n)
	}
	for i := len(up) - 1; i >= 0; i-- {
		switch up[i].RepetitionType() {
		case parquet.Repetitions.Optional:
			level++
		case parquet.Repetitions.Repeated:
			return level + 1, true
		}
	}
	return 0, false
}

// listColumn is a list column of numbers being decoded: its chunks are
// tasks that may run in any order on any goroutine.
type listColumn interface {
	chunks() int
	decode(ctx context.Context, g int) error
	value() reflect.Value // the [][]T read
}

type listCol[T any] struct {
	rdr              *file.Reader
	path, name       string
	leaf             int
	maxDef, nonEmpty int16
	plan             []listChunk
	backing          []T
	rows             [][]T
}

// newListColumn lays out the decoding of list column name (Parquet leaf
// leaf) of element type elem: one backing array for all its values, the
// rows to be cut from it, each capped at its own end.
func newListColumn(rdr *file.Reader, path, name string, leaf int, elem arrow.Type) (listColumn, error) {
	switch elem {
	case arrow.INT32:
		return planList[int32](rdr, path, name, leaf)
	case arrow.INT64:
		return planList[int64](rdr, path, name, leaf)
	case arrow.FLOAT32:
		return planList[float32](rdr, path, name, leaf)
	case arrow.FLOAT64:
		return planList[float64](rdr, path, name, leaf)
	}
	return nil, fmt.Errorf("schema: %s column %s: a list of %s", path, name, elem)
}

func planList[T any](rdr *file.Reader, path, name string, leaf int) (*listCol[T], error) {
	descr := rdr.MetaData().Schema.Column(leaf)
	nonEmpty, ok := nonEmptyLevel(rdr, leaf)
	if !ok || descr.MaxRepetitionLevel() != 1 {
		return nil, fmt.Errorf("schema: %s column %s: not a list of numbers (repetition level %d)", path, name, descr.MaxRepetitionLevel())
	}
	plan, slots, err := listPlan(rdr, path, name, leaf)
	if err != nil {
		return nil, err
	}
	return &listCol[T]{
		rdr: rdr, path: path, name: name, leaf: leaf,
		maxDef: descr.MaxDefinitionLevel(), nonEmpty: nonEmpty, plan: plan,
		backing: make([]T, slots), rows: make([][]T, rdr.NumRows()),
	}, nil
}

func (l *listCol[T]) chunks() int          { return len(l.plan) }
func (l *listCol[T]) value() reflect.Value { return reflect.ValueOf(l.rows) }

func (l *listCol[T]) decode(ctx context.Context, g int) error {
	c := l.plan[g]
	err := decodeListChunk(ctx, l.rdr, c, l.leaf, l.maxDef, l.nonEmpty, l.backing[c.value:c.value+c.values], l.rows[c.row:c.row+c.rows])
	if err != nil {
		return fmt.Errorf("schema: %s column %s row group %d: %w", l.path, l.name, g, err)
	}
	return nil
}

// decodeListChunk decodes one row group's chunk of a list column into
// vals (its value slots) and rows (its rows, cut from vals). A level at
// the maximum definition level is a value; one below nonEmpty starts an
// empty (or null) list; one between is a null element, which no monomer
// table holds and which a Go slice of numbers cannot say, so it is
// refused.
func decodeListChunk[T any](ctx context.Context, rdr *file.Reader, c listChunk, leaf int, maxDef, nonEmpty int16, vals []T, rows [][]T) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	col, err := rdr.RowGroup(c.rg).Column(leaf)
	if err != nil {
		return err
	}
	cr, ok := col.(batchReader[T])
	if !ok {
		return fmt.Errorf("physical type %s", col.Descriptor().PhysicalType())
	}
	def := make([]int16, listLevelBatch)
	rep := make([]int16, listLevelBatch)
	var levels, nv int64 // levels and values decoded so far
	row, start := int64(-1), int64(0)
	for cr.HasNext() {
		room := int64(len(vals)) - levels
		if room == 0 {
			return fmt.Errorf("more values than the footer's %d", len(vals))
		}
		n, got, err := cr.ReadBatch(min(listLevelBatch, room), vals[nv:], def, rep)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		at := nv
		for i := range n {
			if rep[i] == 0 {
				if row >= 0 {
					rows[row] = vals[start:at:at]
				}
				row++
				if row >= c.rows {
					return fmt.Errorf("more rows than the footer's %d", c.rows)
				}
				start = at
			} else if rep[i] != 1 || row < 0 {
				return fmt.Errorf("repetition level %d at level %d", rep[i], levels+i)
			}
			switch d := def[i]; {
			case d == maxDef:
				at++
			case d > maxDef || d < 0:
				return fmt.Errorf("definition level %d above the column's %d", d, maxDef)
			case d >= nonEmpty:
				return fmt.Errorf("row %d: a null element", c.row+row)
			case rep[i] != 0:
				return fmt.Errorf("row %d: an empty list continued (definition level %d)", c.row+row, d)
			}
		}
		if at-nv != int64(got) {
			return fmt.Errorf("%d values for %d present levels", got, at-nv)
		}
		levels += n
		nv = at
	}
	if err := col.Err(); err != nil {
		return err
	}
	if levels != int64(len(vals)) {
		return fmt.Errorf("%d values, the footer says %d", levels, len(vals))
	}
	if row >= 0 {
		rows[row] = vals[start:nv:nv]
	}
	if row+1 != c.rows {
		return fmt.Errorf("%d rows, the footer says %d", row+1, c.rows)
	}
	return nil
}

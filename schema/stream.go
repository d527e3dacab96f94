package schema

import (
	"context"
	"fmt"
	"iter"
	"reflect"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Writer streams a table too large to hold whole: rows are appended in
// batches of any size and written in row groups of a fixed number of rows,
// so memory holds one group and the file's bytes depend on the rows alone,
// not on how they were batched. T is a table struct (see Of), as for Write.
type Writer[T any] struct {
	w     *writer
	idx   []int         // struct field of each column
	group int           // rows per row group
	buf   reflect.Value // a T holding the rows not written yet
	n     int           // rows in buf
	err   error         // the first error; later calls return it
	done  bool          // closed
}

// NewWriter starts table T at path, replacing any file there, cut into row
// groups of groupRows rows (1 to RowGroupRows), the last one shorter. Close
// it, after an error too: it closes the file.
func NewWriter[T any](path string, groupRows int) (*Writer[T], error) {
	idx, s, err := layout(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	if groupRows < 1 || groupRows > RowGroupRows {
		return nil, fmt.Errorf("schema: %s: %d rows per row group, want 1 to %d", path, groupRows, RowGroupRows)
	}
	w, err := create(path, s)
	if err != nil {
		return nil, err
	}
	return &Writer[T]{w: w, idx: idx, group: groupRows, buf: reflect.New(reflect.TypeFor[T]()).Elem()}, nil
}

// Append adds rows: every column of cols holds the same number of rows.
// A row group is written each time groupRows rows are buffered.
func (w *Writer[T]) Append(cols T) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return fmt.Errorf("schema: %s: append after Close", w.w.path)
	}
	v := reflect.ValueOf(cols)
	n := -1
	for k, i := range w.idx {
		l := v.Field(i).Len()
		if n >= 0 && l != n {
			w.err = fmt.Errorf("schema: %s column %s: %d rows, want %d", w.w.path, w.w.schema.Field(k).Name, l, n)
			return w.err
		}
		n = l
	}
	for lo := 0; lo < n; {
		hi := min(n, lo+w.group-w.n)
		for _, i := range w.idx {
			f := w.buf.Field(i)
			f.Set(reflect.AppendSlice(f, v.Field(i).Slice(lo, hi)))
		}
		w.n += hi - lo
		lo = hi
		if w.n == w.group {
			if w.err = w.flush(); w.err != nil {
				return w.err
			}
		}
	}
	return nil
}

// EndGroup writes the rows buffered so far as a row group of their own
// (none if there are none), so that the caller decides where groups end:
// with a groupRows above any block it appends, a group per block.
func (w *Writer[T]) EndGroup() error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return fmt.Errorf("schema: %s: EndGroup after Close", w.w.path)
	}
	w.err = w.flush()
	return w.err
}

// flush writes the buffered rows as one row group and empties the buffer,
// keeping its capacity.
func (w *Writer[T]) flush() error {
	if w.n == 0 {
		return nil
	}
	cs := make([]any, len(w.idx))
	for k, i := range w.idx {
		cs[k] = w.buf.Field(i).Interface()
	}
	if err := w.w.append(cs, w.group); err != nil {
		return err
	}
	for _, i := range w.idx {
		f := w.buf.Field(i)
		f.SetLen(0)
	}
	w.n = 0
	return nil
}

// Close writes the rows still buffered, finishes the file and returns the
// number of rows written, or the first error of the writer's life. Later
// calls return the same, so a deferred Close may follow the checked one.
func (w *Writer[T]) Close() (int64, error) {
	if w.done {
		return w.w.rows, w.err
	}
	w.done = true
	if w.err == nil {
		w.err = w.flush()
	}
	if w.err != nil {
		w.w.fw.Close()
		w.w.f.Close()
		w.w.rows = 0
		return 0, w.err
	}
	w.err = w.w.close()
	if w.err != nil {
		w.w.rows = 0
	}
	return w.w.rows, w.err
}

// Batches iterates over the table at path one row group at a time, each
// as a T (see Of) holding that group's rows, so memory holds one group.
// The file must hold exactly T's columns, in order. An error (opening,
// another table, a damaged group, ctx done) is yielded once and ends the
// loop.
func Batches[T any](ctx context.Context, path string) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		idx, want, err := layout(reflect.TypeFor[T]())
		if err != nil {
			yield(zero, err)
			return
		}
		rdr, err := openParquet(path)
		if err != nil {
			yield(zero, fmt.Errorf("schema: %s: %w", path, err))
			return
		}
		defer rdr.Close()
		fr, err := newFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: RowGroupRows})
		if err != nil {
			yield(zero, fmt.Errorf("schema: %s: %w", path, err))
			return
		}
		got, err := fr.Schema()
		if err == nil && !sameColumns(got, want) {
			err = fmt.Errorf("schema: %s: columns %v, want those of %s", path, got, reflect.TypeFor[T]())
		}
		if err != nil {
			yield(zero, err)
			return
		}
		leaves := make([]int, rdr.MetaData().Schema.NumColumns())
		for i := range leaves {
			leaves[i] = i
		}
		for rg := range rdr.NumRowGroups() {
			tbl, err := readTable(func() (arrow.Table, error) { return fr.ReadRowGroups(ctx, leaves, []int{rg}) })
			if err != nil {
				yield(zero, fmt.Errorf("schema: %s row group %d: %w", path, rg, err))
				return
			}
			t := &Table{Path: path, Table: tbl}
			var out T
			v := reflect.ValueOf(&out).Elem()
			for k, i := range idx {
				var col any
				if col, err = t.read(want.Field(k)); err != nil {
					break
				}
				v.Field(i).Set(reflect.ValueOf(col))
			}
			tbl.Release()
			if err != nil {
				yield(zero, err)
				return
			}
			if !yield(out, nil) {
				return
			}
		}
	}
}

// sameColumns reports whether a and b have the same column names and types,
// in order.
func sameColumns(a, b *arrow.Schema) bool {
	return slices.EqualFunc(a.Fields(), b.Fields(), func(f, g arrow.Field) bool {
		return f.Name == g.Name && arrow.TypeEqual(f.Type, g.Type)
	})
}

// read returns column f as the Go slice type layout gives its Arrow type.
func (t *Table) read(f arrow.Field) (any, error) {
	switch f.Type.ID() {
	case arrow.STRING:
		return t.Strings(f.Name)
	case arrow.BOOL:
		return t.Bools(f.Name)
	case arrow.INT8:
		return t.Int8s(f.Name)
	case arrow.INT32:
		return t.Int32s(f.Name)
	case arrow.INT64:
		return t.Int64s(f.Name)
	case arrow.FLOAT32:
		return t.Float32s(f.Name)
	case arrow.FLOAT64:
		return t.Float64s(f.Name)
	case arrow.LIST:
		switch f.Type.(*arrow.ListType).Elem().ID() {
		case arrow.INT32:
			return t.Int32Lists(f.Name)
		case arrow.INT64:
			return t.Int64Lists(f.Name)
		case arrow.FLOAT32:
			return t.Float32Lists(f.Name)
		case arrow.FLOAT64:
			return t.Float64Lists(f.Name)
		}
	}
	return nil, fmt.Errorf("schema: %s column %s: unsupported type %s", t.Path, f.Name, f.Type)
}

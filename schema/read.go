package schema

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"monomer/internal/par"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Table is a Parquet file read whole, with typed column access by name.
type Table struct {
	Path string
	arrow.Table
}

// Open reads the table at path; Release it when done. Stages read with
// ReadAll and ReadFields; Open and Read serve the report and tests until
// they do too.
func Open(ctx context.Context, path string) (*Table, error) {
	t, err := ReadTable(ctx, path)
	if err != nil {
		return nil, err
	}
	return &Table{Path: path, Table: t}, nil
}

// Rows is the number of rows.
func (t *Table) Rows() int { return int(t.NumRows()) }

// Has reports whether the table has a column name: a reader of a column
// added later checks it to read older files.
func (t *Table) Has(name string) bool { return len(t.Schema().FieldIndices(name)) > 0 }

func (t *Table) column(name string) (*arrow.Chunked, error) {
	idx := t.Schema().FieldIndices(name)
	if len(idx) == 0 {
		return nil, fmt.Errorf("%w %q in %s", ErrNoColumn, name, t.Path)
	}
	return t.Column(idx[0]).Data(), nil
}

// valuer is an arrow array with typed Value access.
type valuer[T any] interface {
	arrow.Array
	Value(i int) T
}

func flat[T any, A valuer[T]](t *Table, name string) ([]T, error) {
	c, err := t.column(name)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, c.Len())
	for _, ch := range c.Chunks() {
		a, ok := ch.(A)
		if !ok {
			return nil, fmt.Errorf("schema: %s column %s is %s", t.Path, name, ch.DataType())
		}
		if v, ok := any(a).(valuesArray[T]); ok { // numbers: a bulk copy
			out = append(out, v.Values()...)
			continue
		}
		for i := 0; i < a.Len(); i++ {
			out = append(out, a.Value(i))
		}
	}
	return out, nil
}

// Strings returns a string column.
func (t *Table) Strings(name string) ([]string, error) {
	return flat[string, *array.String](t, name)
}

// Bools returns a boolean column.
func (t *Table) Bools(name string) ([]bool, error) { return flat[bool, *array.Boolean](t, name) }

// Int8s returns an int8 column.
func (t *Table) Int8s(name string) ([]int8, error) { return flat[int8, *array.Int8](t, name) }

// Int32s returns an int32 column.
func (t *Table) Int32s(name string) ([]int32, error) { return flat[int32, *array.Int32](t, name) }

// Int64s returns an int64 column.
func (t *Table) Int64s(name string) ([]int64, error) { return flat[int64, *array.Int64](t, name) }

// Float32s returns a float32 column.
func (t *Table) Float32s(name string) ([]float32, error) {
	return flat[float32, *array.Float32](t, name)
}

// Float64s returns a float64 column.
func (t *Table) Float64s(name string) ([]float64, error) {
	return flat[float64, *array.Float64](t, name)
}

// valuesArray is an arrow array of fixed-width numbers whose values can be
// copied in bulk.
type valuesArray[T any] interface {
	arrow.Array
	Values() []T
}

// lists returns a list column as one row slice per row, all cut from one
// backing array (each capped at its own end, so appending to a row never
// writes into the next): one allocation and a bulk copy per chunk, not one
// per row.
func lists[T any, A valuesArray[T]](t *Table, name string) ([][]T, error) {
	c, err := t.column(name)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, ch := range c.Chunks() {
		l, ok := ch.(*array.List)
		if !ok {
			return nil, fmt.Errorf("schema: %s column %s is %s, not a list", t.Path, name, ch.DataType())
		}
		if _, ok := l.ListValues().(A); !ok {
			return nil, fmt.Errorf("schema: %s column %s has values %s", t.Path, name, l.ListValues().DataType())
		}
		if l.Len() > 0 {
			lo, _ := l.ValueOffsets(0)
			_, hi := l.ValueOffsets(l.Len() - 1)
			total += int(hi - lo)
		}
	}
	backing := make([]T, total)
	out := make([][]T, 0, c.Len())
	at := 0
	for _, ch := range c.Chunks() {
		l := ch.(*array.List)
		if l.Len() == 0 {
			continue
		}
		vals := l.ListValues().(A).Values()
		first, _ := l.ValueOffsets(0)
		_, last := l.ValueOffsets(l.Len() - 1)
		copyOnCores(backing[at:at+int(last-first)], vals[first:last])
		for i := 0; i < l.Len(); i++ {
			lo, hi := l.ValueOffsets(i)
			a, b := at+int(lo-first), at+int(hi-first)
			out = append(out, backing[a:b:b])
		}
		at += int(last - first)
	}
	return out, nil
}

// copyOnCores copies src into dst (of its length) in pieces of 1 M
// values on all cores: a bag of words' lists are hundreds of MB, whose
// page faults alone kept one core busy for half a second.
func copyOnCores[T any](dst, src []T) {
	par.Spans(len(src), 1<<20, 0, func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
}

// Int32Lists returns a list<int32> column.
func (t *Table) Int32Lists(name string) ([][]int32, error) {
	return lists[int32, *array.Int32](t, name)
}

// Float32Lists returns a list<float32> column.
func (t *Table) Float32Lists(name string) ([][]float32, error) {
	return lists[float32, *array.Float32](t, name)
}

// Float64Lists returns a list<float64> column.
func (t *Table) Float64Lists(name string) ([][]float64, error) {
	return lists[float64, *array.Float64](t, name)
}

// Int64Lists returns a list<int64> column.
func (t *Table) Int64Lists(name string) ([][]int64, error) {
	return lists[int64, *array.Int64](t, name)
}

// Cols reads several columns of a table, keeping the first error, so a
// reader of many columns checks once: c := t.Cols(); x := c.Int32s("x");
// y := c.Strings("y"); if c.Err() != nil { ... }.
type Cols struct {
	t   *Table
	err error
}

// Cols starts a multi-column read.
func (t *Table) Cols() *Cols { return &Cols{t: t} }

// Err is the first error of the reads so far.
func (c *Cols) Err() error { return c.err }

func sticky[T any](c *Cols, read func(string) ([]T, error), name string) []T {
	if c.err != nil {
		return nil
	}
	v, err := read(name)
	c.err = err
	return v
}

func (c *Cols) Strings(name string) []string         { return sticky(c, c.t.Strings, name) }
func (c *Cols) Bools(name string) []bool             { return sticky(c, c.t.Bools, name) }
func (c *Cols) Int8s(name string) []int8             { return sticky(c, c.t.Int8s, name) }
func (c *Cols) Int32s(name string) []int32           { return sticky(c, c.t.Int32s, name) }
func (c *Cols) Int64s(name string) []int64           { return sticky(c, c.t.Int64s, name) }
func (c *Cols) Float32s(name string) []float32       { return sticky(c, c.t.Float32s, name) }
func (c *Cols) Float64s(name string) []float64       { return sticky(c, c.t.Float64s, name) }
func (c *Cols) Int32Lists(name string) [][]int32     { return sticky(c, c.t.Int32Lists, name) }
func (c *Cols) Int64Lists(name string) [][]int64     { return sticky(c, c.t.Int64Lists, name) }
func (c *Cols) Float32Lists(name string) [][]float32 { return sticky(c, c.t.Float32Lists, name) }
func (c *Cols) Float64Lists(name string) [][]float64 { return sticky(c, c.t.Float64Lists, name) }

// Has reports whether the table has a column name.
func (c *Cols) Has(name string) bool { return c.t.Has(name) }

// Path is the table's file.
func (c *Cols) Path() string { return c.t.Path }

// Read opens the table at path, hands its columns to read and releases it;
// the error is the first of opening, reading a column, or read's own.
func Read(ctx context.Context, path string, read func(c *Cols) error) error {
	t, err := Open(ctx, path)
	if err != nil {
		return err
	}
	defer t.Release()
	c := t.Cols()
	if err := read(c); err != nil {
		return err
	}
	return c.Err()
}

// Columns lists the names of the top-level columns of the table at path,
// in order, from its footer.
func Columns(path string) ([]string, error) {
	rdr, err := openFooter(path)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", path, err)
	}
	defer rdr.Close()
	root := rdr.MetaData().Schema.Root()
	names := make([]string, root.NumFields())
	for i := range names {
		names[i] = root.Field(i).Name()
	}
	return names, nil
}

// NumRows reads a table's row count from its footer, without its data.
func NumRows(path string) (int64, error) {
	rdr, err := openFooter(path)
	if err != nil {
		return 0, fmt.Errorf("schema: %s: %w", path, err)
	}
	defer rdr.Close()
	return rdr.NumRows(), nil
}

// ReadAll reads the whole table at path as its table struct T (see Of),
// the reader matching Write: code names a column by T's field, so a
// renamed column fails to compile, and a file lacking one fails with an
// error naming it and the file (ErrNoColumn). The file holds T's columns
// with their types, in T's order, except that it may lack a column tagged
// optional (added after the table's first release, so that an older run
// directory still reads): that field is then nil.
func ReadAll[T any](ctx context.Context, path string) (T, error) {
	var out T
	err := read(ctx, path, reflect.ValueOf(&out).Elem(), nil, false)
	return out, err
}

// ReadFields is ReadAll reading only some columns, the others left as they
// are: fields point into cols (&cols.XIdx, ...), and only those columns are
// decoded. The file may hold other columns too.
func ReadFields[T any](ctx context.Context, path string, cols *T, fields ...any) error {
	v := reflect.ValueOf(cols).Elem()
	if len(fields) == 0 {
		return fmt.Errorf("schema: %s: ReadFields of no field of %s", path, v.Type())
	}
	return read(ctx, path, v, fields, false)
}

// ReadFieldsSideBySide is ReadFields decoding the columns other than lists
// of numbers on a goroutine each (lists of numbers are decoded on all cores
// by any read), for reads of a few large columns on a stage's serial path
// (the split's pairs). The goroutines are one per column, not per core,
// so the memory it adds, the decode buffers of the columns in flight
// together, does not grow with GOMAXPROCS; a table of many columns should
// use ReadFields.
func ReadFieldsSideBySide[T any](ctx context.Context, path string, cols *T, fields ...any) error {
	v := reflect.ValueOf(cols).Elem()
	if len(fields) == 0 {
		return fmt.Errorf("schema: %s: ReadFieldsSideBySide of no field of %s", path, v.Type())
	}
	return read(ctx, path, v, fields, true)
}

// read fills the fields of the table struct v named by fields (pointers to
// them), or all of them when fields is nil, from the table at path; with
// sideBySide each column other than a list of numbers is decoded on a
// goroutine of its own. Lists of numbers are a task per row group on all
// cores, each holding one column chunk's bytes and a page at a time.
func read(ctx context.Context, path string, v reflect.Value, fields []any, sideBySide bool) error {
	rt := v.Type()
	idx, want, err := layout(rt)
	if err != nil {
		return err
	}
	sel := make([]int, 0, len(idx)) // positions in want of the columns to read
	if fields == nil {
		for k := range idx {
			sel = append(sel, k)
		}
	}
	for _, f := range fields {
		p := reflect.ValueOf(f)
		k := slices.IndexFunc(idx, func(i int) bool {
			fv := v.Field(i)
			return p.Kind() == reflect.Pointer && p.Type().Elem() == fv.Type() && p.Pointer() == fv.Addr().Pointer()
		})
		if k < 0 {
			return fmt.Errorf("schema: %s: %v is not a pointer to a column of the %s given", path, p.Type(), rt)
		}
		sel = append(sel, k)
	}

	rdr, err := openParquet(path)
	if err != nil {
		return fmt.Errorf("schema: %s: %w", path, err)
	}
	defer rdr.Close()
	fr, err := newFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: RowGroupRows, Parallel: sideBySide})
	if err != nil {
		return fmt.Errorf("schema: %s: %w", path, err)
	}
	got, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("schema: %s: %w", path, err)
	}
	if rdr.MetaData().Schema.NumColumns() != got.NumFields() {
		// Every column Of allows is one Parquet leaf, so column i is leaf i.
		return fmt.Errorf("schema: %s: nested columns, not a table of %s", path, rt)
	}
	var leaves []int  // the file's columns to read
	var present []int // their positions in want
	for _, k := range sel {
		f := want.Field(k)
		fi := got.FieldIndices(f.Name)
		if len(fi) == 0 {
			if _, opt, _ := strings.Cut(rt.Field(idx[k]).Tag.Get("col"), ","); opt == "optional" {
				continue
			}
			return fmt.Errorf("%w %q in %s", ErrNoColumn, f.Name, path)
		}
		if g := got.Field(fi[0]); !sameType(rt.Field(idx[k]), g.Type, f.Type) {
			return fmt.Errorf("schema: %s column %s is %s, want %s", path, f.Name, g.Type, f.Type)
		}
		leaves, present = append(leaves, fi[0]), append(present, k)
	}
	if fields == nil {
		fs := make([]arrow.Field, len(present))
		for n, k := range present {
			fs[n] = want.Field(k)
		}
		same := got.NumFields() == len(fs)
		for n := 0; same && n < len(fs); n++ {
			g := got.Field(n)
			same = g.Name == fs[n].Name && sameType(rt.Field(idx[present[n]]), g.Type, fs[n].Type)
		}
		if !same {
			return fmt.Errorf("schema: %s: columns %v, want those of %s", path, got, rt)
		}
	}
	if len(leaves) == 0 {
		return nil
	}
	// Lists of numbers are decoded straight into Go arrays (lists.go), a
	// task per row group of each; the other columns through pqarrow, as one
	// more task.
	var flatLeaves, flatPresent []int
	var lists []listColumn
	var listPresent []int
	for n, k := range present {
		f := want.Field(k)
		if !numericList(f.Type) {
			flatLeaves, flatPresent = append(flatLeaves, leaves[n]), append(flatPresent, k)
			continue
		}
		l, err := newListColumn(rdr, path, f.Name, leaves[n], f.Type.(*arrow.ListType).Elem().ID())
		if err != nil {
			return err
		}
		lists, listPresent = append(lists, l), append(listPresent, k)
	}
	type task struct{ list, chunk int }
	tasks := []task{{list: -1}}
	for n, l := range lists {
		for g := range l.chunks() {
			tasks = append(tasks, task{n, g})
		}
	}
	errs := make([]error, len(tasks))
	par.For(len(tasks), 0, func(_, i int) {
		// arrow-go's decoders panic on some corrupt pages; off the caller's
		// goroutine that would end the process, so it is this task's error.
		defer func() {
			if p := recover(); p != nil {
				errs[i] = fmt.Errorf("schema: %s: %w: the reader failed: %v", path, ErrDamaged, p)
			}
		}()
		if t := tasks[i]; t.list >= 0 {
			errs[i] = damage(lists[t.list].decode(ctx, t.chunk))
			return
		}
		errs[i] = readFlat(ctx, rdr, fr, path, v, idx, want, flatLeaves, flatPresent)
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for n, k := range listPresent {
		v.Field(idx[k]).Set(lists[n].value())
	}
	return nil
}

// readFlat reads the columns leaves (at positions present of want) through
// pqarrow into the fields of v.
func readFlat(ctx context.Context, rdr *file.Reader, fr *pqarrow.FileReader, path string, v reflect.Value, idx []int, want *arrow.Schema, leaves, present []int) error {
	if len(leaves) == 0 {
		return nil
	}
	rgs := make([]int, rdr.NumRowGroups())
	for i := range rgs {
		rgs[i] = i
	}
	tbl, err := readTable(func() (arrow.Table, error) { return fr.ReadRowGroups(ctx, leaves, rgs) })
	if err != nil {
		return fmt.Errorf("schema: %s: %w", path, err)
	}
	defer tbl.Release()
	t := &Table{Path: path, Table: tbl}
	for _, k := range present {
		col, err := t.read(want.Field(k))
		if err != nil {
			return err
		}
		v.Field(idx[k]).Set(reflect.ValueOf(col))
	}
	return nil
}

package schema

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// RowGroupRows is the fixed row-group length: rows are cut into groups by
// count, never by bytes buffered, so the layout depends only on the rows.
const RowGroupRows = 1 << 20

// compressionLevel pins zstd's level (the library default could change).
const compressionLevel = 3

func writerProps(s *arrow.Schema) *parquet.WriterProperties {
	opts := []parquet.WriterProperty{
		parquet.WithCreatedBy(CreatedBy),
		parquet.WithVersion(parquet.V2_LATEST),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(compressionLevel),
		parquet.WithMaxRowGroupLength(RowGroupRows),
		parquet.WithDictionaryDefault(false),
		parquet.WithStats(true),
	}
	for _, f := range s.Fields() {
		if v, ok := f.Metadata.GetValue(dictKey); ok && v == "true" {
			opts = append(opts, parquet.WithDictionaryFor(f.Name, true))
		}
	}
	return parquet.NewWriterProperties(opts...)
}

// colTypes maps a column's Go slice type to its Arrow type.
var colTypes = map[reflect.Type]arrow.DataType{
	reflect.TypeFor[[]string]():    arrow.BinaryTypes.String,
	reflect.TypeFor[[]bool]():      arrow.FixedWidthTypes.Boolean,
	reflect.TypeFor[[]int8]():      arrow.PrimitiveTypes.Int8,
	reflect.TypeFor[[]int32]():     arrow.PrimitiveTypes.Int32,
	reflect.TypeFor[[]int64]():     arrow.PrimitiveTypes.Int64,
	reflect.TypeFor[[]float32]():   arrow.PrimitiveTypes.Float32,
	reflect.TypeFor[[]float64]():   arrow.PrimitiveTypes.Float64,
	reflect.TypeFor[[][]int32]():   arrow.ListOf(arrow.PrimitiveTypes.Int32),
	reflect.TypeFor[[][]int64]():   arrow.ListOf(arrow.PrimitiveTypes.Int64),
	reflect.TypeFor[[][]float32](): arrow.ListOf(arrow.PrimitiveTypes.Float32),
	reflect.TypeFor[[][]float64](): arrow.ListOf(arrow.PrimitiveTypes.Float64),
	// Lists of strings, for the catalogue tables a user brings (catalogue.go).
	reflect.TypeFor[[][]string]():   arrow.ListOf(arrow.BinaryTypes.String),
	reflect.TypeFor[[][][]string](): arrow.ListOf(arrow.ListOf(arrow.BinaryTypes.String)),
}

// Of returns the schema of the table struct T: one column per field of T
// but blank ones, in field order, named by the field's col tag ("name", or
// "name,dict" for a dictionary-encoded string column; a column added to a
// table after its first release is tagged "name,optional", which ReadAll
// lets older files lack) and typed by its slice type: []string, []bool, []int8, []int32, []int64, []float32,
// []float64, or a list [][]int32, [][]int64, [][]float32, [][]float64,
// [][]string, or a list of lists of strings [][][]string.
// Columns are not nullable.
func Of[T any]() (*arrow.Schema, error) {
	_, s, err := layout(reflect.TypeFor[T]())
	return s, err
}

// layout is T's schema and, per column, the index of its struct field.
func layout(t reflect.Type) ([]int, *arrow.Schema, error) {
	if t.Kind() != reflect.Struct {
		return nil, nil, fmt.Errorf("schema: %s is not a struct of columns", t)
	}
	var idx []int
	var fields []arrow.Field
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Name == "_" {
			continue
		}
		tag, ok := sf.Tag.Lookup("col")
		name, opt, _ := strings.Cut(tag, ",")
		if !ok || name == "" || !sf.IsExported() || (opt != "" && opt != "dict" && opt != "optional") {
			return nil, nil, fmt.Errorf("schema: %s.%s: want an exported field tagged col:\"name\", col:\"name,dict\" or col:\"name,optional\"", t, sf.Name)
		}
		dt, ok := colTypes[sf.Type]
		if !ok || (opt == "dict" && sf.Type != reflect.TypeFor[[]string]()) {
			return nil, nil, fmt.Errorf("schema: %s.%s: unsupported column type %s", t, sf.Name, sf.Type)
		}
		f := arrow.Field{Name: name, Type: dt} // optional leaves no mark: the file's bytes are the same
		if opt == "dict" {
			f.Metadata = arrow.NewMetadata([]string{dictKey}, []string{"true"})
		}
		idx = append(idx, i)
		fields = append(fields, f)
	}
	return idx, arrow.NewSchema(fields, nil), nil
}

// Write writes a whole table, replacing any file at path: cols is a table
// struct (see Of), every field a column of the same length. Rows are cut
// into row groups of RowGroupRows. A table with no rows is still valid.
func Write[T any](path string, cols T) (int64, error) {
	return write(path, cols, RowGroupRows)
}

// write is Write with row groups of group rows; tests use small groups to
// cross many group boundaries in a few rows.
func write[T any](path string, cols T, group int) (int64, error) {
	idx, s, err := layout(reflect.TypeFor[T]())
	if err != nil {
		return 0, err
	}
	v := reflect.ValueOf(cols)
	cs := make([]any, len(idx))
	for k, i := range idx {
		cs[k] = v.Field(i).Interface()
	}
	w, err := create(path, s)
	if err != nil {
		return 0, err
	}
	if err := w.append(cs, group); err != nil {
		w.fw.Close()
		w.f.Close()
		return 0, err
	}
	return w.rows, w.close()
}

// writer appends column batches to one Parquet file.
type writer struct {
	path   string
	schema *arrow.Schema
	f      *os.File
	buf    *bufio.Writer
	fw     *pqarrow.FileWriter
	rows   int64
}

// create starts a Parquet file of schema s at path, replacing any file there.
func create(path string, s *arrow.Schema) (*writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	buf := bufio.NewWriterSize(f, 1<<20)
	fw, err := pqarrow.NewFileWriter(s, buf, writerProps(s), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("schema: %s: %w", path, err)
	}
	return &writer{path: path, schema: s, f: f, buf: buf, fw: fw}, nil
}

// append writes rows given as one Go slice per schema field, in field
// order, in row groups of group rows; the slices' types match the fields'
// (layout derived both).
func (w *writer) append(cols []any, group int) error {
	n := -1
	for i, c := range cols {
		l := reflect.ValueOf(c).Len()
		if n >= 0 && l != n {
			return fmt.Errorf("schema: %s column %s: %d rows, want %d", w.path, w.schema.Field(i).Name, l, n)
		}
		n = l
	}
	for lo := 0; lo < n; lo += group {
		hi := min(lo+group, n)
		rec, err := w.batch(cols, lo, hi)
		if err != nil {
			return err
		}
		err = w.fw.Write(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("schema: %s: %w", w.path, err)
		}
		w.rows += int64(hi - lo)
	}
	return nil
}

// close finishes the file.
func (w *writer) close() error {
	err := w.fw.Close()
	if err == nil {
		err = w.buf.Flush()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("schema: %s: %w", w.path, err)
	}
	return nil
}

func (w *writer) batch(cols []any, lo, hi int) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, w.schema)
	defer b.Release()
	for i, c := range cols {
		fb := b.Field(i)
		var ok bool
		switch v := c.(type) {
		case []string:
			ok = appendFlat[*array.StringBuilder](fb, v[lo:hi])
		case []bool:
			ok = appendFlat[*array.BooleanBuilder](fb, v[lo:hi])
		case []int8:
			ok = appendFlat[*array.Int8Builder](fb, v[lo:hi])
		case []int32:
			ok = appendFlat[*array.Int32Builder](fb, v[lo:hi])
		case []int64:
			ok = appendFlat[*array.Int64Builder](fb, v[lo:hi])
		case []float32:
			ok = appendFlat[*array.Float32Builder](fb, v[lo:hi])
		case []float64:
			ok = appendFlat[*array.Float64Builder](fb, v[lo:hi])
		case [][]int32:
			ok = appendList[*array.Int32Builder](fb, v[lo:hi])
		case [][]int64:
			ok = appendList[*array.Int64Builder](fb, v[lo:hi])
		case [][]float32:
			ok = appendList[*array.Float32Builder](fb, v[lo:hi])
		case [][]float64:
			ok = appendList[*array.Float64Builder](fb, v[lo:hi])
		case [][]string:
			ok = appendList[*array.StringBuilder](fb, v[lo:hi])
		case [][][]string:
			ok = appendNested(fb, v[lo:hi])
		}
		if !ok {
			return nil, fmt.Errorf("schema: %s column %s: %T does not match %s", w.path, w.schema.Field(i).Name, c, w.schema.Field(i).Type)
		}
	}
	return b.NewRecordBatch(), nil
}

// valuesBuilder is an arrow builder of one Go element type.
type valuesBuilder[T any] interface {
	array.Builder
	AppendValues(v []T, valid []bool)
}

// appendFlat appends v if fb builds T values; it reports whether it did.
func appendFlat[B valuesBuilder[T], T any](fb array.Builder, v []T) bool {
	bb, ok := fb.(B)
	if ok {
		bb.AppendValues(v, nil)
	}
	return ok
}

// appendList appends one list per row if fb builds lists of T.
func appendList[B valuesBuilder[T], T any](fb array.Builder, rows [][]T) bool {
	lb, ok := fb.(*array.ListBuilder)
	if !ok {
		return false
	}
	vb, ok := lb.ValueBuilder().(B)
	if !ok {
		return false
	}
	for _, row := range rows {
		lb.Append(true)
		vb.AppendValues(row, nil)
	}
	return true
}

// appendNested appends one list of lists of strings per row.
func appendNested(fb array.Builder, rows [][][]string) bool {
	lb, ok := fb.(*array.ListBuilder)
	if !ok {
		return false
	}
	ib, ok := lb.ValueBuilder().(*array.ListBuilder)
	if !ok {
		return false
	}
	sb, ok := ib.ValueBuilder().(*array.StringBuilder)
	if !ok {
		return false
	}
	for _, row := range rows {
		lb.Append(true)
		for _, l := range row {
			ib.Append(true)
			sb.AppendValues(l, nil)
		}
	}
	return true
}

// ErrNoColumn is returned when a table lacks a requested column.
var ErrNoColumn = errors.New("schema: no such column")

// ReadTable reads a whole Parquet file into memory; it stops with ctx's
// error once ctx is done.
func ReadTable(ctx context.Context, path string) (arrow.Table, error) {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", path, err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: RowGroupRows}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", path, err)
	}
	tbl, err := fr.ReadTable(ctx)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", path, err)
	}
	return tbl, nil
}

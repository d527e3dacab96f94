package schema

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"

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

// Writer appends column batches to one Parquet file.
type Writer struct {
	path   string
	schema *arrow.Schema
	f      *os.File
	buf    *bufio.Writer
	fw     *pqarrow.FileWriter
	rows   int64
}

// Create starts a Parquet file of schema s at path, replacing any file there.
func Create(path string, s *arrow.Schema) (*Writer, error) {
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
	return &Writer{path: path, schema: s, f: f, buf: buf, fw: fw}, nil
}

// Append writes rows given as one Go slice per schema field, in field order.
// Supported slice types: []string, []bool, []int8, []int32, []int64,
// []float32, []float64, [][]int32, [][]int64, [][]float32, [][]float64. All slices must
// have the same length. Rows are cut into row groups of RowGroupRows.
func (w *Writer) Append(cols ...any) error {
	if len(cols) != w.schema.NumFields() {
		return fmt.Errorf("schema: %s: %d columns given, schema has %d", w.path, len(cols), w.schema.NumFields())
	}
	n := -1
	for i, c := range cols {
		l, err := colLen(c)
		if err != nil {
			return fmt.Errorf("schema: %s column %s: %w", w.path, w.schema.Field(i).Name, err)
		}
		if n >= 0 && l != n {
			return fmt.Errorf("schema: %s column %s: %d rows, want %d", w.path, w.schema.Field(i).Name, l, n)
		}
		n = l
	}
	for lo := 0; lo < n; lo += RowGroupRows {
		hi := min(lo+RowGroupRows, n)
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

// Rows is the number of rows appended so far.
func (w *Writer) Rows() int64 { return w.rows }

// Close finishes the file. A file with no rows is still a valid table.
func (w *Writer) Close() error {
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

// Write writes a whole table in one call; see Append for the columns.
func Write(path string, s *arrow.Schema, cols ...any) (int64, error) {
	w, err := Create(path, s)
	if err != nil {
		return 0, err
	}
	if err := w.Append(cols...); err != nil {
		w.fw.Close()
		w.f.Close()
		return 0, err
	}
	return w.rows, w.Close()
}

func colLen(c any) (int, error) {
	switch c.(type) {
	case []string, []bool, []int8, []int32, []int64, []float32, []float64,
		[][]int32, [][]int64, [][]float32, [][]float64:
		return reflect.ValueOf(c).Len(), nil
	}
	return 0, fmt.Errorf("unsupported column type %T", c)
}

func (w *Writer) batch(cols []any, lo, hi int) (arrow.RecordBatch, error) {
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

// ErrNoColumn is returned when a table lacks a requested column.
var ErrNoColumn = errors.New("schema: no such column")

// ReadTable reads a whole Parquet file into memory.
func ReadTable(path string) (arrow.Table, error) {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", path, err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: RowGroupRows}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", path, err)
	}
	return tbl, nil
}

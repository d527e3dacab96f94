package schema

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"

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
// []float32, []float64, [][]int32, [][]float32, [][]float64. All slices must
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
	switch v := c.(type) {
	case []string:
		return len(v), nil
	case []bool:
		return len(v), nil
	case []int8:
		return len(v), nil
	case []int32:
		return len(v), nil
	case []int64:
		return len(v), nil
	case []float32:
		return len(v), nil
	case []float64:
		return len(v), nil
	case [][]int32:
		return len(v), nil
	case [][]float32:
		return len(v), nil
	case [][]float64:
		return len(v), nil
	}
	return 0, fmt.Errorf("unsupported column type %T", c)
}

func (w *Writer) batch(cols []any, lo, hi int) (arrow.RecordBatch, error) {
	mem := memory.DefaultAllocator
	b := array.NewRecordBuilder(mem, w.schema)
	defer b.Release()
	for i, c := range cols {
		fb := b.Field(i)
		ok := true
		switch v := c.(type) {
		case []string:
			bb, k := fb.(*array.StringBuilder)
			ok = k && appendStrings(bb, v[lo:hi])
		case []bool:
			bb, k := fb.(*array.BooleanBuilder)
			if ok = k; ok {
				bb.AppendValues(v[lo:hi], nil)
			}
		case []int8:
			bb, k := fb.(*array.Int8Builder)
			if ok = k; ok {
				bb.AppendValues(v[lo:hi], nil)
			}
		case []int32:
			bb, k := fb.(*array.Int32Builder)
			if ok = k; ok {
				bb.AppendValues(v[lo:hi], nil)
			}
		case []int64:
			bb, k := fb.(*array.Int64Builder)
			if ok = k; ok {
				bb.AppendValues(v[lo:hi], nil)
			}
		case []float32:
			bb, k := fb.(*array.Float32Builder)
			if ok = k; ok {
				bb.AppendValues(v[lo:hi], nil)
			}
		case []float64:
			bb, k := fb.(*array.Float64Builder)
			if ok = k; ok {
				bb.AppendValues(v[lo:hi], nil)
			}
		case [][]int32:
			lb, k := fb.(*array.ListBuilder)
			if ok = k; ok {
				vb, k2 := lb.ValueBuilder().(*array.Int32Builder)
				if ok = k2; ok {
					for _, row := range v[lo:hi] {
						lb.Append(true)
						vb.AppendValues(row, nil)
					}
				}
			}
		case [][]float32:
			lb, k := fb.(*array.ListBuilder)
			if ok = k; ok {
				vb, k2 := lb.ValueBuilder().(*array.Float32Builder)
				if ok = k2; ok {
					for _, row := range v[lo:hi] {
						lb.Append(true)
						vb.AppendValues(row, nil)
					}
				}
			}
		case [][]float64:
			lb, k := fb.(*array.ListBuilder)
			if ok = k; ok {
				vb, k2 := lb.ValueBuilder().(*array.Float64Builder)
				if ok = k2; ok {
					for _, row := range v[lo:hi] {
						lb.Append(true)
						vb.AppendValues(row, nil)
					}
				}
			}
		default:
			ok = false
		}
		if !ok {
			return nil, fmt.Errorf("schema: %s column %s: %T does not match %s", w.path, w.schema.Field(i).Name, c, w.schema.Field(i).Type)
		}
	}
	return b.NewRecordBatch(), nil
}

func appendStrings(b *array.StringBuilder, v []string) bool {
	b.AppendValues(v, nil)
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

package schema

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"

	"monomer/internal/par"
)

// RowGroupRows is the fixed row-group length: rows are cut into groups by
// count, never by bytes buffered, so the layout depends only on the rows.
const RowGroupRows = 1 << 20

// compressionLevel pins zstd's level (the library default could change).
const compressionLevel = 3

// dictLimit is the size at which a dictionary column's dictionary stops
// growing and the rest of its row group is written plain. arrow-go lists
// the page encodings of such a column in Go map order
// (parquet/metadata/column_chunk.go, Finish), so the footer's bytes could
// differ between two runs of the same rows; with a limit this high (the
// library's default is 1 MiB) a column falls back only past a gigabyte of
// distinct strings in one row group.
const dictLimit = 1 << 30

func writerProps(s *arrow.Schema) *parquet.WriterProperties {
	opts := []parquet.WriterProperty{
		parquet.WithCreatedBy(CreatedBy),
		parquet.WithVersion(parquet.V2_LATEST),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(compressionLevel),
		parquet.WithMaxRowGroupLength(RowGroupRows),
		parquet.WithDictionaryDefault(false),
		parquet.WithDictionaryPageSizeLimit(dictLimit),
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
// lets older files lack; "name,fixed" marks a [][]float32 or [][]float64
// column whose rows all have one length, see fixedOpt) and typed by its slice type: []string, []bool, []int8, []int32, []int64, []float32,
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
		if !ok || name == "" || !sf.IsExported() || (opt != "" && opt != "dict" && opt != "optional" && opt != fixedOpt) {
			return nil, nil, fmt.Errorf("schema: %s.%s: want an exported field tagged col:\"name\", col:\"name,dict\", col:\"name,optional\" or col:\"name,fixed\"", t, sf.Name)
		}
		dt, ok := colTypes[sf.Type]
		if !ok || (opt == "dict" && sf.Type != reflect.TypeFor[[]string]()) || (opt == fixedOpt && !fixedTypes[sf.Type]) {
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
// into row groups of RowGroupRows, or of the table type's own length
// where it has one (groupRows). A table with no rows is still valid.
func Write[T any](path string, cols T) (int64, error) {
	group := RowGroupRows
	if g, ok := any(cols).(groupRows); ok {
		group = g.groupRows()
	}
	return write(path, cols, group)
}

// groupRows is a table whose row groups are shorter than RowGroupRows:
// its lists are read a row group and column per core (lists.go), so a
// table read by every training and scoring node needs more groups than
// its list columns to keep more than a few cores busy.
type groupRows interface{ groupRows() int }

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
	if s, err = fixedLengths(reflect.TypeFor[T](), idx, s, cs); err != nil {
		return 0, fmt.Errorf("schema: %s: %w", path, err)
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

// writer appends row groups to one Parquet file. Each row group is
// buffered and its columns encoded and compressed side by side, one task a
// column (encode.go); the group is then written in column order, so the
// bytes are those of encoding the columns one after another.
type writer struct {
	path   string
	schema *arrow.Schema
	f      *os.File
	buf    *bufio.Writer
	fw     *file.Writer
	props  pqarrow.ArrowWriterProperties
	rows   int64
}

// create starts a Parquet file of schema s at path, replacing any file there.
func create(path string, s *arrow.Schema) (*writer, error) {
	props := writerProps(s)
	aprops := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	root, meta, err := pqarrowLayout(s, props, aprops)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	buf := bufio.NewWriterSize(f, 1<<20)
	fw, err := file.NewParquetWriterWithError(buf, root, file.WithWriterProps(props), file.WithWriteMetadata(meta))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("schema: %s: %w", path, err)
	}
	return &writer{path: path, schema: s, f: f, buf: buf, fw: fw, props: aprops}, nil
}

// pqarrowLayout is the Parquet schema and the key-value metadata that
// pqarrow's own file writer makes for s. The metadata holds the Arrow
// schema, serialised as pqarrow does (its list elements renamed to
// Parquet's), so readers rebuild the same Arrow types. Both are taken from
// a pqarrow writer that writes nothing rather than rebuilt here, so they
// follow pqarrow's.
func pqarrowLayout(s *arrow.Schema, props *parquet.WriterProperties, aprops pqarrow.ArrowWriterProperties) (*pqschema.GroupNode, metadata.KeyValueMetadata, error) {
	pw, err := pqarrow.NewFileWriter(s, io.Discard, props, aprops)
	if err != nil {
		return nil, nil, err
	}
	md, err := pw.FileMetadata()
	if err != nil {
		return nil, nil, err
	}
	return md.Schema.Root(), md.KeyValueMetadata(), nil
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
		if err := w.rowGroup(cols, lo, hi); err != nil {
			return err
		}
		w.rows += int64(hi - lo)
	}
	return nil
}

// rowGroup writes rows [lo, hi) as one row group, its columns encoded on
// all cores; the first failing column, in schema order, names the error.
func (w *writer) rowGroup(cols []any, lo, hi int) error {
	rgw, err := w.fw.AppendBufferedRowGroupChecked()
	if err != nil {
		return fmt.Errorf("schema: %s: %w", w.path, err)
	}
	errs := make([]error, len(cols))
	par.For(len(cols), 0, func(_, i int) {
		errs[i] = w.column(rgw, i, cols[i], lo, hi)
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if err := rgw.Close(); err != nil {
		return fmt.Errorf("schema: %s: %w", w.path, err)
	}
	return nil
}

// column encodes rows [lo, hi) of column i, the Go slice c, into the
// buffered row group's writer of that column. Each call has a write
// context of its own: pqarrow's keeps scratch buffers that columns
// encoded at once must not share.
func (w *writer) column(rgw file.BufferedRowGroupWriter, i int, c any, lo, hi int) error {
	f := w.schema.Field(i)
	l, ok := leafOf(c, f.Type, lo, hi)
	if !ok {
		return fmt.Errorf("schema: %s column %s: %T does not match %s", w.path, f.Name, c, f.Type)
	}
	defer l.values.Release()
	cw, err := rgw.Column(i)
	if err == nil {
		ctx := pqarrow.NewArrowWriteContext(context.Background(), &w.props)
		err = pqarrow.WriteArrowToColumn(ctx, cw, l.values, l.def, l.rep, l.nullable)
	}
	if err != nil {
		return fmt.Errorf("schema: %s column %s: %w", w.path, f.Name, err)
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

// ErrNoColumn is returned when a table lacks a requested column.
var ErrNoColumn = errors.New("schema: no such column")

// openParquet is openFooter with every page header checked (checkPages).
func openParquet(path string) (*file.Reader, error) {
	return openPages(path, func(*file.Reader) []int { return nil })
}

// openFooter is file.OpenParquetFile returning, as an error, the panic
// arrow-go raises on some corrupt footers (an unknown logical type), so a
// damaged file fails with its name rather than a stack trace. It also
// refuses a stored Arrow schema that would make pqarrow allocate without
// bound (checkStoredSchema): that ends the process, not in a panic. It
// reads no page: for a table's row count.
func openFooter(path string) (*file.Reader, error) { return openPages(path, nil) }

// openPages is openFooter checking the pages of the row groups groups
// gives (all when it gives nil; none when groups is nil). Its errors but
// the system's (opening or reading the file) wrap ErrDamaged.
func openPages(path string, groups func(*file.Reader) []int) (rdr *file.Reader, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			rdr, err = nil, fmt.Errorf("%w: corrupt footer: %v", ErrDamaged, p)
		}
		if err != nil {
			f.Close()
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := checkMagic(f, fi.Size()); err != nil {
		return nil, err
	}
	rdr, err = file.NewParquetReader(f)
	if err != nil {
		return nil, damage(err)
	}
	if err := checkStoredSchema(rdr.MetaData().KeyValueMetadata()); err != nil {
		return nil, fmt.Errorf("%w: corrupt footer: %w", ErrDamaged, err)
	}
	if groups == nil {
		return rdr, nil
	}
	if err := checkPages(f, fi.Size(), rdr.MetaData(), groups(rdr)); err != nil {
		return nil, err
	}
	return rdr, nil
}

// checkMagic refuses a file that does not begin and end with Parquet's
// magic, where arrow-go would speak of its footer ("file is smaller than
// indicated metadata size" of a CSV file).
func checkMagic(f io.ReaderAt, size int64) error {
	const magic = "PAR1"
	var head, tail [4]byte
	if size >= 12 {
		if _, err := f.ReadAt(head[:], 0); err != nil {
			return err
		}
		if _, err := f.ReadAt(tail[:], size-4); err != nil {
			return err
		}
	}
	switch {
	case size < 12:
		return fmt.Errorf("%w: not a Parquet file: %d bytes", ErrDamaged, size)
	case string(head[:]) != magic:
		return fmt.Errorf("%w: not a Parquet file: it begins with %q, not %q", ErrDamaged, head[:], magic)
	case string(tail[:]) != magic:
		return fmt.Errorf("%w: not a whole Parquet file: it begins with %q but does not end with it (truncated?)", ErrDamaged, magic)
	}
	return nil
}

// damage wraps err, an error of arrow-go's reading a file's bytes, with
// ErrDamaged, unless it is the system's (an I/O error), a cancellation or
// already so wrapped.
func damage(err error) error {
	var pe *fs.PathError
	if err == nil || errors.As(err, &pe) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrDamaged) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrDamaged, err)
}

// guard calls f, an arrow-go read, returning a panic it raises as an
// error wrapping ErrDamaged: its decoders index and dereference what a
// page's bytes say (a flipped byte of a page header made
// (*DataPageHeader).GetNumValues dereference nil), and the record reader
// panics when a damaged page gives a column fewer rows than the others.
// Only reads are guarded, never a caller's callback, so a bug of monomer's
// is not reported as a damaged file.
func guard[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			var zero T
			v, err = zero, fmt.Errorf("%w: the reader failed: %v", ErrDamaged, p)
		}
	}()
	v, err = f()
	if err == io.EOF {
		return v, err // a record reader's end
	}
	return v, damage(err)
}

// newFileReader is pqarrow.NewFileReader refusing a stored Arrow schema
// that disagrees with the file's columns, where pqarrow's readers would
// panic later (checkManifest), and returning its own panics as errors:
// checkStoredSchema bounds what can exhaust memory, not every scalar
// arrow-go reads, though no byte-flip sweep (notebook, width at 16 cores)
// has reached this recover since the walk checks timestamps' zones.
func newFileReader(rdr *file.Reader, props pqarrow.ArrowReadProperties) (fr *pqarrow.FileReader, err error) {
	defer func() {
		if p := recover(); p != nil {
			fr, err = nil, fmt.Errorf("%w: corrupt footer: stored Arrow schema: %v", ErrDamaged, p)
		}
	}()
	fr, err = pqarrow.NewFileReader(rdr, props, memory.DefaultAllocator)
	if err != nil {
		return nil, damage(err)
	}
	for i := range fr.Manifest.Fields {
		if err := checkManifest(&fr.Manifest.Fields[i]); err != nil {
			return nil, fmt.Errorf("%w: corrupt footer: stored Arrow schema: %w", ErrDamaged, err)
		}
	}
	var raw *pqarrow.SchemaManifest
	for i := range fr.Manifest.Fields {
		if readsAll(&fr.Manifest.Fields[i]) {
			continue
		}
		if raw == nil {
			// The fields of the Parquet columns alone, without the stored
			// Arrow schema: one per top-level column, in order.
			if raw, err = pqarrow.NewSchemaManifest(rdr.MetaData().Schema, nil, &props); err != nil {
				return nil, damage(err)
			}
		}
		fr.Manifest.Fields[i] = raw.Fields[i]
	}
	return fr, nil
}

// readsAll reports whether pqarrow reads every leaf of f (pqarrowReads).
func readsAll(f *pqarrow.SchemaField) bool {
	if f.IsLeaf() {
		return pqarrowReads(f.Field.Type)
	}
	for i := range f.Children {
		if !readsAll(&f.Children[i]) {
			return false
		}
	}
	return true
}

// pqarrowReads reports whether pqarrow's leaf reader reads a column of
// Arrow type t (transferColumnData in parquet/pqarrow/column_readers.go).
// It reads no duration (pyarrow writes one as an int64 column and stores
// its type in the Arrow schema), so newFileReader reads a column holding
// one as its Parquet types, and a table holding one is not refused.
func pqarrowReads(t arrow.DataType) bool {
	if e, ok := t.(arrow.ExtensionType); ok {
		t = e.StorageType()
	}
	switch t.ID() {
	case arrow.DICTIONARY, arrow.NULL, arrow.BOOL,
		arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP,
		arrow.FIXED_SIZE_BINARY, arrow.BINARY, arrow.STRING, arrow.LARGE_BINARY, arrow.LARGE_STRING,
		arrow.DECIMAL128, arrow.DECIMAL256:
		return true
	}
	return false
}

// checkManifest checks that a field pqarrow built from the stored schema
// and the Parquet one reads something: a leaf names a column, and a field
// with children has a nested type. A stored type changed from a list to a
// string gives the latter, and pqarrow's GetFieldReaders then dereferences
// the nil reader it returns for it.
func checkManifest(f *pqarrow.SchemaField) error {
	if len(f.Children) == 0 {
		if f.ColIndex < 0 {
			return fmt.Errorf("field %q reads no column", f.Field.Name)
		}
		return nil
	}
	if _, ok := f.Field.Type.(arrow.NestedType); !ok {
		return fmt.Errorf("field %q has %d child fields but type %s", f.Field.Name, len(f.Children), f.Field.Type)
	}
	for i := range f.Children {
		if err := checkManifest(&f.Children[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkRecord checks the arrays of a record arrow-go decoded: a damaged
// page can leave a list's offsets past its values, or a dictionary's
// indices past its entries, which reading a cell would index out of range.
// Strings are checked as the bytes they are (validStructure): invalid
// UTF-8 in a string cell is the readers' to replace or refuse, as the
// Amazon readers do with a Latin-1 byte, not damage to the file.
func checkRecord(rec arrow.RecordBatch) error {
	for c, a := range rec.Columns() {
		if err := validStructure(a); err != nil {
			return fmt.Errorf("%w: column %s: %v", ErrDamaged, rec.ColumnName(c), err)
		}
	}
	return nil
}

// validStructure is array.ValidateFull of a with every string type taken
// as its binary twin (the same buffers), so offsets, lengths and indices
// are checked in full but the bytes' encoding is not.
func validStructure(a arrow.Array) error {
	d, ok := a.Data().(*array.Data)
	if !ok {
		return array.ValidateFull(a)
	}
	b := asBinary(d)
	defer b.Release()
	arr := array.MakeFromData(b)
	defer arr.Release()
	return array.ValidateFull(arr)
}

// asBinary is d with its string types, at any depth, made binary. A map
// or union keeps its types (binaryType leaves them), so their strings are
// still checked as text.
func asBinary(d *array.Data) *array.Data {
	switch d.DataType().(type) {
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType,
		*arrow.ListType, *arrow.LargeListType, *arrow.FixedSizeListType, *arrow.StructType, *arrow.DictionaryType:
	default:
		d.Retain()
		return d
	}
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		children[i] = asBinary(c.(*array.Data))
	}
	defer func() {
		for _, c := range children {
			c.Release()
		}
	}()
	out := array.NewData(binaryType(d.DataType()), d.Len(), d.Buffers(), children, d.NullN(), d.Offset())
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
		dd := asBinary(dict)
		out.SetDictionary(dd)
		dd.Release()
	}
	return out
}

// binaryType is t with String, LargeString and StringView made Binary,
// LargeBinary and BinaryView, in lists, structs, maps and dictionaries too.
func binaryType(t arrow.DataType) arrow.DataType {
	switch t := t.(type) {
	case *arrow.StringType:
		return arrow.BinaryTypes.Binary
	case *arrow.LargeStringType:
		return arrow.BinaryTypes.LargeBinary
	case *arrow.StringViewType:
		return arrow.BinaryTypes.BinaryView
	case *arrow.ListType:
		return arrow.ListOfField(arrow.Field{Name: t.ElemField().Name, Type: binaryType(t.Elem()), Nullable: t.ElemField().Nullable})
	case *arrow.LargeListType:
		return arrow.LargeListOfField(arrow.Field{Name: t.ElemField().Name, Type: binaryType(t.Elem()), Nullable: t.ElemField().Nullable})
	case *arrow.FixedSizeListType:
		return arrow.FixedSizeListOfField(t.Len(), arrow.Field{Name: t.ElemField().Name, Type: binaryType(t.Elem()), Nullable: t.ElemField().Nullable})
	case *arrow.StructType:
		fs := make([]arrow.Field, t.NumFields())
		for i, f := range t.Fields() {
			f.Type = binaryType(f.Type)
			fs[i] = f
		}
		return arrow.StructOf(fs...)
	case *arrow.DictionaryType:
		return &arrow.DictionaryType{IndexType: t.IndexType, ValueType: binaryType(t.ValueType), Ordered: t.Ordered}
	}
	return t // a map's or union's strings stay checked as text
}

// checkTable is checkRecord for every chunk of a table.
func checkTable(tbl arrow.Table) error {
	for c := range int(tbl.NumCols()) {
		col := tbl.Column(c)
		for _, a := range col.Data().Chunks() {
			if err := validStructure(a); err != nil {
				return fmt.Errorf("%w: column %s: %v", ErrDamaged, col.Name(), err)
			}
		}
	}
	return nil
}

// readTable is a pqarrow read of a whole table, guarded and checked.
func readTable(read func() (arrow.Table, error)) (arrow.Table, error) {
	tbl, err := guard(read)
	if err == io.EOF { // a column's pages ended before its values
		err = fmt.Errorf("%w: %w", ErrDamaged, io.ErrUnexpectedEOF)
	}
	if err != nil {
		return nil, err
	}
	if _, err := guard(func() (int, error) { return 0, checkTable(tbl) }); err != nil {
		tbl.Release()
		return nil, err
	}
	return tbl, nil
}

// readRecord is a record reader's Read, guarded and checked. The record
// is the reader's (released by its next Read).
func readRecord(rr pqarrow.RecordReader) (arrow.RecordBatch, error) {
	rec, err := guard(rr.Read)
	if err != nil || rec == nil {
		return rec, err
	}
	if _, err := guard(func() (int, error) { return 0, checkRecord(rec) }); err != nil {
		return nil, err
	}
	return rec, nil
}

// ReadTable reads a whole Parquet file into memory; it stops with ctx's
// error once ctx is done.
func ReadTable(ctx context.Context, path string) (arrow.Table, error) {
	rdr, err := openParquet(path)
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", path, err)
	}
	defer rdr.Close()
	fr, err := newFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: RowGroupRows})
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", path, err)
	}
	tbl, err := readTable(func() (arrow.Table, error) { return fr.ReadTable(ctx) })
	if err != nil {
		return nil, fmt.Errorf("schema: %s: %w", path, err)
	}
	return tbl, nil
}

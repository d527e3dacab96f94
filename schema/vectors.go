package schema

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// EmbeddingsCols is the embeddings file a user brings (a job's
// data.embeddings), in the form monomer writes it (monomer gen --format
// 2023): one row per item, its parent_asin and its vector. ReadVectors
// reads this and the other layouts it accepts.
type EmbeddingsCols struct {
	_          keyed
	ParentASIN []string    `col:"parent_asin"`
	Embedding  [][]float32 `col:"embedding"`
}

// IDColumns are the names ReadVectors accepts for the item id column.
var IDColumns = []string{"asin", "parent_asin"}

// CatalogueIDColumn is the id column of a catalogue's tables, which
// ReadVectors takes when the table has none of IDColumns (so that a table
// that had both kept reading as it did).
const CatalogueIDColumn = "id"

// ErrVectors marks a vector table ReadVectors cannot read: no id column,
// no single vector column, a column of another type.
var ErrVectors = errors.New("not a vector table")

// VectorInfo says which columns of a vector table ReadVectors read.
type VectorInfo struct {
	IDColumn, VectorColumn string
	// Type is the vector column's Arrow type, e.g. fixed_size_list<item:
	// float>[64].
	Type string
	Rows int64
}

// VectorBatch is a run of consecutive rows of a vector table. Its slices
// are views into the reader's buffers, valid only during the callback.
type VectorBatch struct {
	// Row is the file row of the batch's first row, counted from 0.
	Row int64
	// IDs are the rows' ids; a null id is "" with IDNull set.
	IDs    []string
	IDNull []bool
	// Row i's vector is F32[Off[i]:Off[i+1]] (or F64's, for a float64
	// column); Null[i] marks a null vector, ValueNull[i] a vector holding
	// a null value (ValueNull is nil when no value is null).
	Off       []int
	Null      []bool
	ValueNull []bool
	F32       []float32
	F64       []float64
}

// vectorBatchRows is how many rows ReadVectors hands over at a time: a
// few MiB of values at the dimensions of common embeddings, whatever the
// file's row groups.
const vectorBatchRows = 4096

// ReadVectors streams a Parquet table of item vectors: an id column (one
// of IDColumns, string or large_string; a file with both is refused, since
// which one keys the items is the user's to say; else CatalogueIDColumn) and one vector column,
// the only column of type list, large_list or fixed_size_list of float32
// or float64. Other columns are ignored. It calls each with consecutive
// batches of rows in file order and stops at the first error each
// returns. A table it cannot read wraps ErrVectors; its error names the
// file's base name.
func ReadVectors(ctx context.Context, path string, each func(*VectorBatch) error) (VectorInfo, error) {
	var info VectorInfo
	name := filepath.Base(path)
	rdr, err := openParquet(path)
	if err != nil {
		return info, fmt.Errorf("schema: %s: %w: %w", name, ErrVectors, err)
	}
	defer rdr.Close()
	fr, err := newFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: vectorBatchRows})
	if err != nil {
		return info, fmt.Errorf("schema: %s: %w: %w", name, ErrVectors, err)
	}
	sc, err := fr.Schema()
	if err != nil {
		return info, fmt.Errorf("schema: %s: %w: %w", name, ErrVectors, err)
	}
	idField, vecField := -1, -1
	for i, f := range sc.Fields() {
		for _, c := range IDColumns {
			if f.Name != c {
				continue
			}
			if idField >= 0 {
				return info, fmt.Errorf("schema: %s: %w: both %s and %s columns; keep the one that names the items", name, ErrVectors, sc.Field(idField).Name, f.Name)
			}
			if id := f.Type.ID(); id != arrow.STRING && id != arrow.LARGE_STRING && id != arrow.STRING_VIEW {
				return info, fmt.Errorf("schema: %s: %w: column %s is %s, want string", name, ErrVectors, f.Name, f.Type)
			}
			idField = i
		}
		if _, ok := vectorElem(f.Type); ok {
			if vecField >= 0 {
				return info, fmt.Errorf("schema: %s: %w: two vector columns, %s and %s; keep one", name, ErrVectors, sc.Field(vecField).Name, f.Name)
			}
			vecField = i
		}
	}
	if ix := sc.FieldIndices(CatalogueIDColumn); idField < 0 && len(ix) == 1 {
		if id := sc.Field(ix[0]).Type.ID(); id != arrow.STRING && id != arrow.LARGE_STRING && id != arrow.STRING_VIEW {
			return info, fmt.Errorf("schema: %s: %w: column %s is %s, want string", name, ErrVectors, CatalogueIDColumn, sc.Field(ix[0]).Type)
		}
		idField = ix[0]
	}
	if idField < 0 {
		return info, fmt.Errorf("schema: %s: %w: no id column (asin, parent_asin or id) among %v", name, ErrVectors, fieldNames(sc))
	}
	if vecField < 0 {
		return info, fmt.Errorf("schema: %s: %w: no vector column (a list or fixed-size list of float32 or float64) among %v", name, ErrVectors, fieldNames(sc))
	}
	info = VectorInfo{IDColumn: sc.Field(idField).Name, VectorColumn: sc.Field(vecField).Name,
		Type: sc.Field(vecField).Type.String(), Rows: rdr.NumRows()}
	if info.Rows == 0 {
		return info, nil
	}
	var leaves []int
	for _, f := range []int{idField, vecField} {
		leaves = append(leaves, leafColumns(&fr.Manifest.Fields[f])...)
	}
	rr, err := guard(func() (pqarrow.RecordReader, error) { return fr.GetRecordReader(ctx, leaves, nil) })
	if err != nil {
		return info, readError(ctx, name, 0, ErrVectors, err)
	}
	defer rr.Release()
	// The reader's schema holds the two columns in file order.
	ic, vc := 0, 1
	if vecField < idField {
		ic, vc = 1, 0
	}
	var b VectorBatch
	for {
		if err := ctx.Err(); err != nil {
			return info, err
		}
		rec, err := readRecord(rr)
		if err == io.EOF || rec == nil && err == nil {
			break
		}
		if err != nil {
			return info, readError(ctx, name, b.Row, ErrVectors, err)
		}
		if err := b.fill(rec.Column(ic), rec.Column(vc)); err != nil {
			return info, fmt.Errorf("schema: %s near row %d: %w", name, b.Row, err)
		}
		if err := each(&b); err != nil {
			return info, err
		}
		b.Row += rec.NumRows()
	}
	return info, nil
}

// readError is the error of a failed read near row: the file's own bytes
// (a corrupt page, a bad encoding) wrap the reader's sentinel (ErrVectors,
// ErrCells) and ErrDamaged, since the same file fails the same way again;
// the system's (an I/O error) and a cancellation do not.
func readError(ctx context.Context, name string, row int64, sentinel, err error) error {
	var pe *fs.PathError
	if ctx.Err() != nil || errors.As(err, &pe) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("schema: %s near row %d: %w", name, row, err)
	}
	if errors.Is(err, ErrDamaged) {
		return fmt.Errorf("schema: %s near row %d: %w: %w", name, row, sentinel, err)
	}
	return fmt.Errorf("schema: %s near row %d: %w: %w: %w", name, row, sentinel, ErrDamaged, err)
}

// vectorElem returns the element type of a vector column type, if t is one.
func vectorElem(t arrow.DataType) (arrow.Type, bool) {
	var elem arrow.DataType
	switch lt := t.(type) {
	case *arrow.ListType:
		elem = lt.Elem()
	case *arrow.LargeListType:
		elem = lt.Elem()
	case *arrow.FixedSizeListType:
		elem = lt.Elem()
	default:
		return 0, false
	}
	id := elem.ID()
	return id, id == arrow.FLOAT32 || id == arrow.FLOAT64
}

func fieldNames(sc *arrow.Schema) []string {
	var out []string
	for _, f := range sc.Fields() {
		out = append(out, f.Name)
	}
	return out
}

// leafColumns are the Parquet leaf columns under a schema field.
func leafColumns(f *pqarrow.SchemaField) []int {
	if len(f.Children) == 0 {
		return []int{f.ColIndex}
	}
	var out []int
	for i := range f.Children {
		out = append(out, leafColumns(&f.Children[i])...)
	}
	return out
}

// fill sets b's rows from one record batch's id and vector columns.
func (b *VectorBatch) fill(idCol, vecCol arrow.Array) error {
	// string, large_string (polars writes it) or string_view.
	ids, ok := idCol.(interface {
		arrow.Array
		Value(int) string
	})
	if !ok {
		return fmt.Errorf("id column is %s", idCol.DataType())
	}
	n := ids.Len()
	b.IDs, b.IDNull = b.IDs[:0], b.IDNull[:0]
	for i := range n {
		// Value aliases the reader's buffer, which a later batch may
		// reuse; callers keep ids.
		b.IDs = append(b.IDs, strings.Clone(ids.Value(i)))
		b.IDNull = append(b.IDNull, ids.IsNull(i))
	}
	b.Off, b.Null, b.ValueNull = b.Off[:0], b.Null[:0], nil
	var vals arrow.Array
	switch l := vecCol.(type) {
	case *array.List, *array.LargeList: // 32- and 64-bit offsets, read alike
		vl := l.(interface {
			ListValues() arrow.Array
			ValueOffsets(int) (int64, int64)
		})
		vals = vl.ListValues()
		for i := range n {
			lo, _ := vl.ValueOffsets(i)
			b.Off = append(b.Off, int(lo))
		}
		_, hi := vl.ValueOffsets(n - 1)
		b.Off = append(b.Off, int(hi))
	case *array.FixedSizeList:
		vals = l.ListValues()
		d := int(l.DataType().(*arrow.FixedSizeListType).Len())
		for i := range n + 1 {
			b.Off = append(b.Off, (l.Offset()+i)*d)
		}
	default:
		return fmt.Errorf("vector column is %s", vecCol.DataType())
	}
	for i := range n {
		b.Null = append(b.Null, vecCol.IsNull(i))
	}
	if vals.NullN() > 0 {
		b.ValueNull = make([]bool, n)
		for i := range n {
			for j := b.Off[i]; j < b.Off[i+1] && !b.Null[i]; j++ {
				if vals.IsNull(j) {
					b.ValueNull[i] = true
					break
				}
			}
		}
	}
	b.F32, b.F64 = nil, nil
	switch v := vals.(type) {
	case *array.Float32:
		b.F32 = v.Float32Values()
	case *array.Float64:
		b.F64 = v.Float64Values()
	default:
		return fmt.Errorf("vector values are %s", vals.DataType())
	}
	return nil
}

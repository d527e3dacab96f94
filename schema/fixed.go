package schema

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// fixedOpt is the col tag option of a list column whose rows all have one
// length d, known when the table is written (a model's vector dimension):
// the file declares it fixed_size_list<T>[d] in its Arrow schema, which
// pyarrow, DuckDB (T[d]) and vector indexes read as fixed-width vectors.
// Parquet has no fixed-size list: the column's pages are those of a list
// (pqarrow stores both alike), so the declared schema (Of) keeps list<T>
// and ReadAll reads either.
const fixedOpt = "fixed"

// fixedTypes are the slice types a fixed column may have.
var fixedTypes = map[reflect.Type]bool{
	reflect.TypeFor[[][]float32](): true,
	reflect.TypeFor[[][]float64](): true,
}

// isFixed reports whether struct field sf is tagged fixed.
func isFixed(sf reflect.StructField) bool {
	_, opt, _ := strings.Cut(sf.Tag.Get("col"), ",")
	return opt == fixedOpt
}

// fixedLengths returns s with each fixed column (struct field idx[k] of t,
// values cols[k]) typed fixed_size_list<T>[d], d the length of its rows; a
// row of another length is an error naming the column and row. A table
// with no rows keeps list<T>: Arrow has no fixed_size_list of length 0
// (arrow.FixedSizeListOfField panics), and no row tells d.
func fixedLengths(t reflect.Type, idx []int, s *arrow.Schema, cols []any) (*arrow.Schema, error) {
	fields := s.Fields()
	changed := false
	for k, i := range idx {
		if !isFixed(t.Field(i)) {
			continue
		}
		rows := reflect.ValueOf(cols[k])
		if rows.Len() == 0 {
			continue
		}
		d := rows.Index(0).Len()
		for r := range rows.Len() {
			if n := rows.Index(r).Len(); n != d {
				return nil, fmt.Errorf("column %s row %d: %d values, row 0 has %d (a fixed-size list)", fields[k].Name, r, n, d)
			}
		}
		l := fields[k].Type.(*arrow.ListType)
		fields[k].Type = arrow.FixedSizeListOfField(int32(d), l.ElemField())
		changed = true
	}
	if !changed {
		return s, nil
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md), nil
}

// sameType reports whether a file's column type got is the declared type
// want of struct field sf: a fixed column may be a fixed-size list of
// want's elements, of any length.
func sameType(sf reflect.StructField, got, want arrow.DataType) bool {
	if arrow.TypeEqual(got, want) {
		return true
	}
	f, ok := got.(*arrow.FixedSizeListType)
	l, ok2 := want.(*arrow.ListType)
	return ok && ok2 && isFixed(sf) && arrow.TypeEqual(f.Elem(), l.Elem())
}

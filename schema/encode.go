package schema

import (
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// leaf is a column's rows as Parquet stores them: the primitive values
// and, for a list column, each value's definition and repetition level.
// A flat column is required and has no levels.
type leaf struct {
	values   arrow.Array
	def, rep []int16
	nullable bool // the values' Arrow field is nullable, as a list's elements are
}

// The levels of a column of lists. layout makes a list column required and
// arrow.ListOf makes its elements nullable, so pqarrow writes Parquet's
// three-level list: required group (LIST) > repeated group list > optional
// element (parquet-format's LogicalTypes.md, "Lists"). An element
// counts the repeated and the optional level, an empty list neither; a
// list of lists counts both of each list. Repetition level 0 starts a row,
// 1 a next element of the outer list, 2 of the inner one.
const (
	defEmpty      = 0 // a row whose list is empty
	defValue      = 2 // an element of a list
	defInnerEmpty = 2 // an empty inner list of a list of lists
	defInnerValue = 4 // an element of an inner list
)

// leafOf builds rows [lo, hi) of column c, a Go slice, as the leaf of an
// Arrow column of type dt; false if c's type is not dt's (see colTypes).
func leafOf(c any, dt arrow.DataType, lo, hi int) (leaf, bool) {
	// A fixed-size list is stored as a list whose rows have one length
	// (fixedOpt): the same leaf.
	if f, ok := dt.(*arrow.FixedSizeListType); ok {
		dt = arrow.ListOf(f.Elem())
	}
	if want, ok := colTypes[reflect.TypeOf(c)]; !ok || !arrow.TypeEqual(want, dt) {
		return leaf{}, false
	}
	mem := memory.DefaultAllocator
	switch v := c.(type) {
	case []string:
		return flatLeaf(array.NewStringBuilder(mem), v[lo:hi]), true
	case []bool:
		return flatLeaf(array.NewBooleanBuilder(mem), v[lo:hi]), true
	case []int8:
		return flatLeaf(array.NewInt8Builder(mem), v[lo:hi]), true
	case []int32:
		return flatLeaf(array.NewInt32Builder(mem), v[lo:hi]), true
	case []int64:
		return flatLeaf(array.NewInt64Builder(mem), v[lo:hi]), true
	case []float32:
		return flatLeaf(array.NewFloat32Builder(mem), v[lo:hi]), true
	case []float64:
		return flatLeaf(array.NewFloat64Builder(mem), v[lo:hi]), true
	case [][]int32:
		return listLeaf(array.NewInt32Builder(mem), v[lo:hi]), true
	case [][]int64:
		return listLeaf(array.NewInt64Builder(mem), v[lo:hi]), true
	case [][]float32:
		return listLeaf(array.NewFloat32Builder(mem), v[lo:hi]), true
	case [][]float64:
		return listLeaf(array.NewFloat64Builder(mem), v[lo:hi]), true
	case [][]string:
		return listLeaf(array.NewStringBuilder(mem), v[lo:hi]), true
	case [][][]string:
		return nestedLeaf(array.NewStringBuilder(mem), v[lo:hi]), true
	}
	return leaf{}, false
}

// valuesBuilder is an arrow builder of one Go element type.
type valuesBuilder[T any] interface {
	array.Builder
	AppendValues(v []T, valid []bool)
}

// flatLeaf is a required column of v.
func flatLeaf[T any](b valuesBuilder[T], v []T) leaf {
	defer b.Release()
	b.AppendValues(v, nil)
	return leaf{values: b.NewArray()}
}

// listLeaf is a column of lists: every row's elements in turn, with their
// levels.
func listLeaf[T any](b valuesBuilder[T], rows [][]T) leaf {
	defer b.Release()
	n := 0
	for _, r := range rows {
		n += max(len(r), 1)
	}
	def, rep := make([]int16, 0, n), make([]int16, 0, n)
	for _, r := range rows {
		b.AppendValues(r, nil)
		if len(r) == 0 {
			def, rep = append(def, defEmpty), append(rep, 0)
			continue
		}
		for j := range r {
			def, rep = append(def, defValue), append(rep, min(int16(j), 1))
		}
	}
	return leaf{values: b.NewArray(), def: def, rep: rep, nullable: true}
}

// nestedLeaf is a column of lists of lists of strings.
func nestedLeaf(b *array.StringBuilder, rows [][][]string) leaf {
	defer b.Release()
	var def, rep []int16
	for _, row := range rows {
		if len(row) == 0 {
			def, rep = append(def, defEmpty), append(rep, 0)
			continue
		}
		for j, l := range row {
			start := min(int16(j), 1) // 0 starts the row, 1 the next inner list
			b.AppendValues(l, nil)
			if len(l) == 0 {
				def, rep = append(def, defInnerEmpty), append(rep, start)
				continue
			}
			for k := range l {
				r := start
				if k > 0 {
					r = 2
				}
				def, rep = append(def, defInnerValue), append(rep, r)
			}
		}
	}
	return leaf{values: b.NewArray(), def: def, rep: rep, nullable: true}
}

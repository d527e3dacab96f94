package stages

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"monomer/schema"
)

// readTrace takes the train stage's trace with or without model and lambda
// columns, and leaves out a trace it cannot read.
func TestReadTrace(t *testing.T) {
	dir := t.TempDir()
	f := func(name string, typ arrow.DataType) arrow.Field { return arrow.Field{Name: name, Type: typ} }
	full := arrow.NewSchema([]arrow.Field{f("model", arrow.BinaryTypes.String), f("lambda", arrow.PrimitiveTypes.Float64),
		f("iteration", arrow.PrimitiveTypes.Int32), f("objective", arrow.PrimitiveTypes.Float64),
		f("valid_error", arrow.PrimitiveTypes.Float64), f("evaluations", arrow.PrimitiveTypes.Int32)}, nil)
	p := filepath.Join(dir, "full.parquet")
	if _, err := schema.Write(p, full, []string{"lmt", "monomer"}, []float64{0, 1e-4}, []int32{1, 2},
		[]float64{-0.6, -0.5}, []float64{math.NaN(), 0.3}, []int32{3, 5}); err != nil {
		t.Fatal(err)
	}
	got := readTrace(p)
	if len(got) != 2 || got[1].Model != "Monomer" || got[1].Lambda != 1e-4 || got[1].Iteration != 2 || got[1].ValidError != 0.3 {
		t.Errorf("full trace: %+v", got)
	}
	bare := arrow.NewSchema([]arrow.Field{f("iteration", arrow.PrimitiveTypes.Int64), f("objective", arrow.PrimitiveTypes.Float64),
		f("valid_error", arrow.PrimitiveTypes.Float64)}, nil)
	p = filepath.Join(dir, "bare.parquet")
	if _, err := schema.Write(p, bare, []int64{1}, []float64{-0.6}, []float64{0.4}); err != nil {
		t.Fatal(err)
	}
	if got := readTrace(p); len(got) != 1 || got[0].Model != "training" || got[0].Iteration != 1 {
		t.Errorf("trace without model and lambda: %+v", got)
	}
	if got := readTrace(filepath.Join(dir, "missing.parquet")); got != nil {
		t.Errorf("missing trace: %+v", got)
	}
	noObj := arrow.NewSchema([]arrow.Field{f("iteration", arrow.PrimitiveTypes.Int64)}, nil)
	p = filepath.Join(dir, "noobj.parquet")
	if _, err := schema.Write(p, noObj, []int64{1}); err != nil {
		t.Fatal(err)
	}
	if got := readTrace(p); got != nil {
		t.Errorf("trace without objective: %+v", got)
	}
}

package stages

import (
	"math"
	"path/filepath"
	"testing"

	"monomer/schema"
)

// readTrace takes the train stage's trace with or without model and lambda
// columns (report.Assemble titles the models, "training" where there is no
// model column), and leaves out a trace it cannot read.
func TestReadTrace(t *testing.T) {
	dir := t.TempDir()
	type fullTrace struct {
		Model      []string  `col:"model"`
		Lambda     []float64 `col:"lambda"`
		Iteration  []int32   `col:"iteration"`
		Objective  []float64 `col:"objective"`
		ValidError []float64 `col:"valid_error"`
		Evals      []int32   `col:"evaluations"`
	}
	p := filepath.Join(dir, "full.parquet")
	if _, err := schema.Write(p, fullTrace{[]string{"lmt", "monomer"}, []float64{0, 1e-4}, []int32{1, 2},
		[]float64{-0.6, -0.5}, []float64{math.NaN(), 0.3}, []int32{3, 5}}); err != nil {
		t.Fatal(err)
	}
	got := readTrace(t.Context(), p)
	if len(got) != 2 || got[1].Model != "monomer" || got[1].Lambda != 1e-4 || got[1].Iteration != 2 || got[1].ValidError != 0.3 {
		t.Errorf("full trace: %+v", got)
	}
	type bareTrace struct {
		Iteration  []int64   `col:"iteration"`
		Objective  []float64 `col:"objective"`
		ValidError []float64 `col:"valid_error"`
	}
	p = filepath.Join(dir, "bare.parquet")
	if _, err := schema.Write(p, bareTrace{[]int64{1}, []float64{-0.6}, []float64{0.4}}); err != nil {
		t.Fatal(err)
	}
	if got := readTrace(t.Context(), p); len(got) != 1 || got[0].Model != "" || got[0].Iteration != 1 {
		t.Errorf("trace without model and lambda: %+v", got)
	}
	if got := readTrace(t.Context(), filepath.Join(dir, "missing.parquet")); got != nil {
		t.Errorf("missing trace: %+v", got)
	}
	type noObj struct {
		Iteration []int64 `col:"iteration"`
	}
	p = filepath.Join(dir, "noobj.parquet")
	if _, err := schema.Write(p, noObj{[]int64{1}}); err != nil {
		t.Fatal(err)
	}
	if got := readTrace(t.Context(), p); got != nil {
		t.Errorf("trace without objective: %+v", got)
	}
}

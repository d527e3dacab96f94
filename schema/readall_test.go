package schema

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// filled gives every column of T n rows whose values name their row and
// column, lists of 0 to 2 elements, so a column read into another field,
// or a row moved, shows.
func filled[T any](n int) T {
	var out T
	v := reflect.ValueOf(&out).Elem()
	for f := range v.NumField() {
		if v.Type().Field(f).Name == "_" {
			continue
		}
		col := reflect.MakeSlice(v.Field(f).Type(), n, n)
		for i := range n {
			x := f*1000 + i
			e := col.Index(i)
			switch e.Kind() {
			case reflect.String:
				e.SetString(fmt.Sprintf("c%d r%d", f, i))
			case reflect.Bool:
				e.SetBool((f+i)%2 == 0)
			case reflect.Int8, reflect.Int32, reflect.Int64:
				e.SetInt(int64(x % 128))
			case reflect.Float32, reflect.Float64:
				e.SetFloat(float64(x) + 0.5)
			case reflect.Slice:
				n := i % 3
				if isFixed(v.Type().Field(f)) {
					n = 2
				}
				l := reflect.MakeSlice(e.Type(), n, n)
				for j := range n {
					if l.Index(j).CanInt() {
						l.Index(j).SetInt(int64(x + j))
					} else {
						l.Index(j).SetFloat(float64(x+j) / 4)
					}
				}
				e.Set(l)
			}
		}
		v.Field(f).Set(col)
	}
	return out
}

// roundTrip writes a filled T and reads it back with ReadAll.
func roundTrip[T any](t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.parquet")
	want := filled[T](5)
	if _, err := Write(p, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll[T](context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read %+v\nwrote %+v", got, want)
	}
}

// TestReadAllRoundTrip: every declared table reads back as written, each
// column into its own field.
func TestReadAllRoundTrip(t *testing.T) {
	tables := map[string]func(*testing.T){
		"items":              roundTrip[ItemsCols],
		"edges":              roundTrip[EdgesCols],
		"rejects":            roundTrip[RejectsCols],
		"reviews":            roundTrip[ReviewsCols],
		"vocabulary":         roundTrip[VocabularyCols],
		"bow":                roundTrip[BowCols],
		"bow_counts":         roundTrip[BowCountsCols],
		"bow_shard":          roundTrip[BowShardCols],
		"feature_items":      roundTrip[FeatureItemsCols],
		"pairs":              roundTrip[PairsCols],
		"predictions":        roundTrip[PredictionsCols],
		"metrics":            roundTrip[MetricsCols],
		"fits":               roundTrip[FitsCols],
		"trace":              roundTrip[TraceCols],
		"topics":             roundTrip[TopicsCols],
		"ct_counts":          roundTrip[CTCountsCols],
		"params":             roundTrip[ParamsCols],
		"job_metrics":        roundTrip[JobMetricsCols],
		"recommendations":    roundTrip[RecommendationsCols],
		"recommend_metrics":  roundTrip[RecommendMetricsCols],
		"published":          roundTrip[PublishedCols],
		"churn":              roundTrip[ChurnCols],
		"export_vectors":     roundTrip[ExportVectorsCols],
		"slices":             roundTrip[SlicesCols],
		"comparisons":        roundTrip[ComparisonsCols],
		"cold_items_metrics": roundTrip[ColdItemsMetricsCols],
	}
	for _, ns := range Tables() {
		if tables[ns.Name] == nil {
			t.Errorf("table %s has no round trip here", ns.Name)
		}
	}
	for name, test := range tables {
		t.Run(name, test)
	}
}

// TestReadAllOlderFile: a file written before a column tagged optional
// existed reads with that field nil and the others whole; one lacking any
// other column, or holding another type or a column more, fails naming the
// file and the column.
func TestReadAllOlderFile(t *testing.T) {
	dir := t.TempDir()
	type v1 struct { // recommend_metrics before coverage_cross and gini_cross
		Model                 []string  `col:"model,dict"`
		Queries               []int32   `col:"queries"`
		K                     []int32   `col:"k"`
		Candidates            []int32   `col:"candidates"`
		SameSubcategory       []float64 `col:"same_subcategory"`
		DistinctSubcategories []float64 `col:"distinct_subcategories"`
		Coverage              []float64 `col:"coverage"`
		Gini                  []float64 `col:"gini"`
		TestQueries           []int32   `col:"test_queries"`
		HitRate               []float64 `col:"hit_rate"`
		Recall                []float64 `col:"recall"`
	}
	old := filepath.Join(dir, "old.parquet")
	w := filled[v1](3)
	if _, err := Write(old, w); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll[RecommendMetricsCols](context.Background(), old)
	if err != nil {
		t.Fatal(err)
	}
	if got.CoverageCross != nil || got.GiniCross != nil {
		t.Errorf("optional columns absent from the file read as %v, %v, want nil", got.CoverageCross, got.GiniCross)
	}
	if !reflect.DeepEqual(got.Model, w.Model) || !reflect.DeepEqual(got.Recall, w.Recall) || !reflect.DeepEqual(got.TestQueries, w.TestQueries) {
		t.Errorf("read %+v from %+v", got, w)
	}

	type noK struct {
		ASIN []string `col:"asin"`
	}
	type wrongType struct {
		ASIN    []string `col:"asin"`
		ItemIdx []int64  `col:"item_idx"`
	}
	type extra struct {
		ASIN    []string `col:"asin"`
		ItemIdx []int32  `col:"item_idx"`
		More    []int32  `col:"more"`
	}
	bad := []struct {
		name, want string
		write      func(string) (int64, error)
		noColumn   bool
	}{
		{"column missing", `"item_idx"`, func(p string) (int64, error) { return Write(p, filled[noK](2)) }, true},
		{"other type", "item_idx", func(p string) (int64, error) { return Write(p, filled[wrongType](2)) }, false},
		{"column more", "more", func(p string) (int64, error) { return Write(p, filled[extra](2)) }, false},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".parquet")
			if _, err := tc.write(p); err != nil {
				t.Fatal(err)
			}
			_, err := ReadAll[FeatureItemsCols](context.Background(), p)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("got %v, want an error naming %s and %s", err, tc.want, p)
			}
			if errors.Is(err, ErrNoColumn) != tc.noColumn {
				t.Errorf("errors.Is(%v, ErrNoColumn) = %v", err, !tc.noColumn)
			}
		})
	}
}

// TestReadFields reads only the columns asked for, leaving the other
// fields as they were, from a file that may hold more columns; a pointer
// that is not to a column of the struct given is refused.
func TestReadFields(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pairs.parquet")
	want := filled[PairsCols](4)
	if _, err := Write(p, want); err != nil {
		t.Fatal(err)
	}
	got := PairsCols{X: []string{"untouched"}}
	if err := ReadFields(context.Background(), p, &got, &got.YIdx, &got.Split); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.YIdx, want.YIdx) || !reflect.DeepEqual(got.Split, want.Split) {
		t.Errorf("read y_idx %v, split %q; want %v, %q", got.YIdx, got.Split, want.YIdx, want.Split)
	}
	if !reflect.DeepEqual(got.X, []string{"untouched"}) || got.Y != nil || got.XIdx != nil || got.Label != nil {
		t.Errorf("columns not asked for were read: %+v", got)
	}

	var sub struct { // a view of two of its columns
		Split []string `col:"split"`
		XIdx  []int32  `col:"x_idx"`
	}
	if err := ReadFields(context.Background(), p, &sub, &sub.XIdx); err != nil || !reflect.DeepEqual(sub.XIdx, want.XIdx) {
		t.Errorf("x_idx of a file with more columns: %v, %v", sub.XIdx, err)
	}
	other := PairsCols{}
	for _, f := range []any{&other.XIdx, got.YIdx, &got} {
		if err := ReadFields(context.Background(), p, &got, f); err == nil || !strings.Contains(err.Error(), "not a pointer to a column") {
			t.Errorf("ReadFields of %T: %v", f, err)
		}
	}
}

// TestReadAllEmpty: a table with no rows reads as empty columns.
func TestReadAllEmpty(t *testing.T) {
	p := filepath.Join(t.TempDir(), "items.parquet")
	if _, err := Write(p, ItemsCols{}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll[ItemsCols](context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.ASIN) != 0 || len(got.HasImage) != 0 {
		t.Fatalf("read %+v from an empty table", got)
	}
}

// ReadFieldsSideBySide reads what ReadFields reads, over several row
// groups, and every list row is capped at its own end: appending to one
// never writes into the next (they share one backing array).
func TestReadFieldsSideBySide(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bow.parquet")
	want := filled[BowCols](50)
	if _, err := write(p, want, 7); err != nil {
		t.Fatal(err)
	}
	var a, b BowCols
	if err := ReadFields(context.Background(), p, &a, &a.ItemIdx, &a.TermIDs, &a.Weights); err != nil {
		t.Fatal(err)
	}
	if err := ReadFieldsSideBySide(context.Background(), p, &b, &b.ItemIdx, &b.TermIDs, &b.Weights); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(b.TermIDs, want.TermIDs) || !reflect.DeepEqual(b.Weights, want.Weights) || b.Counts != nil {
		t.Fatalf("side by side read %+v, want %+v", b, a)
	}
	for i := range b.TermIDs[:len(b.TermIDs)-1] {
		next := slices.Clone(b.TermIDs[i+1])
		_ = append(b.TermIDs[i], -1)
		if !slices.Equal(b.TermIDs[i+1], next) {
			t.Fatalf("appending to row %d changed row %d", i, i+1)
		}
	}
}

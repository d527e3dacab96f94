package stages

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"monomer/internal/browsertest"
	"monomer/job"
	"monomer/pipeline"
	"monomer/report"
	"monomer/schema"
)

// checkRecommend checks the recommend stage's lists against the items table
// and `monomer recommend`'s answer for the same query.
func checkRecommend(t *testing.T, j *job.Job, dir string) {
	t.Helper()
	for i := range j.Experiments {
		e := j.Resolve(i)
		it := must(readItems(t.Context(), runInputs(dir, e.Name)))(t)
		row := it.rows()
		tb := open(t, filepath.Join(dir, e.Name, "recommend", "recommendations.parquet"))
		model := must(tb.Strings("model"))(t)
		query := must(tb.Strings("query"))(t)
		rank := must(tb.Int32s("rank"))(t)
		item := must(tb.Strings("item"))(t)
		prob := must(tb.Float64s("probability"))(t)
		same := must(tb.Bools("same_subcategory"))(t)
		space := must(tb.Int32s("space"))(t)
		qidx := must(tb.Int32s("query_idx"))(t)
		iidx := must(tb.Int32s("item_idx"))(t)
		k := e.Settings.RecommendK
		var retr []string
		for _, m := range e.Models {
			if retrievable(m) {
				retr = append(retr, m)
			}
		}
		queries := map[string]bool{}
		for r := range model {
			queries[query[r]] = true
			if query[r] == item[r] {
				t.Fatalf("%s row %d: %s recommends the query itself", e.Name, r, model[r])
			}
			if want := it.sub[row[query[r]]] == it.sub[row[item[r]]]; same[r] != want {
				t.Fatalf("%s row %d: same_subcategory %v, want %v", e.Name, r, same[r], want)
			}
			if r > 0 && model[r] == model[r-1] && query[r] == query[r-1] {
				if rank[r] != rank[r-1]+1 || prob[r] > prob[r-1] {
					t.Fatalf("%s rows %d-%d: rank %d→%d probability %v→%v", e.Name, r-1, r, rank[r-1], rank[r], prob[r-1], prob[r])
				}
			}
			if (model[r] == "monomer") != (space[r] > 0) || int(space[r]) > e.Settings.N {
				t.Fatalf("%s row %d: %s space %d", e.Name, r, model[r], space[r])
			}
		}
		if want := len(queries) * k * len(retr); len(model) != want || len(queries) == 0 {
			t.Fatalf("%s: %d rows, want %d queries × %d × %d models", e.Name, len(model), len(queries), k, len(retr))
		}
		// The command gives the same list as the stage.
		ans, err := RecommendOne(t.Context(), dir, e.Name, "monomer", query[0], k, false)
		if err != nil {
			t.Fatal(err)
		}
		// --cross: k items, none of the query's subcategory, starting with
		// the unfiltered list's items from other subcategories, in order.
		cross, err := RecommendOne(t.Context(), dir, e.Name, "monomer", query[0], k, true)
		if err != nil {
			t.Fatal(err)
		}
		var others []string
		for _, h := range ans.Items {
			if h.Subcategory != ans.Subcategory {
				others = append(others, h.ASIN)
			}
		}
		if len(cross.Items) != k || !cross.Cross {
			t.Errorf("%s: --cross gave %d items (cross %v), want %d", e.Name, len(cross.Items), cross.Cross, k)
		}
		for i, h := range cross.Items {
			if h.Subcategory == cross.Subcategory {
				t.Errorf("%s: --cross rank %d is %s of the query's subcategory %s", e.Name, h.Rank, h.ASIN, h.Subcategory)
			}
			if i < len(others) && h.ASIN != others[i] {
				t.Errorf("%s: --cross rank %d is %s, want %s (the unfiltered list's next item from another subcategory)", e.Name, h.Rank, h.ASIN, others[i])
			}
		}
		var want []string
		for r := range model {
			if model[r] == "monomer" && query[r] == query[0] {
				want = append(want, item[r])
			}
		}
		var got []string
		for _, h := range ans.Items {
			got = append(got, h.ASIN)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: monomer recommend %s = %v, stage %v", e.Name, query[0], got, want)
		}
		// Claims: shares in [0, 1], at least one subcategory per list.
		rm := must(readRecMetrics(t.Context(), filepath.Join(dir, e.Name, "recommend", "recommend_metrics.parquet")))(t)
		for _, m := range retr {
			v, ok := rm[m]
			if !ok {
				t.Fatalf("%s: no recommend metrics for %s", e.Name, m)
			}
			for _, x := range []float64{v.Same, v.Coverage, v.Gini, v.GiniCross, v.HitRate, v.Recall, v.NDCG, v.MRR} {
				if !(x >= 0 && x <= 1) {
					t.Errorf("%s %s: metric %v outside [0, 1]: %+v", e.Name, m, x, v)
				}
			}
			if !(v.CoverageCross > 0 && v.CoverageCross <= 1) {
				t.Errorf("%s %s: coverage_cross %v outside (0, 1]", e.Name, m, v.CoverageCross)
			}
			// A query's NDCG and reciprocal rank are in [0, 1] and nonzero
			// only on a hit: neither mean can pass the hit rate.
			if v.NDCG > v.HitRate || v.MRR > v.HitRate {
				t.Errorf("%s %s: NDCG %v or MRR %v above the hit rate %v", e.Name, m, v.NDCG, v.MRR, v.HitRate)
			}
			if v.Distinct < 1 || v.Distinct > float64(k) || math.IsNaN(v.Distinct) {
				t.Errorf("%s %s: %v distinct subcategories per list", e.Name, m, v.Distinct)
			}
		}
		checkCrossLists(t, e, dir, rm, model, qidx, iidx)
	}
	if _, err := RecommendOne(t.Context(), dir, j.Experiments[0].Name, "ct", "x", 10, false); err == nil {
		t.Error("recommend with ct accepted")
	}
	if _, err := RecommendOne(t.Context(), dir, j.Experiments[0].Name, "monomer", "no-such-asin", 10, false); err == nil {
		t.Error("recommend for an unknown asin accepted")
	}
	// An unknown experiment is named as such, with the ones there are.
	_, err := RecommendOne(t.Context(), dir, "nope", "monomer", "x", 10, false)
	if !errors.Is(err, pipeline.ErrUsage) || !strings.Contains(fmt.Sprint(err), `unknown experiment "nope"; the run directory `+dir+` has experiments men-image, women-bow`) {
		t.Errorf("unknown experiment: %v", err)
	}
}

// checkCrossLists rebuilds the cross-subcategory lists coverage_cross and
// gini_cross are measured on (they are not in recommendations.parquet):
// they hold no item of the query's subcategory, begin with the other-
// subcategory items of the stage's unfiltered list in the same order (both
// are exact), and give the metrics the stage wrote. Some model's unfiltered
// lists must hold same-subcategory items, or the filter is not exercised.
func checkCrossLists(t *testing.T, e job.Resolved, dir string, rm map[string]report.Claims, model []string, qidx, iidx []int32) {
	t.Helper()
	k := e.Settings.RecommendK
	rx := must(openRecExperiment(t.Context(), runInputs(dir, e.Name), e.Features, e.Models))(t)
	defer rx.close()
	sub := rx.it.sub
	filtered := false
	for _, m := range e.Models {
		v, ok := rm[m]
		if !ok {
			continue
		}
		lists := map[int32][]int32{} // the stage's unfiltered lists by query
		var queries []int32
		for r := range model {
			if model[r] != m {
				continue
			}
			if _, ok := lists[qidx[r]]; !ok {
				queries = append(queries, qidx[r])
			}
			lists[qidx[r]] = append(lists[qidx[r]], iidx[r])
		}
		if v.Same > 0 {
			filtered = true
		}
		r := must(rx.retriever(t.Context(), m))(t)
		cross := must(r.TopKExcept(queries, k, 0, func(x, y int32) bool { return sub[x] == sub[y] }))(t)
		for qi, q := range queries {
			if len(cross[qi]) != k {
				t.Fatalf("%s %s query %d: cross list of %d, want %d", e.Name, m, q, len(cross[qi]), k)
			}
			var kept []int32
			for _, y := range lists[q] {
				if sub[y] != sub[q] {
					kept = append(kept, y)
				}
			}
			for n, h := range cross[qi] {
				if sub[h.Item] == sub[q] {
					t.Fatalf("%s %s query %d: cross list holds %d of its subcategory", e.Name, m, q, h.Item)
				}
				if n < len(kept) && h.Item != kept[n] {
					t.Fatalf("%s %s query %d: cross list %d at %d, unfiltered list's cross items %v", e.Name, m, q, h.Item, n, kept)
				}
			}
		}
		t.Logf("%s %s: same subcategory %.3f, coverage %.3f (Gini %.3f), cross-subcategory %.3f (%.3f)", e.Name, m, v.Same, v.Coverage, v.Gini, v.CoverageCross, v.GiniCross)
		if cov, gini := coverage(cross, rx.cand); cov != v.CoverageCross || gini != v.GiniCross {
			t.Errorf("%s %s: cross lists give coverage %v gini %v, stage wrote %v %v", e.Name, m, cov, gini, v.CoverageCross, v.GiniCross)
		}
	}
	if !filtered {
		t.Errorf("%s: no model recommends within the query's subcategory; the cross lists are untested", e.Name)
	}
}

// checkReport checks the visual report of two runs (GOMAXPROCS 1 and 2):
// the same bytes, references to files that exist, and, in a real browser,
// every image loaded.
func checkReport(t *testing.T, dirs [2]string) {
	t.Helper()
	a, b := filepath.Join(dirs[0], "report"), filepath.Join(dirs[1], "report")
	files, err := filepath.Glob(filepath.Join(a, "*.png"))
	if err != nil || len(files) < 8 {
		t.Fatalf("report PNGs: %v %v", files, err)
	}
	files = append(files, filepath.Join(a, "index.html"))
	for _, f := range files {
		x, err1 := os.ReadFile(f)
		y, err2 := os.ReadFile(filepath.Join(b, filepath.Base(f)))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Errorf("report/%s differs between GOMAXPROCS 1 and 2 (%v, %v)", filepath.Base(f), err1, err2)
		}
	}
	page := string(must(os.ReadFile(filepath.Join(a, "index.html")))(t))
	for _, m := range regexp.MustCompile(`src="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		if _, err := os.Stat(filepath.Join(a, m[1])); err != nil {
			t.Errorf("index.html references %s: %v", m[1], err)
		}
	}
	for _, want := range []string{"men-image", "women-bow", "Monomer space 2", "Recommendations side by side", `class="claims"`} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	checkTablesAgree(t, dirs[0])
	checkProvenance(t, dirs)
	t.Run("browser", func(t *testing.T) { browsertest.Check(t, a, len(files)-1, 8) })
}

// TestReadRecMetricsBeforeCross: a recommend_metrics table written before
// coverage_cross and gini_cross (recommend 1.0.0) reads with those NaN and
// the other claims intact.
func TestReadRecMetricsBeforeCross(t *testing.T) {
	type v1 struct { // recommend_metrics as recommend 1.0.0 wrote it
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
	p := filepath.Join(t.TempDir(), "recommend_metrics.parquet")
	must(schema.Write(p, v1{Model: []string{"lmt"}, Queries: []int32{300}, K: []int32{10}, Candidates: []int32{900},
		SameSubcategory: []float64{0.4}, DistinctSubcategories: []float64{3}, Coverage: []float64{0.8}, Gini: []float64{0.5},
		TestQueries: []int32{80}, HitRate: []float64{0.1}, Recall: []float64{0.05}}))(t)
	rm := must(readRecMetrics(t.Context(), p))(t)
	v := rm["lmt"]
	if v.Coverage != 0.8 || v.Gini != 0.5 || v.TestQueries != 80 || !math.IsNaN(v.CoverageCross) || !math.IsNaN(v.GiniCross) {
		t.Fatalf("read %+v", v)
	}
}

// TestNoItemHint: an asin that is no item names the one it is a slip of
// (the wrong case got no hint), and no guess two edits away.
func TestNoItemHint(t *testing.T) {
	items := []string{"B000A1", "B000B2", "B00ZZZZ9"}
	for asin, want := range map[string]string{
		"b000a1":   "no item b000a1 in experiment e; did you mean B000A1?",
		"B000A":    "no item B000A in experiment e; did you mean B000A1?",
		"B00ZZZ99": "no item B00ZZZ99 in experiment e; did you mean B00ZZZZ9?",
		"C111C3":   "no item C111C3 in experiment e",
	} {
		err := noItem(asin, "e", items)
		if !errors.Is(err, pipeline.ErrUsage) || err.Error() != "usage: "+want {
			t.Errorf("%s: %v, want %q", asin, err, want)
		}
	}
}

package stages

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"monomer/graph"
	"monomer/job"
	"monomer/models"
	"monomer/schema"
)

// TestColdItemsKeyUnchanged: without cold_items the negatives key and the
// job's settings JSON are what they were; with it, the key names it.
func TestColdItemsKeyUnchanged(t *testing.T) {
	j := loadTestJob(t)
	r := j.Resolve(0)
	b := must(json.Marshal(Negatives{}.Params(&r)))(t)
	if want := `{"method":"rewire","swaps_per_edge":20,"graph":"also_bought"}`; string(b) != want {
		t.Errorf("negatives key %s, want %s", b, want)
	}
	if s := string(must(json.Marshal(j.Settings))(t)); strings.Contains(s, "ColdItems") {
		t.Errorf("the job's settings JSON names ColdItems: %s", s)
	}
	r.Settings.ColdItems = job.Set(0.1)
	b = must(json.Marshal(Negatives{}.Params(&r)))(t)
	if want := `{"method":"rewire","swaps_per_edge":20,"graph":"also_bought","cold_items":0.1}`; string(b) != want {
		t.Errorf("negatives key %s, want %s", b, want)
	}
}

// TestPickColdItems: the share of the items with a relation, rounded, at
// least one, ascending, the same for the same seed.
func TestPickColdItems(t *testing.T) {
	var pos []graph.Edge
	for i := range int32(10) { // items 0-10 related, 11-12 not
		pos = append(pos, graph.Edge{Src: i, Dst: i + 1})
	}
	for _, tc := range []struct {
		share float64
		n     int
	}{{0.2, 2}, {0.01, 1}, {0.5, 6}} {
		a := pickColdItems(pos, tc.share, rand.New(rand.NewPCG(1, 2)))
		b := pickColdItems(pos, tc.share, rand.New(rand.NewPCG(1, 2)))
		if len(a) != tc.n || !slices.Equal(a, b) || !slices.IsSorted(a) || slices.ContainsFunc(a, func(x int32) bool { return x > 10 }) {
			t.Errorf("share %g: %v and %v, want %d related items, ascending, twice the same", tc.share, a, b, tc.n)
		}
	}
	kept, held := withoutItems(pos, []int32{3}, 13)
	if len(kept) != 8 || len(held) != 2 || held[0] != (graph.Edge{Src: 2, Dst: 3}) || held[1] != (graph.Edge{Src: 3, Dst: 4}) {
		t.Errorf("without 3: kept %v, held %v", kept, held)
	}
}

// TestPickColdItemsStable: under split: stable the held-out items are
// those whose id's key is below the share, so an item's fate does not
// depend on which other items are in tonight's graph or their indices;
// the key names it.
func TestPickColdItemsStable(t *testing.T) {
	ids := func(n int, pre string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint(pre, i)
		}
		return out
	}
	chain := func(n int) []graph.Edge {
		var pos []graph.Edge
		for i := range int32(n - 1) {
			pos = append(pos, graph.Edge{Src: i, Dst: i + 1})
		}
		return pos
	}
	// Day 2: the same ids, 200 new ones first, so every index moves.
	asin1 := ids(2000, "a")
	asin2 := append(ids(200, "b"), asin1...)
	c1 := pickColdItemsStable(chain(2000), asin1, 0.1, 9)
	c2 := pickColdItemsStable(chain(2200), asin2, 0.1, 9)
	held := map[string]bool{}
	for _, x := range c2 {
		held[asin2[x]] = true
	}
	for _, x := range c1 {
		if !held[asin1[x]] {
			t.Fatalf("item %s held out on day 1, not on day 2", asin1[x])
		}
	}
	if len(c1) < 140 || len(c1) > 260 || !slices.IsSorted(c1) {
		t.Errorf("%d of 2,000 items held out at 0.1 (want about 200), sorted %v", len(c1), slices.IsSorted(c1))
	}
	if one := pickColdItemsStable(chain(3), ids(3, "a"), 1e-9, 9); len(one) != 1 {
		t.Errorf("a tiny share held out %v, want one item", one)
	}
	r := loadTestJob(t).Resolve(0)
	r.Settings.ColdItems = job.Set(0.1)
	r.Settings.Split = job.Set(graph.SplitStable)
	b := must(json.Marshal(Negatives{}.Params(&r)))(t)
	if want := `{"method":"rewire","swaps_per_edge":20,"graph":"also_bought","cold_items":0.1,"cold_by_id":true}`; string(b) != want {
		t.Errorf("negatives key %s, want %s", b, want)
	}
}

// TestColdEvalHand: hit rate and recall of held-out items on a case worked
// by hand, the model's lists and the popularity baseline's.
func TestColdEvalHand(t *testing.T) {
	// Items 0-3 the catalogue, 4 and 5 held out. 4 → {0, 1}; 5 → {2}
	// (5 → 4 has no catalogue end, 0 → 4 is the other direction, 4 → 0
	// twice counts once).
	cold := []bool{false, false, false, false, true, true}
	rel := []graph.Edge{{Src: 4, Dst: 0}, {Src: 4, Dst: 1}, {Src: 5, Dst: 2}, {Src: 5, Dst: 4}, {Src: 0, Dst: 4}, {Src: 4, Dst: 0}}
	cand := []int32{0, 1, 2, 3}
	ce := newColdEval(rand.New(rand.NewPCG(1, 1)), cold, rel, cand, 300)
	if ce.items != 2 || !slices.Equal(ce.queries, []int32{4, 5}) || ce.rels != 3 ||
		!slices.Equal(ce.partners[4], []int32{0, 1}) || !slices.Equal(ce.partners[5], []int32{2}) {
		t.Fatalf("cold eval %+v", ce)
	}
	hit := func(xs ...int32) []models.Hit {
		var l []models.Hit
		for _, x := range xs {
			l = append(l, models.Hit{Item: x})
		}
		return l
	}
	// k = 2. The model: 4 gets [1, 3] (1 of 2 found), 5 gets [2, 0] (1 of
	// 1): hit rate 1, recall (1/2 + 1)/2 = 3/4.
	m := scoreHeldOut([][]models.Hit{hit(1, 3, 0), hit(2, 0)}, ce.queries, ce.partners, nil, 2)
	// Popularity: training degrees 0:2, 3:2, 1:1, 2:1 rank [0, 3] for
	// both: 4 finds 0 (1/2), 5 nothing: hit rate 1/2, recall 1/4.
	pairs := []graph.Pair{{X: 0, Y: 1, Label: true, Split: graph.Train}, {X: 0, Y: 3, Label: true, Split: graph.Train},
		{X: 2, Y: 3, Label: true, Split: graph.Train}, {X: 1, Y: 2, Label: false, Split: graph.Train}, {X: 1, Y: 2, Label: true, Split: graph.Test}}
	pop := models.NewPopularity(models.TrainDegree(pairs, 6), cand)
	p := scoreHeldOut(pop.TopK(ce.queries, 2, nil), ce.queries, ce.partners, nil, 2)
	for _, c := range []struct {
		name               string
		got                heldOutScores
		hitRate, recallAtK float64
	}{{"model", m, 1, 0.75}, {"popularity", p, 0.5, 0.25}} {
		if math.Abs(c.got.HitRate-c.hitRate) > 1e-15 || math.Abs(c.got.Recall-c.recallAtK) > 1e-15 {
			t.Errorf("%s: hit rate %g, recall %g, want %g, %g", c.name, c.got.HitRate, c.got.Recall, c.hitRate, c.recallAtK)
		}
	}
	ce.add("lmt", 2, len(cand), m)
	if got := ce.met; !slices.Equal(got.Model, []string{"lmt"}) || got.ColdItems[0] != 2 || got.Queries[0] != 2 || got.Relations[0] != 3 || got.Candidates[0] != 4 {
		t.Errorf("row %+v", got)
	}
}

// coldJob is the test job's image experiment alone, with cold_items.
func coldJob(t *testing.T) *job.Job {
	t.Helper()
	j := loadTestJob(t)
	j.Experiments = j.Experiments[:1]
	j.Experiments[0].Models = []string{"wnn", "lmt", "monomer"}
	j.Settings.ColdItems = job.Set(0.15)
	return j
}

// TestColdItemsHeldOut runs the image experiment with cold_items: the held-
// out items are in no positive, negative, training, validation or test
// pair, in no recommendation list, as query or item; every held-out
// relation touches one and the rest are the positives; cold_items_metrics
// has a row per ranking model and popularity's, the latter as recomputed
// here; monomer score's lists of the held-out items give the same
// figures; and the run is byte-identical at GOMAXPROCS 1 and 3.
func TestColdItemsHeldOut(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the pipeline twice")
	}
	ctx := context.Background()
	j := coldJob(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var dirs [2]string
	for i, procs := range []int{1, 3} {
		runtime.GOMAXPROCS(procs)
		dirs[i] = t.TempDir()
		runJob(t, j, dirs[i])
	}
	exp := j.Experiments[0].Name
	in := runInputs(dirs[0], exp)
	it := must(readItems(ctx, in))(t)
	cold, rel, err := readColdItems(ctx, in, len(it.asin))
	if err != nil {
		t.Fatal(err)
	}
	if cold == nil {
		t.Fatal("no cold_items.parquet")
	}
	nCold := 0
	for _, c := range cold {
		if c {
			nCold++
		}
	}
	pos := must(readEdges(ctx, in, "negatives", "positives.parquet"))(t)
	neg := must(readEdges(ctx, in, "negatives", "negatives.parquet"))(t)
	edges := must(readEdges(ctx, in, "ingest", "edges.parquet"))(t)
	keep := must(readFeatureItems(ctx, in, len(it.asin)))(t)
	withFeat := 0
	for _, e := range edges {
		if keep[e.Src] && keep[e.Dst] {
			withFeat++
		}
	}
	if nCold == 0 || len(rel) == 0 || len(pos)+len(rel) != withFeat {
		t.Fatalf("%d cold items, %d held-out relations + %d positives, want %d", nCold, len(rel), len(pos), withFeat)
	}
	for _, e := range rel {
		if !cold[e.Src] && !cold[e.Dst] {
			t.Fatalf("held-out relation %v touches no held-out item", e)
		}
	}
	for name, es := range map[string][]graph.Edge{"positives": pos, "negatives": neg} {
		for _, e := range es {
			if cold[e.Src] || cold[e.Dst] {
				t.Fatalf("%s has %v, a held-out item", name, e)
			}
		}
	}
	pairs := must(readPairs(ctx, in))(t)
	for _, p := range pairs {
		if cold[p.X] || cold[p.Y] {
			t.Fatalf("pair %+v (split %v) has a held-out item", p, p.Split)
		}
	}
	var rec schema.RecommendationsCols
	if err := schema.ReadFields(ctx, filepath.Join(dirs[0], exp, "recommend", "recommendations.parquet"), &rec, &rec.QueryIdx, &rec.ItemIdx); err != nil {
		t.Fatal(err)
	}
	for i := range rec.QueryIdx {
		if cold[rec.QueryIdx[i]] || cold[rec.ItemIdx[i]] {
			t.Fatalf("recommendation %d lists a held-out item (%d → %d)", i, rec.QueryIdx[i], rec.ItemIdx[i])
		}
	}

	met := must(schema.ReadAll[schema.ColdItemsMetricsCols](ctx, filepath.Join(dirs[0], exp, "recommend", coldItemsMetricsFile)))(t)
	if !slices.Equal(met.Model, []string{"wnn", "lmt", "monomer", PopularityModel}) {
		t.Fatalf("cold_items_metrics models %v", met.Model)
	}
	// Popularity by hand: the catalogue is the items with features not
	// held out; every held-out item with a catalogue partner is a query
	// (fewer than recommend_queries here).
	var cand []int32
	for i, k := range keep {
		if k && !cold[i] {
			cand = append(cand, int32(i))
		}
	}
	partners := map[int32]map[int32]bool{}
	for _, e := range rel {
		if cold[e.Src] && keep[e.Dst] && !cold[e.Dst] {
			if partners[e.Src] == nil {
				partners[e.Src] = map[int32]bool{}
			}
			partners[e.Src][e.Dst] = true
		}
	}
	deg := make([]int, len(it.asin))
	for _, p := range pairs {
		if p.Label && p.Split == graph.Train {
			deg[p.X]++
			deg[p.Y]++
		}
	}
	order := slices.Clone(cand)
	slices.SortStableFunc(order, func(a, b int32) int { return deg[b] - deg[a] })
	k := int(met.K[3])
	var hits, recall float64
	var rels int64
	for _, ps := range partners {
		found := 0
		n := 0
		for _, y := range order {
			if n == k {
				break
			}
			n++
			if ps[y] {
				found++
			}
		}
		if found > 0 {
			hits++
		}
		recall += float64(found) / float64(len(ps))
		rels += int64(len(ps))
	}
	nq := float64(len(partners))
	for i := range met.Model {
		if int(met.Queries[i]) != len(partners) || met.Relations[i] != rels || int(met.ColdItems[i]) != nCold || int(met.Candidates[i]) != len(cand) {
			t.Errorf("%s: %d queries, %d relations, %d cold items, %d candidates; want %d, %d, %d, %d",
				met.Model[i], met.Queries[i], met.Relations[i], met.ColdItems[i], met.Candidates[i], len(partners), rels, nCold, len(cand))
		}
		if !(met.HitRate[i] >= 0 && met.HitRate[i] <= 1 && met.Recall[i] >= 0 && met.Recall[i] <= met.HitRate[i]) {
			t.Errorf("%s: hit rate %g, recall %g", met.Model[i], met.HitRate[i], met.Recall[i])
		}
	}
	if math.Abs(met.HitRate[3]-hits/nq) > 1e-12 || math.Abs(met.Recall[3]-recall/nq) > 1e-12 {
		t.Errorf("popularity: hit rate %g, recall %g; by hand %g, %g", met.HitRate[3], met.Recall[3], hits/nq, recall/nq)
	}

	// monomer score of the experiment's own input files lists the held-out
	// items against the same catalogue: its lists give the figures of the
	// recommend stage's row.
	data, _ := filepath.Abs(testData)
	out := filepath.Join(t.TempDir(), "scored")
	if _, err := Score(ctx, ScoreOptions{RunDir: dirs[0], Experiment: exp, Model: "monomer",
		Items: filepath.Join(data, "meta_Demo.json.gz"), ImageFeatures: filepath.Join(data, "image_features_Demo.b"), Out: out}); err != nil {
		t.Fatal(err)
	}
	scored := must(schema.ReadAll[schema.PublishedCols](ctx, filepath.Join(out, publishedFile)))(t)
	row := it.rows()
	lists := map[int32][]models.Hit{}
	for i, q := range scored.Query {
		x, y := row[q], row[scored.Item[i]]
		if cold[y] {
			t.Fatalf("score lists held-out item %s for %s", scored.Item[i], q)
		}
		if cold[x] {
			lists[x] = append(lists[x], models.Hit{Item: y})
		}
	}
	ce := newColdEval(rand.New(rand.NewPCG(1, 1)), cold, rel, cand, len(cold))
	var ls [][]models.Hit
	for _, q := range ce.queries {
		ls = append(ls, lists[q])
	}
	sh := scoreHeldOut(ls, ce.queries, ce.partners, nil, k)
	if mi := slices.Index(met.Model, "monomer"); met.HitRate[mi] == 0 || sh.HitRate != met.HitRate[mi] || sh.Recall != met.Recall[mi] || sh.NDCG != met.NDCG[mi] {
		t.Errorf("monomer score's lists give hit rate %g, recall %g, ndcg %g; cold_items_metrics %g, %g, %g",
			sh.HitRate, sh.Recall, sh.NDCG, met.HitRate[mi], met.Recall[mi], met.NDCG[mi])
	}

	a, b := parquetFiles(t, dirs[0]), parquetFiles(t, dirs[1])
	for _, name := range []string{"negatives/cold_items.parquet", "negatives/cold_relations.parquet", "recommend/" + coldItemsMetricsFile} {
		name = filepath.Join(exp, name)
		if a[name] == nil || !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s missing or differs between GOMAXPROCS 1 and 3", name)
		}
	}
	for name, x := range a {
		if !bytes.Equal(x, b[name]) {
			t.Errorf("%s differs between GOMAXPROCS 1 and 3", name)
		}
	}
}

package stages

import (
	"bytes"
	"cmp"
	"errors"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"monomer/job"
	"monomer/models"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// publishJob is one image experiment of the committed tiny data with a
// publish: block (k above recommend_k, so the recommend check takes its
// first recommend_k entries); maxIter, if not "", replaces the training
// budget, and more is YAML added under publish:.
func publishJob(t *testing.T, maxIter, more string) *job.Job {
	t.Helper()
	data, err := filepath.Abs(testData)
	if err != nil {
		t.Fatal(err)
	}
	y := `
name: publish-test
seed: 7
data_dir: ` + data + `
data:
  meta: meta_Demo.json.gz
  image_features: image_features_Demo.b
settings:
  k: 6
  monomer_k: 2
  n: 2
  lambdas: [0.0001]
  max_iter: MAXITER
  valid_every: 5
  recommend_k: 8
  report_map_items: 150
publish:
  model: monomer
  k: 12
` + more + `
experiments:
  - name: men-image
    category: "Clothing, Shoes & Jewelry > Men"
    graph: also_bought
    features: image
    models: [wnn, lmt, monomer]
`
	iters := cmp.Or(maxIter, "15")
	y = strings.Replace(y, "MAXITER", iters, 1)
	j, err := job.Parse(filepath.Join(t.TempDir(), "job.yaml"), []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// runPublish runs j as run id of root (root "" for a run without
// --run-id, into dir), returning the run directory and Run's error.
func runPublish(t *testing.T, j *job.Job, root, id string, opts pipeline.Options) (string, *pipeline.Summary, error) {
	t.Helper()
	c := *j
	dir := opts.RunDir
	if root != "" {
		c.RunRoot, c.RunID = root, id
		dir = filepath.Join(root, id)
	}
	opts.RunDir = dir
	opts.RunID = cmp.Or(id, "test")
	sum, err := runStages(t.Context(), &c, Experiment(), Job(), opts)
	return dir, sum, err
}

// refList is the brute-force top k of query x among cand under Monomer's
// distance as the paper writes it, d(x, y) = Σ_k p_k(x)‖a(x) − e_k(y)‖²
// (Eqs. 4-6) in float64, not the inner product the retriever rewrites it
// to; skip leaves candidates out. Ties go to the lower item index.
func refList(fit *models.Fit, proj *models.Projection, x int, k int, skip func(y int32) bool) ([]int32, []float64) {
	type cand struct {
		item int32
		d    float64
	}
	a, p := proj.Block(x, "E0"), proj.Gate(x)
	var all []cand
	for ci, y := range proj.Items {
		if ci == x || (skip != nil && skip(y)) {
			continue
		}
		var d float64
		for s := range fit.N {
			e := proj.Block(ci, "E"+string(rune('1'+s)))
			var sq float64
			for j := range a {
				sq += (a[j] - e[j]) * (a[j] - e[j])
			}
			d += p[s] * sq
		}
		all = append(all, cand{y, d})
	}
	slices.SortFunc(all, func(u, v cand) int { return cmp.Or(cmp.Compare(u.d, v.d), cmp.Compare(u.item, v.item)) })
	all = all[:min(k, len(all))]
	items, dist := make([]int32, len(all)), make([]float64, len(all))
	for i, c := range all {
		items[i], dist[i] = c.item, c.d
	}
	return items, dist
}

// checkAgainstRef fails unless every list equals the brute-force reference
// at every rank: the same item (unless the reference's distances tie
// within rounding there) and its probability.
func checkAgainstRef(t *testing.T, name string, fit *models.Fit, proj *models.Projection, queries []int32, k int,
	got map[int32][]models.Hit, skip func(x, y int32) bool, keep func(p float64) bool) {
	t.Helper()
	pos := map[int32]int{}
	for i, y := range proj.Items {
		pos[y] = i
	}
	for _, q := range queries {
		var sk func(y int32) bool
		if skip != nil {
			sk = func(y int32) bool { return skip(q, y) }
		}
		items, dist := refList(fit, proj, pos[q], k, sk)
		var wantN int
		for wantN < len(items) && (keep == nil || keep(sigmoid(fit.C-dist[wantN]))) {
			wantN++
		}
		list := got[q]
		if len(list) != wantN {
			t.Fatalf("%s: query %d: %d items, want %d", name, q, len(list), wantN)
		}
		for r, h := range list {
			tol := 1e-9 * (1 + math.Abs(dist[r]))
			tied := (r > 0 && dist[r]-dist[r-1] < tol) || (r+1 < len(dist) && dist[r+1]-dist[r] < tol)
			if h.Item != items[r] && !tied {
				t.Fatalf("%s: query %d rank %d: item %d, want %d (d %v)", name, q, r+1, h.Item, items[r], dist[r])
			}
			// A table has no distance column (NaN here).
			if (!math.IsNaN(h.Dist) && math.Abs(h.Dist-dist[r]) > tol) || math.Abs(h.Prob-sigmoid(fit.C-dist[r])) > 1e-9 {
				t.Fatalf("%s: query %d rank %d: d %v p %v, want d %v p %v", name, q, r+1, h.Dist, h.Prob, dist[r], sigmoid(fit.C-dist[r]))
			}
		}
	}
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// readPublished reads a publish table as lists by query, checking its
// order (query, then rank from 1) and that no row group splits a list.
func readPublished(t *testing.T, path string, row map[string]int32) (map[int32][]models.Hit, []string) {
	t.Helper()
	out := map[int32][]models.Hit{}
	var order []string
	last := ""
	for b, err := range schema.Batches[schema.PublishedCols](t.Context(), path) {
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Query) > 0 && b.Query[0] == last {
			t.Fatalf("%s: query %s's list is split between row groups", path, last)
		}
		for i, q := range b.Query {
			if q != last {
				if q < last {
					t.Fatalf("%s: query %s after %s", path, q, last)
				}
				order = append(order, q)
				last = q
			}
			l := out[row[q]]
			if int(b.Rank[i]) != len(l)+1 {
				t.Fatalf("%s: query %s rank %d after %d", path, q, b.Rank[i], len(l))
			}
			out[row[q]] = append(l, models.Hit{Item: row[b.Item[i]], Dist: math.NaN(), Prob: b.Probability[i], Space: int(b.Space[i])})
		}
	}
	return out, order
}

// TestPublish runs one experiment with publish: and checks the table
// against a brute-force reference (every query, every rank), against the
// recommend stage's lists, each rule on its own, and the same bytes at
// GOMAXPROCS 1, 2 and 7.
func TestPublish(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	j := publishJob(t, "", "")
	dir, _, err := runPublish(t, j, "", "", pipeline.Options{RunDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	in := runInputs(dir, "men-image")
	e, err := openRecExperiment(t.Context(), in, "image", []string{"monomer"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	r := must(e.retriever(t.Context(), "monomer"))(t)
	s := e.fits["monomer"]
	fit := must(models.NewFit("monomer", s.c, s.params))(t)
	proj := must(fit.Project(e.feat, e.cand))(t)
	row := e.it.rows()
	// Item ids in byte order are the item indices in order: ties broken
	// by index are broken by id.
	if !slices.IsSorted(e.it.asin) {
		t.Fatal("items are not in id order")
	}
	const k = 12

	table := filepath.Join(dir, "men-image", "publish", publishedFile)
	got, order := readPublished(t, table, row)
	if len(order) != len(e.cand) || len(e.cand) < 50 {
		t.Fatalf("%d lists for %d items with features", len(order), len(e.cand))
	}
	checkAgainstRef(t, "table", fit, proj, e.cand, k, got, nil, nil)

	t.Run("held_out", func(t *testing.T) {
		m := must(cache.ReadManifest(filepath.Join(dir, "men-image", "publish")))(t)
		h, ok := m.Stats["held_out"].(map[string]any)
		if !ok {
			t.Fatalf("publish stats %v: no held_out", m.Stats)
		}
		test, _ := heldOutPairs(must(readPairs(t.Context(), in))(t), e.cand)
		want := min(len(test), publishHeldOutQueries)
		if h["test_queries"] != float64(want) || h["k"] != float64(k) {
			t.Errorf("held_out %v: want %d test queries at k %d", h, want, k)
		}
		hit, _ := h["hit_rate"].(float64)
		for _, name := range []string{"recall", "ndcg", "mrr"} {
			if v, ok := h[name].(float64); !ok || v < 0 || v > hit {
				t.Errorf("held_out %s %v outside [0, hit rate %v]", name, h[name], hit)
			}
		}
		if hit <= 0 || hit > 1 {
			t.Errorf("held_out hit rate %v: monomer finds no test positive", hit)
		}
	})

	t.Run("recommend", func(t *testing.T) {
		tb := open(t, filepath.Join(dir, "men-image", "recommend", "recommendations.parquet"))
		model, query := must(tb.Strings("model"))(t), must(tb.Strings("query"))(t)
		rank, item := must(tb.Int32s("rank"))(t), must(tb.Strings("item"))(t)
		prob, space := must(tb.Float64s("probability"))(t), must(tb.Int32s("space"))(t)
		n, qs := 0, map[string]bool{}
		for i := range model {
			if model[i] != "monomer" {
				continue
			}
			n++
			qs[query[i]] = true
			l := got[row[query[i]]]
			if int(rank[i]) > len(l) {
				t.Fatalf("recommend row %d: rank %d beyond the published list of %d", i, rank[i], len(l))
			}
			h := l[rank[i]-1]
			if h.Item != row[item[i]] || h.Prob != prob[i] || int32(h.Space) != space[i] {
				t.Fatalf("recommend row %d (%s rank %d): %s p %v space %d; published %s p %v space %d", i, query[i], rank[i],
					item[i], prob[i], space[i], e.it.asin[h.Item], h.Prob, h.Space)
			}
		}
		if n != 8*len(qs) || n == 0 {
			t.Fatalf("%d recommend rows of monomer", n)
		}
	})

	lists := func(t *testing.T, p publishParams, excluded []bool, queries []int32) map[int32][]models.Hit {
		t.Helper()
		p.K, p.Model = k, "monomer"
		out := map[int32][]models.Hit{}
		var skip func(x, y int32) bool
		if excluded != nil {
			skip = func(_, y int32) bool { return excluded[y] }
		}
		err := publishLists(r, e.it, queries, p, skip, func(q int32, l []models.Hit) error {
			out[q] = l
			return nil
		}, func(schema.PublishedCols, int) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Run("cross_subcategory", func(t *testing.T) {
		l := lists(t, publishParams{Cross: true}, nil, e.cand)
		checkAgainstRef(t, "cross", fit, proj, e.cand, k, l, e.it.sameSub, nil)
	})
	t.Run("min_probability", func(t *testing.T) {
		var probs []float64
		for _, l := range got {
			for _, h := range l {
				probs = append(probs, h.Prob)
			}
		}
		slices.Sort(probs)
		m := probs[len(probs)/2]
		l := lists(t, publishParams{MinProb: m}, nil, e.cand)
		short := 0
		for _, q := range e.cand {
			if len(l[q]) < k {
				short++
			}
		}
		if short == 0 || short == len(e.cand) {
			t.Fatalf("min_probability %v shortened %d of %d lists", m, short, len(e.cand))
		}
		checkAgainstRef(t, "min_probability", fit, proj, e.cand, k, l, nil, func(p float64) bool { return p >= m })
	})
	t.Run("exclude", func(t *testing.T) {
		csv := "id\n"
		excluded := make([]bool, len(e.it.asin))
		for i, c := range e.cand {
			if i%3 == 0 {
				csv += e.it.asin[c] + "\n"
				excluded[c] = true
			}
		}
		csv += "NOT-AN-ITEM\n"
		path := filepath.Join(t.TempDir(), "exclude.csv")
		if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
			t.Fatal(err)
		}
		ids, unknown, err := idTable(t.Context(), path, e)
		if err != nil || unknown != 1 {
			t.Fatalf("idTable: %d unknown, %v", unknown, err)
		}
		fromFile := make([]bool, len(e.it.asin))
		for _, x := range ids {
			fromFile[x] = true
		}
		if !slices.Equal(fromFile, excluded) {
			t.Fatal("the exclude table read other ids than written")
		}
		l := lists(t, publishParams{}, fromFile, e.cand)
		checkAgainstRef(t, "exclude", fit, proj, e.cand, k, l, func(_, y int32) bool { return excluded[y] }, nil)
	})
	t.Run("queries", func(t *testing.T) {
		qs := []int32{e.cand[len(e.cand)-1], e.cand[0], e.cand[7], e.cand[0]}
		path := filepath.Join(t.TempDir(), "queries.csv")
		var b strings.Builder
		b.WriteString("asin,comment\n")
		for _, q := range qs {
			b.WriteString(e.it.asin[q] + ",x\r\n")
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		ids, _, err := idTable(t.Context(), path, e)
		if err != nil {
			t.Fatal(err)
		}
		if want := []int32{e.cand[0], e.cand[7], e.cand[len(e.cand)-1]}; !slices.Equal(ids, want) {
			t.Fatalf("queries %v, want %v", ids, want)
		}
		l := lists(t, publishParams{}, nil, ids)
		if len(l) != 3 {
			t.Fatalf("%d lists for 3 queries", len(l))
		}
		for _, q := range ids {
			if !slices.EqualFunc(l[q], got[q], func(a, b models.Hit) bool { return a.Item == b.Item && a.Prob == b.Prob && a.Space == b.Space }) {
				t.Fatalf("query %d: list %v, the whole table's %v", q, l[q], got[q])
			}
		}
		// A blank line is skipped, as in the catalogue's CSV tables; an
		// empty id is bad input at its line.
		os.WriteFile(path, []byte("id\nB1\n\n\"\"\nB2\n"), 0o644)
		if _, _, err := idTable(t.Context(), path, e); !errors.Is(err, pipeline.ErrBadInput) || !strings.Contains(err.Error(), "line 4") {
			t.Fatalf("an empty id: %v, want bad input at line 4", err)
		}
	})

	// Every rule at once from the job file: the node reads the tables it
	// names, and its stats count what they dropped.
	t.Run("job rules", func(t *testing.T) {
		data := t.TempDir()
		ex := "id\n" + e.it.asin[e.cand[1]] + "\n" + e.it.asin[e.cand[2]] + "\nNOPE\n"
		qs := "id\n" + e.it.asin[e.cand[0]] + "\n" + e.it.asin[e.cand[5]] + "\n"
		if err := os.WriteFile(filepath.Join(data, "ex.csv"), []byte(ex), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, "q.csv"), []byte(qs), 0o644); err != nil {
			t.Fatal(err)
		}
		rules := publishJob(t, "", "  cross_subcategory: true\n  min_probability: 0.5\n  exclude: "+filepath.Join(data, "ex.csv")+
			"\n  queries: "+filepath.Join(data, "q.csv")+"\n")
		// The upstream nodes are those of dir: copy nothing, run publish
		// alone in dir and read its table before the next subtest.
		_, sum, err := runPublish(t, rules, "", "", pipeline.Options{RunDir: dir, Only: "publish"})
		if err != nil || !slices.Contains(sum.Stages.Run, "men-image/publish") {
			t.Fatalf("%v %+v", err, sum.Stages)
		}
		l, order := readPublished(t, table, row)
		if len(order) > 2 {
			t.Fatalf("lists of %v, want at most the 2 queries", order)
		}
		want := lists(t, publishParams{Cross: true, MinProb: 0.5}, func() []bool {
			x := make([]bool, len(e.it.asin))
			x[e.cand[1]], x[e.cand[2]] = true, true
			return x
		}(), []int32{e.cand[0], e.cand[5]})
		for _, q := range []int32{e.cand[0], e.cand[5]} {
			if !slices.EqualFunc(l[q], want[q], func(a, b models.Hit) bool { return a.Item == b.Item && a.Prob == b.Prob }) {
				t.Errorf("query %d: %v, want %v", q, l[q], want[q])
			}
		}
		m := must(cache.ReadManifest(filepath.Join(dir, "men-image", "publish")))(t)
		if m.Stats["exclude_unknown"] != 1.0 || m.Stats["excluded"] != 2.0 || m.Stats["queries"] != 2.0 {
			t.Errorf("stats %v", m.Stats)
		}
		// Back to the plain block for the subtests after this one.
		if _, _, err := runPublish(t, j, "", "", pipeline.Options{RunDir: dir, Only: "publish"}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("gomaxprocs", func(t *testing.T) {
		want, err := os.ReadFile(table)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []int{2, 7} {
			runtime.GOMAXPROCS(p)
			if _, _, err := runPublish(t, j, "", "", pipeline.Options{RunDir: dir, Only: "publish", Force: true}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(table)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, want) {
				t.Errorf("publish/%s differs between GOMAXPROCS 1 and %d", publishedFile, p)
			}
		}
	})
}

// TestChurnHand checks churn.parquet and its summary on two small tables
// worked out by hand.
func TestChurnHand(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lists map[string][]string) string {
		var c schema.PublishedCols
		for _, q := range slices.Sorted(maps.Keys(lists)) {
			for r, it := range lists[q] {
				c.Query, c.Rank, c.Item = append(c.Query, q), append(c.Rank, int32(r+1)), append(c.Item, it)
				c.Probability, c.Space, c.SameSubcategory = append(c.Probability, 0.5), append(c.Space, 0), append(c.SameSubcategory, false)
			}
		}
		p := filepath.Join(dir, name)
		if _, err := schema.Write(p, c); err != nil {
			t.Fatal(err)
		}
		return p
	}
	prev := write("prev.parquet", map[string][]string{
		"A": {"x", "y", "z"}, // → x, y, w: overlap 2, Jaccard 2/4
		"B": {"p", "q"},      // same: 2, 1
		"C": {"u"},           // removed: changed, Jaccard 0
	})
	cur := write("cur.parquet", map[string][]string{
		"A": {"x", "y", "w"},
		"B": {"p", "q"},
		"D": {"v"}, // added
	})
	out := filepath.Join(dir, "churn.parquet")
	cs, n, err := writeChurn(t.Context(), prev, cur, out, 3)
	if err != nil || n != 4 {
		t.Fatalf("writeChurn: %d rows, %v", n, err)
	}
	// Over the previous run's three queries: A changed, B did not, C is
	// gone; (0.5 + 1 + 0) / 3.
	want := churnStats{Common: 2, Added: 1, Removed: 1, ChangedShare: 2.0 / 3, MeanJaccard: 0.5}
	if cs != want {
		t.Errorf("stats %+v, want %+v", cs, want)
	}
	tb := open(t, out)
	if q := must(tb.Strings("query"))(t); !slices.Equal(q, []string{"A", "B", "C", "D"}) {
		t.Errorf("queries %v", q)
	}
	if o := must(tb.Int32s("overlap"))(t); !slices.Equal(o, []int32{2, 2, 0, 0}) {
		t.Errorf("overlap %v", o)
	}
	if j := must(tb.Float64s("jaccard"))(t); !slices.Equal(j, []float64{0.5, 1, 0, 0}) {
		t.Errorf("jaccard %v", j)
	}
	if p := must(tb.Bools("in_previous"))(t); !slices.Equal(p, []bool{true, true, true, false}) {
		t.Errorf("in_previous %v", p)
	}
	if c := must(tb.Bools("in_current"))(t); !slices.Equal(c, []bool{true, true, false, true}) {
		t.Errorf("in_current %v", c)
	}
	// At k 2 the lists of A agree in full: (1 + 1 + 0) / 3.
	cs, _, err = writeChurn(t.Context(), prev, cur, out, 2)
	if err != nil || cs.MeanJaccard != 2.0/3 {
		t.Errorf("k 2: mean Jaccard %v, %v; want 2/3", cs.MeanJaccard, err)
	}
}

// TestPublishGate: the first run of a root is promoted; a worse model
// (max_iter 1) against it exits with ErrNotPromoted, writes gate.json and
// leaves the link and the published table untouched, again when rerun; a
// run without --run-id promotes nothing.
func TestPublishGate(t *testing.T) {
	root := t.TempDir()
	good := publishJob(t, "", "  gate: {max_error_increase: 0.0, min_coverage: 0.01}\n")
	if _, _, err := runPublish(t, good, root, "n1", pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "published", "men-image")
	if target, err := os.Readlink(link); err != nil || target != filepath.Join("..", "n1", "men-image") {
		t.Fatalf("after the first run the link is %q, %v", target, err)
	}
	g1 := must(readGate(filepath.Join(root, "n1", "men-image", "publish", gateFile)))(t)
	if g1.Decision != "promote" || g1.Previous != "" || g1.TestError == nil {
		t.Fatalf("first gate %+v", g1)
	}
	published := filepath.Join(link, "publish", publishedFile)
	before := must(os.ReadFile(published))(t)

	worse := publishJob(t, "1", "  gate: {max_error_increase: 0.0, min_coverage: 0.01}\n")
	store := filepath.Join(t.TempDir(), "store")
	for _, rerun := range []bool{false, true} {
		_, sum, err := runPublish(t, worse, root, "n2", pipeline.Options{Store: store})
		if !errors.Is(err, ErrNotPromoted) {
			t.Fatalf("rerun %v: %v, want ErrNotPromoted", rerun, err)
		}
		if rerun && !slices.Contains(sum.Stages.Skipped, "men-image/publish") {
			t.Errorf("rerun: publish was not up to date: %+v", sum.Stages)
		}
		if target, _ := os.Readlink(link); target != filepath.Join("..", "n1", "men-image") {
			t.Fatalf("refused run moved the link to %q", target)
		}
		if b := must(os.ReadFile(published))(t); !bytes.Equal(b, before) {
			t.Fatal("the published table changed")
		}
		// The refusal fails publish alone: the report still runs (issue
		// 52 item 6), and marks the experiment with the gate's figures.
		if !slices.Contains(slices.Concat(sum.Stages.Run, sum.Stages.Skipped), "report") || slices.Contains(sum.Stages.Blocked, "report") {
			t.Fatalf("rerun %v: the report did not run after the refusal: %+v", rerun, sum.Stages)
		}
		page := string(must(os.ReadFile(filepath.Join(root, "n2", "report", "index.html")))(t))
		for _, want := range []string{"men-image (not promoted)", "<b>Not promoted</b>", "published/men-image</code> stays at run n1",
			"<td>test_error_increase</td>", "<td><b>no</b></td>"} {
			if !strings.Contains(page, want) {
				t.Errorf("the refused run's report has no %q", want)
			}
		}
		tables := string(must(os.ReadFile(filepath.Join(root, "n2", "report", "tables.md")))(t))
		if !strings.Contains(tables, "- men-image: not promoted: the publish gate refused its monomer lists (test_error_increase ") {
			t.Errorf("tables.md does not mark the refusal:\n%s", tables)
		}
	}
	if page := string(must(os.ReadFile(filepath.Join(root, "n1", "report", "index.html")))(t)); strings.Contains(page, "not promoted") ||
		!strings.Contains(page, "<p class=\"note\">Promoted: no published run to compare with; coverage holds.</p>") {
		t.Error("the promoted run's report does not say it was promoted")
	}
	// Restored from the store, it refuses again.
	if err := os.RemoveAll(filepath.Join(root, "n2", "men-image", "publish")); err != nil {
		t.Fatal(err)
	}
	_, sum, err := runPublish(t, worse, root, "n2", pipeline.Options{Store: store})
	if !errors.Is(err, ErrNotPromoted) || !slices.Contains(sum.Stages.Restored, "men-image/publish") {
		t.Fatalf("restored: %v, %+v", err, sum.Stages)
	}
	if target, _ := os.Readlink(link); target != filepath.Join("..", "n1", "men-image") {
		t.Fatalf("restored refused run moved the link to %q", target)
	}
	g2 := must(readGate(filepath.Join(root, "n2", "men-image", "publish", gateFile)))(t)
	if g2.Decision != "refuse" || g2.Previous != "n1" || *g2.TestError <= *g2.PreviousError || len(g2.Checks) != 2 || g2.Checks[1].Pass {
		t.Fatalf("refusing gate %+v", g2)
	}
	if _, err := os.Stat(filepath.Join(root, "n2", "men-image", "publish", churnFile)); err != nil {
		t.Fatal(err)
	}

	// The good model as a third night: compared with n1, promoted.
	if _, _, err := runPublish(t, good, root, "n3", pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	if target, _ := os.Readlink(link); target != filepath.Join("..", "n3", "men-image") {
		t.Fatalf("link %q after n3", target)
	}
	// Rerun of n3: the link names n3 itself, but the predecessor is still
	// n1 (its gate.json), so nothing reruns and it stays promoted.
	_, sum, err = runPublish(t, good, root, "n3", pipeline.Options{})
	if err != nil || !slices.Contains(sum.Stages.Skipped, "men-image/publish") {
		t.Fatalf("rerun of n3: %v, %+v", err, sum.Stages)
	}

	// n3 forced to run again while the link serves it: refused before its
	// lists are rewritten under the shop's readers; the table stays.
	served := filepath.Join(root, "n3", "men-image", "publish", publishedFile)
	before = must(os.ReadFile(served))(t)
	if _, _, err := runPublish(t, good, root, "n3", pipeline.Options{Force: true, Only: "publish"}); !errors.Is(err, pipeline.ErrUsage) || !strings.Contains(err.Error(), "serves this run's lists") {
		t.Fatalf("forced rerun of the served run: %v", err)
	}
	if after := must(os.ReadFile(served))(t); !bytes.Equal(before, after) {
		t.Fatal("the served table changed")
	}

	// n1 again, now that the link names n3: it keys by the predecessor it
	// recorded (none), so it is up to date, but the link is not moved back
	// to it: its gate never compared it with n3, which is served.
	_, sum, err = runPublish(t, good, root, "n1", pipeline.Options{})
	if !errors.Is(err, ErrNotPromoted) || !slices.Contains(sum.Stages.Skipped, "men-image/publish") {
		t.Fatalf("rerun of n1: %v, %+v", err, sum.Stages)
	}
	if target, _ := os.Readlink(link); target != filepath.Join("..", "n3", "men-image") {
		t.Fatalf("link %q after rerunning n1", target)
	}

	// Without --run-id: the figures, no link.
	plain := t.TempDir()
	// Coverage above 1 cannot hold: the gate refuses, yet with no root to
	// promote in the run succeeds.
	noRoot := publishJob(t, "", "  gate: {min_coverage: 1.0}\n")
	dir, sum, err := runPublish(t, noRoot, "", "", pipeline.Options{RunDir: plain})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(sum.Stages.Run, "men-image/publish") {
		t.Fatalf("no publish node ran: %+v", sum.Stages)
	}
	if g := must(readGate(filepath.Join(dir, "men-image", "publish", gateFile)))(t); g.Promotable || g.Previous != "" || g.Decision != "refuse" {
		t.Fatalf("gate without a root %+v", g)
	}
	if _, err := os.Lstat(filepath.Join(plain, "published")); err == nil {
		t.Fatal("a run without --run-id made a published directory")
	}
}

// TestPointLinkConcurrent: experiments promoted at once each move only
// their own link, and while a new link waits to be renamed in, the old one
// still names the old run.
func TestPointLinkConcurrent(t *testing.T) {
	root := t.TempDir()
	exps := []string{"a", "b", "c", "d"}
	for _, e := range exps {
		if err := pointLink(root, "old", e, ""); err != nil {
			t.Fatal(err)
		}
	}
	// What a promotion killed before its rename leaves: the next one
	// removes it.
	crashed := filepath.Join(root, "published", ".a.tmp-99999")
	if err := os.Symlink(linkTarget("dead", "a"), crashed); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := 0
	promoteHook = func(point, exp string) {
		if point != "linked" {
			return
		}
		if target, err := os.Readlink(linkPath(root, exp)); err != nil || target != linkTarget("old", exp) {
			t.Errorf("%s mid-promotion: link %q, %v", exp, target, err)
		}
		mu.Lock()
		seen++
		mu.Unlock()
	}
	defer func() { promoteHook = func(string, string) {} }()
	var wg sync.WaitGroup
	for _, e := range exps {
		wg.Go(func() {
			if err := pointLink(root, "new-"+e, e, "old"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if seen != len(exps) {
		t.Fatalf("%d promotions seen", seen)
	}
	for _, e := range exps {
		if target, _ := os.Readlink(linkPath(root, e)); target != linkTarget("new-"+e, e) {
			t.Errorf("%s: link %q", e, target)
		}
	}
	ents := must(os.ReadDir(filepath.Join(root, "published")))(t)
	if len(ents) != len(exps)+1 { // the links and the lock
		t.Errorf("published holds %d entries", len(ents))
	}
}

// TestPromotionKilled kills a process (SIGKILL) between making the new
// link and renaming it over the old: the link still names the old run, and
// the next promotion moves it and removes what the dead one left.
func TestPromotionKilled(t *testing.T) {
	if root := os.Getenv("MONOMER_TEST_PROMOTE_ROOT"); root != "" {
		promoteHook = func(point, _ string) {
			if point == "linked" {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
		pointLink(root, "new", "a", "old")
		os.Exit(0) // not reached: the hook kills the process
	}
	root := t.TempDir()
	if err := pointLink(root, "old", "a", ""); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPromotionKilled$")
	cmd.Env = append(os.Environ(), "MONOMER_TEST_PROMOTE_ROOT="+root)
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed: %v", err)
	}
	if target, err := os.Readlink(linkPath(root, "a")); err != nil || target != linkTarget("old", "a") {
		t.Fatalf("after the kill the link is %q, %v", target, err)
	}
	if left, _ := filepath.Glob(filepath.Join(root, "published", ".a.tmp-*")); len(left) != 1 {
		t.Fatalf("the killed promotion left %v", left)
	}
	if err := pointLink(root, "new", "a", "old"); err != nil {
		t.Fatal(err)
	}
	if target, _ := os.Readlink(linkPath(root, "a")); target != linkTarget("new", "a") {
		t.Fatalf("link %q after the next promotion", target)
	}
	if left, _ := filepath.Glob(filepath.Join(root, "published", ".a.tmp-*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// TestPointLinkOnlyForward: the link moves only from the run this run was
// compared with; a rerun of an older night (compared with an older run)
// does not move it back, and nothing but monomer's own link and lock at
// their names is replaced, followed or removed.
func TestPointLinkOnlyForward(t *testing.T) {
	root := t.TempDir()
	for _, id := range []string{"d1", "d2", "d3", "d4", "d5", "x"} {
		if err := os.MkdirAll(filepath.Join(root, id, "a"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []struct{ run, prev string }{{"d1", ""}, {"d2", "d1"}, {"d3", "d2"}} {
		if err := pointLink(root, step.run, "a", step.prev); err != nil {
			t.Fatalf("%s after %q: %v", step.run, step.prev, err)
		}
	}
	// d2 rerun: compared with d1, the link names d3.
	if err := pointLink(root, "d2", "a", "d1"); !errors.Is(err, ErrNotPromoted) || !strings.Contains(err.Error(), "another run was published since") {
		t.Errorf("old night rerun: %v", err)
	}
	if err := pointLink(root, "d3", "a", "d2"); err != nil { // already there
		t.Errorf("rerun of the published night: %v", err)
	}
	if target, _ := os.Readlink(linkPath(root, "a")); target != linkTarget("d3", "a") {
		t.Errorf("link %q, want d3's", target)
	}
	// A first run (no predecessor) meets a link another run made meanwhile.
	if err := pointLink(root, "x", "a", ""); !errors.Is(err, ErrNotPromoted) {
		t.Errorf("first run over a published link: %v", err)
	}

	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(root, "published")
	// A user's file and directory at an experiment's name stay.
	if err := os.WriteFile(filepath.Join(pub, "b"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(pub, "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"b", "c"} {
		if err := pointLink(root, "d1", e, ""); !errors.Is(err, pipeline.ErrUsage) {
			t.Errorf("%s: %v, want a usage error", e, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(pub, "b")); string(b) != "mine\n" {
		t.Errorf("the user's file became %q", b)
	}
	// A temporary name holding a user's file is not removed.
	if err := os.WriteFile(filepath.Join(pub, ".a.tmp-1"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := pointLink(root, "d4", "a", "d3"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(pub, ".a.tmp-1")); err != nil {
		t.Errorf("a regular file at a temporary name: %v", err)
	}
	// The lock through a symbolic link, or holding bytes, is not used.
	lock := filepath.Join(pub, pipeline.LockName)
	os.Remove(lock)
	if err := os.Symlink(victim, lock); err != nil {
		t.Fatal(err)
	}
	if err := pointLink(root, "d5", "a", "d4"); !errors.Is(err, pipeline.ErrUsage) {
		t.Errorf("lock through a link: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "notes\n" {
		t.Errorf("the link's target became %q", b)
	}
	os.Remove(lock)
	if err := os.WriteFile(lock, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := pointLink(root, "d5", "a", "d4"); !errors.Is(err, pipeline.ErrUsage) {
		t.Errorf("lock holding bytes: %v", err)
	}
}

// TestPointLinkForeign: a published link monomer did not make (pointing
// out of the root) or a link at published itself is refused with a usage
// error and left; a link whose run was deleted (a retention job) is
// replaced, since nothing is served through it.
func TestPointLinkForeign(t *testing.T) {
	root := t.TempDir()
	for _, id := range []string{"n1", "n2"} {
		if err := os.MkdirAll(filepath.Join(root, id, "a"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pub := filepath.Join(root, "published")
	if err := os.Mkdir(pub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/tmp/elsewhere", "../../other/a", "../n1/b"} {
		link := filepath.Join(pub, "a")
		os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if err := pointLink(root, "n2", "a", ""); !errors.Is(err, pipeline.ErrUsage) {
			t.Errorf("link to %s: %v, want a usage error", target, err)
		}
		if got, _ := os.Readlink(link); got != target {
			t.Errorf("link to %s became %s", target, got)
		}
	}
	// Its run deleted: promoted over.
	os.Remove(filepath.Join(pub, "a"))
	if err := os.Symlink(linkTarget("gone", "a"), filepath.Join(pub, "a")); err != nil {
		t.Fatal(err)
	}
	if err := pointLink(root, "n2", "a", ""); err != nil {
		t.Errorf("over a link to a deleted run: %v", err)
	}
	// published itself a link to another folder: not followed.
	other := filepath.Join(t.TempDir(), "foreign")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	root2 := t.TempDir()
	if err := os.Symlink(other, filepath.Join(root2, "published")); err != nil {
		t.Fatal(err)
	}
	if err := pointLink(root2, "n1", "a", ""); !errors.Is(err, pipeline.ErrUsage) {
		t.Errorf("published a link: %v", err)
	}
	if ents, _ := os.ReadDir(other); len(ents) != 0 {
		t.Errorf("the link's folder now holds %d entries", len(ents))
	}
}

// TestIDTable: an exclude or queries table is CSV as the catalogue's
// tables are: a quoted id may hold a comma, a quote or a line break; ids
// are trimmed; unknown ids and items without features are counted.
func TestIDTable(t *testing.T) {
	e := &recExperiment{it: &items{asin: []string{"A", "SKU,1", "SKU\"2", "x\ny", "Z"}}, cand: []int32{0, 1, 2, 3}}
	p := filepath.Join(t.TempDir(), "ex.csv")
	if err := os.WriteFile(p, []byte("id,why\r\n\"SKU,1\",banned\r\n \"SKU\"\"2\"\n\"x\ny\"\nZ\nnope,x\n A \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, unknown, err := idTable(t.Context(), p, e)
	if err != nil || !slices.Equal(got, []int32{0, 1, 2, 3}) || unknown != 2 {
		t.Errorf("ids %v, %d unknown, %v; want [0 1 2 3], 2 (Z has no features, nope is no item)", got, unknown, err)
	}
	if err := os.WriteFile(p, []byte("id\n\"open\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := idTable(t.Context(), p, e); !errors.Is(err, pipeline.ErrBadInput) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("an unclosed quote: %v", err)
	}
}

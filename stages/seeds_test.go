package stages

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"monomer/job"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// seedsJob is the test job's image experiment under seed (a "seed: 7"
// line) or seeds.
func seedsJob(t *testing.T, seedLine string) *job.Job {
	t.Helper()
	data, err := filepath.Abs(testData)
	if err != nil {
		t.Fatal(err)
	}
	text := testJob[:strings.Index(testJob, "  - name: women-bow")]
	text = strings.Replace(text, "seed: 7\n", seedLine+"\n", 1)
	j, err := job.Parse(filepath.Join(t.TempDir(), "job.yaml"), []byte(strings.ReplaceAll(text, "DATA", data)))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// seedTables are the tables of the stages run once per seed, by node
// directory relative to the experiment.
func seedTables(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for rel, b := range parquetFiles(t, filepath.Join(dir, "men-image")) {
		if node, _, _ := strings.Cut(rel, string(filepath.Separator)); strings.HasPrefix(node, "ingest") || strings.HasPrefix(node, "features") {
			continue
		}
		out[rel] = b
	}
	return out
}

// TestSeeds runs the image experiment with seeds [7, 2]: its first seed's
// nodes are those of a seed: 7 job and its second's, named <node>.s2, those
// of a seed: 2 job, byte for byte; a rerun runs nothing and changes no
// byte; the job metrics hold the spread over both seeds, and the
// comparisons McNemar's counts over both seeds' test pairs.
func TestSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the image experiment three times")
	}
	ctx := context.Background()
	both, one7, one2 := t.TempDir(), t.TempDir(), t.TempDir()
	runJob(t, seedsJob(t, "seeds: [7, 2]"), both)
	runJob(t, seedsJob(t, "seed: 7"), one7)
	runJob(t, seedsJob(t, "seed: 2"), one2)

	got := seedTables(t, both)
	first, second := seedTables(t, one7), seedTables(t, one2)
	if len(first) < 8 {
		t.Fatalf("%d tables of the seeded stages", len(first))
	}
	for rel, b := range first {
		if !bytes.Equal(got[rel], b) {
			t.Errorf("%s of seeds [7, 2] differs from that of seed: 7", rel)
		}
		node, file, _ := strings.Cut(rel, string(filepath.Separator))
		tagged := filepath.Join(node+".s2", file)
		if !bytes.Equal(got[tagged], second[rel]) {
			t.Errorf("%s of seeds [7, 2] differs from %s of seed: 2", tagged, rel)
		}
		// The positives are the graph's edges, whatever the seed.
		if bytes.Equal(b, second[rel]) && file != "positives.parquet" {
			t.Errorf("%s: seeds 7 and 2 wrote the same bytes", rel)
		}
	}
	// The first seed's nodes are keyed as seed: 7's, so that adding seeds
	// to a finished run reruns none of them.
	for _, node := range []string{"negatives", "split", "train.lmt", "train.monomer", "evaluate", "recommend"} {
		a := must(cache.ReadManifest(filepath.Join(both, "men-image", node)))(t)
		b := must(cache.ReadManifest(filepath.Join(one7, "men-image", node)))(t)
		if a.Key != b.Key {
			t.Errorf("%s of seeds [7, 2] is keyed %s, of seed: 7 %s", node, a.Key, b.Key)
		}
	}
	if len(got) != 2*len(first) {
		t.Errorf("%d tables of the seeded stages with two seeds, want %d", len(got), 2*len(first))
	}

	before := parquetFiles(t, both)
	sum, err := runStages(ctx, seedsJob(t, "seeds: [7, 2]"), Experiment(), Job(), pipeline.Options{RunDir: both, RunID: runID(both) + "-again"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Run != 0 || sum.Restored != 0 || sum.Skipped == 0 {
		t.Errorf("rerun: %+v, want every node up to date", sum)
	}
	after := parquetFiles(t, both)
	if len(after) != len(before) {
		t.Errorf("%d tables after the rerun, %d before", len(after), len(before))
	}
	for rel, b := range before {
		if !bytes.Equal(after[rel], b) {
			t.Errorf("%s changed on the rerun", rel)
		}
	}

	// The job metrics: error is the first seed's, error_mean and error_sd
	// those of both seeds' evaluate metrics.
	jm := must(schema.ReadAll[schema.JobMetricsCols](ctx, filepath.Join(both, "metrics.parquet")))(t)
	errOf := func(dir, model, split string) float64 {
		var c schema.MetricsCols
		if err := schema.ReadFields(ctx, dir, &c, &c.Model, &c.Split, &c.Error, &c.Selected); err != nil {
			t.Fatal(err)
		}
		for i := range c.Model {
			if c.Model[i] == model && c.Split[i] == split && c.Selected[i] {
				return c.Error[i]
			}
		}
		t.Fatalf("%s: no %s %s", dir, model, split)
		return 0
	}
	for i, m := range jm.Model {
		e7 := errOf(filepath.Join(both, "men-image", "evaluate", "metrics.parquet"), m, jm.Split[i])
		e2 := errOf(filepath.Join(both, "men-image", "evaluate.s2", "metrics.parquet"), m, jm.Split[i])
		mean, sd := (e7+e2)/2, math.Abs(e7-e2)/math.Sqrt2
		if jm.Seeds[i] != 2 || jm.Error[i] != e7 || math.Abs(jm.ErrorMean[i]-mean) > 1e-15 || math.Abs(jm.ErrorSD[i]-sd) > 1e-15 {
			t.Errorf("%s %s: seeds %d error %v mean %v sd %v, want 2 %v %v %v", m, jm.Split[i], jm.Seeds[i], jm.Error[i], jm.ErrorMean[i], jm.ErrorSD[i], e7, mean, sd)
		}
	}
	one := must(schema.ReadAll[schema.JobMetricsCols](ctx, filepath.Join(one7, "metrics.parquet")))(t)
	if one.Seeds[0] != 1 || one.ErrorMean[0] != one.Error[0] || !math.IsNaN(one.ErrorSD[0]) {
		t.Errorf("one seed: seeds %d mean %v (error %v) sd %v, want 1, the error, NaN", one.Seeds[0], one.ErrorMean[0], one.Error[0], one.ErrorSD[0])
	}

	// The comparisons: McNemar's counts over both seeds' test pairs.
	cmp := must(schema.ReadAll[schema.ComparisonsCols](ctx, filepath.Join(both, "comparisons.parquet")))(t)
	pairs := [][2]string{{"monomer", "lmt"}, {"monomer", "wnn"}, {"lmt", "wnn"}}
	if len(cmp.ModelA) != len(pairs) {
		t.Fatalf("%d comparisons, want %d", len(cmp.ModelA), len(pairs))
	}
	right := map[string][]bool{}
	for _, node := range []string{"evaluate", "evaluate.s2"} {
		var c schema.PredictionsCols
		if err := schema.ReadFields(ctx, filepath.Join(both, "men-image", node, "predictions.parquet"), &c, &c.Model, &c.Split, &c.Label, &c.Predicted); err != nil {
			t.Fatal(err)
		}
		for i, m := range c.Model {
			if c.Split[i] == "test" {
				right[m] = append(right[m], c.Label[i] == c.Predicted[i])
			}
		}
	}
	for k, p := range pairs {
		a, b := right[p[0]], right[p[1]]
		var onlyA, onlyB int64
		for i := range a {
			if a[i] && !b[i] {
				onlyA++
			}
			if b[i] && !a[i] {
				onlyB++
			}
		}
		if cmp.Experiment[k] != "men-image" || cmp.ModelA[k] != p[0] || cmp.ModelB[k] != p[1] || cmp.Seeds[k] != 2 ||
			cmp.Pairs[k] != int64(len(a)) || cmp.AOnly[k] != onlyA || cmp.BOnly[k] != onlyB || !(cmp.PValue[k] > 0 && cmp.PValue[k] <= 1) {
			t.Errorf("comparison %d: %s %s vs %s seeds %d pairs %d only %d/%d p %v; want %v over %d pairs, only %d/%d",
				k, cmp.Experiment[k], cmp.ModelA[k], cmp.ModelB[k], cmp.Seeds[k], cmp.Pairs[k], cmp.AOnly[k], cmp.BOnly[k], cmp.PValue[k], p, len(a), onlyA, onlyB)
		}
	}
	if root, rep := must(os.ReadFile(filepath.Join(both, "comparisons.parquet")))(t), must(os.ReadFile(filepath.Join(both, "report", "comparisons.parquet")))(t); !bytes.Equal(root, rep) {
		t.Error("comparisons.parquet at the run directory's root is not report's")
	}
	tables := string(must(os.ReadFile(filepath.Join(both, "report", "tables.md")))(t))
	if !strings.Contains(tables, "Seeds: 7, 2") || !strings.Contains(tables, " ± ") || !slices.ContainsFunc(strings.Split(tables, "\n"), func(l string) bool {
		return strings.HasPrefix(l, "| men-image | Monomer | LMT | ")
	}) {
		t.Errorf("tables.md shows no spread or paired test:\n%s", tables)
	}
	checkTablesAgree(t, both)
	checkTablesAgree(t, one7)
	page := string(must(os.ReadFile(filepath.Join(both, "report", "index.html")))(t))
	if !strings.Contains(page, "<h2>Over seeds and paired tests</h2>") || !strings.Contains(page, "<td>men-image</td><td>Monomer</td><td>LMT</td>") {
		t.Error("index.html shows no spread or paired test")
	}
}

package stages

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"monomer/imagefeat"
	"monomer/job"
	"monomer/models"
	"monomer/pipeline"
	"monomer/schema"
	"monomer/synth"
)

// write2023World writes the planted world of scale (shrunk by fraction, at
// feature dimension dim) in the 2023 layout to a temporary directory.
func write2023World(t *testing.T, scale string, fraction float64, dim int) (*synth.World, string) {
	t.Helper()
	cfg, err := synth.Scale(scale)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = cfg.Shrunk(fraction); err != nil {
		t.Fatal(err)
	}
	cfg.FeatureDim = dim
	w, err := synth.NewWorld(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := synth.Write2023(t.Context(), dir, w.Config.Name, w, synth.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return w, dir
}

// load2023Job loads jobs/synthetic-2023.yaml with its data in dir.
func load2023Job(t *testing.T, dir string) *job.Job {
	t.Helper()
	j, err := job.Load("../jobs/synthetic-2023.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j.DataDir = dir
	return j
}

// coReviewRecovery compares the co_review edges ingest derived for
// experiment exp of the run in dir with the world's planted also_bought
// edges between the experiment's items: the share of derived edges that
// are planted (precision) and of planted edges derived (recall).
func coReviewRecovery(t *testing.T, w *synth.World, dir, exp string) (precision, recall float64, derived, planted int) {
	t.Helper()
	in := runInputs(dir, exp)
	it, err := readItems(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	rows := it.rows()
	type pair struct{ x, y int32 }
	truth := map[pair]bool{}
	for _, e := range w.Edges(synth.AlsoBought) {
		x, okx := rows[w.Items[e.Src].ASIN]
		y, oky := rows[w.Items[e.Dst].ASIN]
		if okx && oky {
			truth[pair{x, y}] = true
		}
	}
	edges, err := readEdges(context.Background(), in, "ingest", "edges.parquet")
	if err != nil {
		t.Fatal(err)
	}
	hit := 0
	for _, e := range edges {
		if truth[pair{e.Src, e.Dst}] {
			hit++
		}
	}
	return float64(hit) / float64(len(edges)), float64(hit) / float64(len(truth)), len(edges), len(truth)
}

// TestSynth2023EndToEnd runs jobs/synthetic-2023.yaml on a small world
// that monomer gen --format 2023 would write (tiny, 64-d features): the
// 2023 reader, the co_review graph and the embeddings features through
// training, evaluation and recommendations. co_review must recover most
// of the planted relation and little else (an edge with one buyer is out
// of its reach at two users: e^-2 of them), the embeddings must reach
// every item of the experiment that has an image record, and the learned
// models must beat WNN and CT on the derived graph. Figures at the small
// scale are in docs/notes/2026-11-25-planted-2023-layout.md.
func TestSynth2023EndToEnd(t *testing.T) {
	w, dir := write2023World(t, "tiny", 1, 64)
	j := load2023Job(t, dir)
	j.Experiments = j.Experiments[:1] // Men
	j.Settings.Lambdas = []float64{1e-4}
	j.Settings.MaxIter = 100
	if err := j.Validate(); err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	through := slices.IndexFunc(Experiment(), func(s Stage) bool { return s.Name() == Recommend{}.Name() })
	if _, err := runStages(t.Context(), j, Experiment()[:through+1], nil, pipeline.Options{RunDir: run}); err != nil {
		t.Fatal(err)
	}
	exp := j.Experiments[0].Name

	p, r, nd, np := coReviewRecovery(t, w, run, exp)
	t.Logf("co_review: %d edges, %d planted: precision %.3f, recall %.3f", nd, np, p, r)
	if p < 0.95 || r < 0.75 || r > 0.95 {
		t.Errorf("co_review precision %.3f, recall %.3f: want at least 0.95 and 0.75-0.95", p, r)
	}

	// Every image item of the experiment has a vector; the rest of the
	// file (other tops, orphans) are ids that are not items.
	it, err := readItems(t.Context(), runInputs(run, exp))
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, x := range w.Items {
		if x.HasImage && slices.Contains(it.asin, x.ASIN) {
			want++
		}
	}
	keep, err := readFeatureItems(t.Context(), runInputs(run, exp), len(it.asin))
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, k := range keep {
		if k {
			got++
		}
	}
	if got != want || got == 0 {
		t.Errorf("%d items with features, want the %d with an image record", got, want)
	}
	m, err := imagefeat.OpenMatrix(filepath.Join(run, exp, "features", imageMatrixFile))
	if err != nil {
		t.Fatal(err)
	}
	if m.Dim() != 64 || m.Rows() != len(it.asin) {
		t.Errorf("matrix %d×%d, want %d×64", m.Rows(), m.Dim(), len(it.asin))
	}
	m.Close()

	errs, _ := testPredictions(t, filepath.Join(run, exp, "evaluate", "predictions.parquet"))
	t.Logf("test errors %v", errs)
	for _, model := range []string{"lmt", "monomer"} {
		if errs[model] > errs["wnn"]-0.03 || errs[model] > errs["ct"]-0.03 {
			t.Errorf("%s test error %.3f: want 3 points below WNN (%.3f) and CT (%.3f)", model, errs[model], errs["wnn"], errs["ct"])
		}
	}
	if errs["monomer"] > errs["lmt"]+0.01 {
		t.Errorf("Monomer test error %.3f, LMT %.3f: want Monomer no worse", errs["monomer"], errs["lmt"])
	}
}

// TestSynth2023BadEmbeddings: an embeddings file with a NaN row fails the
// features stage as bad input (exit 3) at the default reject ratio,
// naming the file and the row.
func TestSynth2023BadEmbeddings(t *testing.T) {
	_, dir := write2023World(t, "tiny", 0.3, 8)
	path := filepath.Join(dir, "embeddings_Clothing_Shoes_and_Jewelry.parquet")
	var c schema.EmbeddingsCols
	for b, err := range schema.Batches[schema.EmbeddingsCols](context.Background(), path) {
		if err != nil {
			t.Fatal(err)
		}
		c.ParentASIN, c.Embedding = append(c.ParentASIN, b.ParentASIN...), append(c.Embedding, b.Embedding...)
	}
	c.Embedding[3][5] = float32(math.NaN())
	if _, err := schema.Write(path, c); err != nil {
		t.Fatal(err)
	}
	j := load2023Job(t, dir)
	j.Experiments = j.Experiments[:1]
	through := slices.IndexFunc(Experiment(), func(s Stage) bool { return s.Name() == Features{}.Name() })
	_, err := runStages(t.Context(), j, Experiment()[:through+1], nil, pipeline.Options{RunDir: t.TempDir()})
	if !errors.Is(err, pipeline.ErrBadInput) || !errors.Is(err, imagefeat.ErrEmbeddings) ||
		!strings.Contains(err.Error(), "embeddings_Clothing_Shoes_and_Jewelry.parquet") || !strings.Contains(err.Error(), "row 3: ") {
		t.Errorf("%v, want bad input naming the file and row 3", err)
	}
}

// TestEmbeddingRejectsWarned: rows rejected under reject_ratio are a WARN
// line naming the file, the count and the first (only the stats had them,
// while ingest warns of every file with rejects).
func TestEmbeddingRejectsWarned(t *testing.T) {
	_, dir := write2023World(t, "tiny", 0.3, 8)
	path := filepath.Join(dir, "embeddings_Clothing_Shoes_and_Jewelry.parquet")
	var c schema.EmbeddingsCols
	for b, err := range schema.Batches[schema.EmbeddingsCols](context.Background(), path) {
		if err != nil {
			t.Fatal(err)
		}
		c.ParentASIN, c.Embedding = append(c.ParentASIN, b.ParentASIN...), append(c.Embedding, b.Embedding...)
	}
	c.Embedding[3][5] = float32(math.NaN())
	if _, err := schema.Write(path, c); err != nil {
		t.Fatal(err)
	}
	j := load2023Job(t, dir)
	j.Experiments = j.Experiments[:1]
	j.Settings.RejectRatio = job.Set(0.5)
	through := slices.IndexFunc(Experiment(), func(s Stage) bool { return s.Name() == Features{}.Name() })
	var logs bytes.Buffer
	if _, err := runStages(t.Context(), j, Experiment()[:through+1], nil, pipeline.Options{RunDir: t.TempDir(), Logger: pipeline.NewLogger(&logs, false)}); err != nil {
		t.Fatal(err)
	}
	ws := warnings(t, &logs, "features")
	want := fmt.Sprintf("embeddings_Clothing_Shoes_and_Jewelry.parquet: 1 of %d rows rejected (first: row 3: ", len(c.ParentASIN))
	if len(ws) != 1 || !strings.HasPrefix(fmt.Sprint(ws[0]["msg"]), want) || ws[0]["non_finite"] != 1.0 {
		t.Errorf("warnings %v, want one starting %q with non_finite 1", ws, want)
	}
}

// TestSynth2023Recovery measures co_review against the planted relation at
// the scale of jobs/synthetic-2023.yaml
// (docs/notes/2026-11-25-planted-2023-layout.md): ingest alone, on both of
// its experiments.
func TestSynth2023Recovery(t *testing.T) {
	if testing.Short() {
		t.Skip("generates the small world and reads its 650,000 reviews twice")
	}
	w, dir := write2023World(t, "small", 1, 256)
	j := load2023Job(t, dir)
	run := t.TempDir()
	if _, err := runStages(t.Context(), j, Experiment()[:1], nil, pipeline.Options{RunDir: run}); err != nil {
		t.Fatal(err)
	}
	for _, e := range j.Experiments {
		p, r, nd, np := coReviewRecovery(t, w, run, e.Name)
		t.Logf("%s: co_review %d edges (%.0f not planted), planted %d: precision %.4f, recall %.4f", e.Name, nd, float64(nd)*(1-p), np, p, r)
		if p < 0.95 || r < 0.75 {
			t.Errorf("%s: precision %.3f, recall %.3f", e.Name, p, r)
		}
	}
}

// TestCheckEmbeddingDim: train refuses (exit 2) a model whose sizes exceed
// the embeddings' dimension, which validation cannot know before the file
// is read, or whose training needs more memory than the machine has at
// that dimension (the pre-flight saw none); the other models train.
func TestCheckEmbeddingDim(t *testing.T) {
	defer func(f func() (int64, error)) { machineMemory = f }(machineMemory)
	machineMemory = func() (int64, error) { return 1 << 30, nil }
	s := models.TrainSettings{K: 40, MonomerK: 8, N: 4}
	for _, tc := range []struct {
		model string
		dim   int
		want  string
	}{
		{"lmt", 40, ""}, {"lmt", 39, "settings.k: 40 is above the dimension of the embeddings (its data.embeddings file), 39"},
		{"monomer", 8, ""}, {"monomer", 7, "settings.monomer_k: 8"}, {"wnn", 1, ""}, {"ct", 1, ""},
		// 40 × 10⁷ LMT parameters at 520 bytes each: 208 GB, not 1 GiB; WNN
		// at 10⁶ dimensions: 0.5 GB.
		{"lmt", 10_000_000, "training lmt needs about"}, {"wnn", 1_000_000, ""},
	} {
		err := checkEmbeddingDim("x", tc.model, s, tc.dim)
		if tc.want == "" && err != nil || tc.want != "" && (!errors.Is(err, job.ErrConfig) || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s at %d: %v, want %q", tc.model, tc.dim, err, tc.want)
		}
	}
}

// TestDegenerateEmbeddings: embeddings that carry no usable information
// (all zero, one constant vector, values in the denormal range, values
// whose squared distances overflow float32) fail the features stage as
// bad input (exit 3) with the reason; they once passed, every model a
// constant predictor. A file covering under half of the items passes
// with a WARN giving the share.
func TestDegenerateEmbeddings(t *testing.T) {
	_, dir := write2023World(t, "tiny", 0.3, 8)
	path := filepath.Join(dir, "embeddings_Clothing_Shoes_and_Jewelry.parquet")
	var orig schema.EmbeddingsCols
	for b, err := range schema.Batches[schema.EmbeddingsCols](context.Background(), path) {
		if err != nil {
			t.Fatal(err)
		}
		orig.ParentASIN, orig.Embedding = append(orig.ParentASIN, b.ParentASIN...), append(orig.Embedding, b.Embedding...)
	}
	each := func(f func(i, j int, v float32) float32) schema.EmbeddingsCols {
		c := schema.EmbeddingsCols{ParentASIN: orig.ParentASIN}
		for i, e := range orig.Embedding {
			v := make([]float32, len(e))
			for j := range e {
				v[j] = f(i, j, e[j])
			}
			c.Embedding = append(c.Embedding, v)
		}
		return c
	}
	for _, tc := range []struct {
		name    string
		cols    schema.EmbeddingsCols
		wantErr string
		warn    bool
	}{
		{"all zero", each(func(_, _ int, _ float32) float32 { return 0 }), "every item has the same vector (zero variance across items)", false},
		{"constant", each(func(_, j int, _ float32) float32 { return float32(j) + 0.5 }), "every item has the same vector", false},
		{"denormal", each(func(_, _ int, v float32) float32 { return v * 1e-40 }), "below the 1e-30 the float32 kernels resolve", false},
		{"near float32 max", each(func(_, _ int, v float32) float32 { return v * 1e30 }), "squared distances of 8-dimensional vectors overflow float32", false},
		{"a third of the items", schema.EmbeddingsCols{ParentASIN: orig.ParentASIN[:len(orig.ParentASIN)/3], Embedding: orig.Embedding[:len(orig.ParentASIN)/3]}, "", true},
		{"intact", orig, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := schema.Write(path, tc.cols); err != nil {
				t.Fatal(err)
			}
			j := load2023Job(t, dir)
			j.Experiments = j.Experiments[:1]
			through := slices.IndexFunc(Experiment(), func(s Stage) bool { return s.Name() == Features{}.Name() })
			var logs bytes.Buffer
			_, err := runStages(t.Context(), j, Experiment()[:through+1], nil, pipeline.Options{RunDir: t.TempDir(), Logger: pipeline.NewLogger(&logs, false)})
			if tc.wantErr != "" {
				if !errors.Is(err, pipeline.ErrBadInput) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want bad input with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ws := warnings(t, &logs, "features")
			if got := len(ws) > 0; got != tc.warn {
				t.Fatalf("warnings %v, want %v", ws, tc.warn)
			}
			if tc.warn && !strings.Contains(fmt.Sprint(ws[0]["msg"]), "embeddings_Clothing_Shoes_and_Jewelry.parquet has vectors for ") {
				t.Errorf("warning %q does not give the file and share", ws[0]["msg"])
			}
		})
	}
}

package synth_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"monomer/amazon"
	"monomer/schema"
	"monomer/synth"
)

// small2023 is a world small enough to write twice in a test: tiny at a
// fifth, 16-d features.
func small2023(t *testing.T) *synth.World {
	t.Helper()
	cfg, err := synth.Scale("tiny")
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = cfg.Shrunk(0.2); err != nil {
		t.Fatal(err)
	}
	cfg.FeatureDim = 16
	w, err := synth.NewWorld(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestWrite2023: the 2023 files are byte-identical whatever the workers;
// every line reads back through the 2023 readers without a reject, one
// item per line keyed by its parent_asin with its subcategory path; each
// planted also_bought edge x → y has at least one user who reviewed x and
// then y within three weeks; and the embeddings table holds every image
// record with its features.
func TestWrite2023(t *testing.T) {
	w := small2023(t)
	var files [2][3][]byte
	dirs := [2]string{t.TempDir(), t.TempDir()}
	for k, workers := range []int{1, 3} {
		st, err := synth.Write2023(context.Background(), dirs[k], "Demo", w, synth.WriteOptions{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if st.MetaLines != int64(len(w.Items)) || st.Records != int64(w.Records()) {
			t.Errorf("stats %+v for %d items, %d records", st, len(w.Items), w.Records())
		}
		m, r, e := synth.Files2023(dirs[k], "Demo")
		for f, p := range []string{m, r, e} {
			if files[k][f], err = os.ReadFile(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	for f := range 3 {
		if !bytes.Equal(files[0][f], files[1][f]) {
			t.Errorf("file %d differs between 1 and 3 workers", f)
		}
	}
	meta, reviews, emb := synth.Files2023(dirs[0], "Demo")

	reject := func(j amazon.Reject) { t.Errorf("reject: %+v", j) }
	byASIN := map[string][]string{}
	if _, err := amazon.ReadMeta2023(context.Background(), meta, func(p *amazon.Product) error {
		byASIN[p.ASIN] = slices.Clone(p.Categories[0])
		if len(p.AlsoBought)+len(p.AlsoViewed)+len(p.BoughtTogether) > 0 {
			t.Errorf("%s has related lists", p.ASIN)
		}
		return nil
	}, reject); err != nil {
		t.Fatal(err)
	}
	if len(byASIN) != len(w.Items) {
		t.Errorf("%d items read, %d written", len(byASIN), len(w.Items))
	}
	// When did each user review each item (milliseconds cut to seconds)?
	type key struct{ user, asin string }
	when := map[key]int64{}
	for rv, err := range amazon.Reviews2023(reviews, reject, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := byASIN[rv.ASIN]; !ok {
			t.Fatalf("review of unknown item %s", rv.ASIN)
		}
		k := key{rv.ReviewerID, rv.ASIN}
		if t0, ok := when[k]; !ok || rv.UnixReviewTime < t0 {
			when[k] = rv.UnixReviewTime
		}
	}
	users := map[string][]string{} // user -> items
	for k := range when {
		users[k.user] = append(users[k.user], k.asin)
	}
	followed := map[[2]string]bool{}
	for u, items := range users {
		for _, x := range items {
			for _, y := range items {
				d := when[key{u, y}] - when[key{u, x}]
				if x != y && d > 0 && d <= 21*86400+3600 {
					followed[[2]string{x, y}] = true
				}
			}
		}
	}
	for _, e := range w.Edges(synth.AlsoBought) {
		x, y := w.Items[e.Src].ASIN, w.Items[e.Dst].ASIN
		if !followed[[2]string{x, y}] {
			t.Fatalf("planted edge %s → %s: no user reviewed %s within three weeks after %s", x, y, y, x)
		}
		if sub := w.Items[e.Src].Subcat; sub >= 0 && !slices.Contains(byASIN[x], w.Subcats[sub].Name) {
			t.Errorf("%s: path %v lacks its subcategory %s", x, byASIN[x], w.Subcats[sub].Name)
		}
	}

	vec := map[string][]float32{}
	for b, err := range schema.Batches[schema.EmbeddingsCols](context.Background(), emb) {
		if err != nil {
			t.Fatal(err)
		}
		for k, a := range b.ParentASIN {
			vec[a] = b.Embedding[k]
		}
	}
	if len(vec) != w.Records() {
		t.Errorf("%d embeddings for %d image records", len(vec), w.Records())
	}
	want := make([]float32, 16)
	for i, it := range w.Items {
		if !it.HasImage || it.Kind != synth.Regular {
			continue
		}
		w.Feature(i, want)
		if !slices.Equal(vec[it.ASIN], want) {
			t.Fatalf("%s: embedding %v, want the image features %v", it.ASIN, vec[it.ASIN], want)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dirs[0], ".*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

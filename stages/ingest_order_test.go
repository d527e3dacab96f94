package stages

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"monomer/amazon"
	"monomer/imagefeat"
	"monomer/job"
	"monomer/pipeline"
	"monomer/schema"
)

// ingestOrderData writes an image experiment's three files, each with a
// reject, into a new folder: the metadata and the reviews gzip-compressed
// (cut short when cutMeta or cutReviews), the image features with a
// repeated ASIN (and a partial last record when cutImages).
func ingestOrderData(t *testing.T, cutMeta, cutReviews, cutImages bool) string {
	t.Helper()
	data := t.TempDir()
	var meta, reviews strings.Builder
	for k := range 200 {
		sub := []string{"Shirts", "Shoes", "Hats"}[k%3]
		fmt.Fprintf(&meta, "{'asin': 'B%09d', 'title': 'Item %d', 'categories': [['Clothing, Shoes & Jewelry', 'Men', '%s']], 'related': {'also_bought': ['B%09d', 'B%09d']}}\n",
			k, k, sub, (k+1)%200, (k+7)%200)
		if k == 50 {
			meta.WriteString("{'asin': 'B999', 'title': 'unterminated}\n")
		}
	}
	for k := range 3000 {
		fmt.Fprintf(&reviews, `{"asin": "B%09d", "reviewText": "review %d of a fine item, padded to fill the batches", "overall": 5}`+"\n", k%211, k)
		if k == 1234 {
			reviews.WriteString("not json\n")
		}
	}
	gz := func(name, s string, cut bool) {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		z := b.Bytes()
		if cut {
			z = z[:len(z)*2/3]
		}
		if err := os.WriteFile(filepath.Join(data, name), z, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gz("meta.json.gz", meta.String(), cutMeta)
	gz("reviews.json.gz", reviews.String(), cutReviews)
	path := filepath.Join(data, "img.b")
	w, err := imagefeat.Create(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	vec := make([]float32, imagefeat.Dim)
	for k := range 150 {
		vec[k] = 1
		if err := w.Write(fmt.Sprintf("B%09d", k), vec); err != nil {
			t.Fatal(err)
		}
		if k == 20 {
			w.Write("B000000003", vec) // a repeat: a reject
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if cutImages {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("B000000999 partial"))
		f.Close()
	}
	return data
}

// TestIngestReadOrder: ingest reads the image features (and the reviews it
// only counts) beside the metadata, yet its rejects, their WARN lines and,
// when several files are bad, the error are those of reading the files one
// after the other: the metadata's first, then the reviews', then the
// ratio check over both, then the image features'. A version that
// reported whichever read failed first fails here (the cut .b file fails
// at once, the cut gzip files only at their end).
func TestIngestReadOrder(t *testing.T) {
	const src = "name: order\ndata: {meta: meta.json.gz, reviews: reviews.json.gz, image_features: img.b}\nsettings: {reject_ratio: RATIO}\n" +
		"experiments:\n  - {name: men, category: \"Clothing, Shoes & Jewelry > Men\", graph: also_bought, features: image, models: [wnn]}\n"
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range []struct {
		name                string
		meta, reviews, imgs bool // cut short
		ratio               string
		want                string // in the error; "" for success
	}{
		{"all bad", true, true, true, "0.5", "meta.json.gz: corrupt or truncated gzip stream after "},
		{"reviews and images bad", false, true, true, "0.5", "reviews.json.gz: corrupt or truncated gzip stream after "},
		{"images bad", false, false, true, "0.5", "img.b: "},
		{"ratio before images", false, false, true, "0.001", "meta.json.gz: 1 of 201 lines rejected"},
		{"good", false, false, false, "0.5", ""},
	} {
		data := ingestOrderData(t, tc.meta, tc.reviews, tc.imgs)
		var first map[string][]byte
		for _, p := range []int{1, 2, 3, 7, 16} {
			runtime.GOMAXPROCS(p)
			var logs bytes.Buffer
			j, err := job.Parse(filepath.Join(data, "job.yaml"), []byte(strings.Replace(src, "RATIO", tc.ratio, 1)))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			_, err = runStages(context.Background(), j, Experiment(), Job(),
				pipeline.Options{RunDir: dir, Only: "ingest", Logger: pipeline.NewLogger(&logs, false)})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("%s, GOMAXPROCS %d: %v", tc.name, p, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("%s, GOMAXPROCS %d: err = %v, want one containing %q", tc.name, p, err, tc.want)
			}
			if err != nil {
				continue
			}
			var msgs []string
			for _, w := range warnings(t, &logs, "ingest") {
				msgs = append(msgs, w["msg"].(string))
			}
			want := []string{
				"meta.json.gz: 1 of 201 lines rejected (first: line 52 (byte ",
				"reviews.json.gz: 1 of 3001 lines rejected (first: line 1236 (byte ",
				"img.b: 1 of 151 lines rejected (first: line 22 (byte ",
			}
			if len(msgs) != len(want) {
				t.Fatalf("GOMAXPROCS %d: warnings %q", p, msgs)
			}
			for i := range want {
				if !strings.HasPrefix(msgs[i], want[i]) {
					t.Fatalf("GOMAXPROCS %d: warning %d = %q, want %q…", p, i, msgs[i], want[i])
				}
			}
			tb := open(t, filepath.Join(dir, "men", "ingest", "rejects.parquet"))
			files, lines := must(tb.Strings("file"))(t), must(tb.Int64s("line"))(t)
			if got := fmt.Sprint(files, lines); got != "[meta.json.gz reviews.json.gz img.b] [52 1236 22]" {
				t.Fatalf("GOMAXPROCS %d: rejects %s", p, got)
			}
			items := parquetFiles(t, dir)
			if first == nil {
				first = items
			}
			for name, b := range items {
				if !bytes.Equal(b, first[name]) {
					t.Fatalf("GOMAXPROCS %d: %s differs from GOMAXPROCS 1's", p, name)
				}
			}
		}
	}
}

// TestReviewSinkBytes: the reviews table written on the sink's goroutine
// is, byte for byte, the table written in batches of reviewBatch on the
// reading goroutine, at any GOMAXPROCS; after the close, abort is
// harmless.
func TestReviewSinkBytes(t *testing.T) {
	const n = 5*reviewBatch + 17
	review := func(k int) amazon.Review {
		return amazon.Review{ASIN: fmt.Sprintf("B%05d", k%300), Summary: fmt.Sprint("s", k), ReviewText: strings.Repeat("word ", k%40)}
	}
	dir := t.TempDir()
	want := filepath.Join(dir, "want.parquet")
	w, err := schema.NewWriter[schema.ReviewsCols](want, reviewGroupRows)
	if err != nil {
		t.Fatal(err)
	}
	var b schema.ReviewsCols
	for k := range n {
		r := review(k)
		b.ASIN, b.Summary, b.Text = append(b.ASIN, r.ASIN), append(b.Summary, r.Summary), append(b.Text, r.ReviewText)
		if len(b.ASIN) == reviewBatch || k == n-1 {
			if err := w.Append(b); err != nil {
				t.Fatal(err)
			}
			b = schema.ReviewsCols{}
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	wantBytes, _ := os.ReadFile(want)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, p := range []int{1, 2, 3, 7, 16} {
		runtime.GOMAXPROCS(p)
		path := filepath.Join(dir, fmt.Sprint("got", p, ".parquet"))
		w, err := schema.NewWriter[schema.ReviewsCols](path, reviewGroupRows)
		if err != nil {
			t.Fatal(err)
		}
		s := newReviewSink(w)
		for k := range n {
			r := review(k)
			if err := s.add(&r); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := s.close()
		s.abort()
		if err != nil || rows != n {
			t.Fatalf("GOMAXPROCS %d: %d rows, %v", p, rows, err)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, wantBytes) {
			t.Fatalf("GOMAXPROCS %d: the table differs from the one written serially", p)
		}
	}
}

package bow

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// realDir holds small real samples of the 2018 release (reviews of Gift
// Cards and Magazine Subscriptions, as `monomer download --release 2018`
// fetches them), kept beside the repository, not in it; the tests that
// need them skip without them.
var realDir = filepath.Join("..", "..", "shared", "realdata")

type realReview struct {
	ASIN       string `json:"asin"`
	ReviewText string `json:"reviewText"`
	Summary    string `json:"summary"`
}

// realLines calls fn with each line of a gzipped JSON-lines sample in
// realDir, skipping the test when the samples are absent (a user's fresh
// checkout).
func realLines(t testing.TB, name string, fn func(line int, b []byte)) {
	t.Helper()
	path := filepath.Join(realDir, name)
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		t.Skipf("real sample %s absent; skipping", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 1<<24)
	for line := 1; sc.Scan(); line++ {
		fn(line, sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// readRealReviews reads one JSON-lines review sample.
func readRealReviews(t testing.TB, name string) []realReview {
	t.Helper()
	var out []realReview
	realLines(t, name, func(line int, b []byte) {
		var r realReview
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s line %d: %v", name, line, err)
		}
		out = append(out, r)
	})
	return out
}

// realCorpus turns a review sample into docs over its items (numbered by
// first appearance), plus extra item rows without reviews.
func realCorpus(rs []realReview, extra int) ([]Doc, int) {
	ids := map[string]int32{}
	docs := make([]Doc, 0, len(rs))
	for _, r := range rs {
		id, ok := ids[r.ASIN]
		if !ok {
			id = int32(len(ids))
			ids[r.ASIN] = id
		}
		docs = append(docs, Doc{Item: id, Text: r.ReviewText})
	}
	return docs, len(ids) + extra
}

func TestRealData(t *testing.T) {
	tests := []struct {
		file  string
		terms []string // expected among the 50 most frequent
	}{
		{file: "Gift_Cards_5.json.gz", terms: []string{"gift", "card", "great", "amazon", "easi"}},
		{file: "Magazine_Subscriptions_5.json.gz", terms: []string{"magazin", "articl", "issu", "subscript", "recip"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			docs, nItems := realCorpus(readRealReviews(t, tt.file), 7)
			var first []byte
			for _, w := range []int{1, 4} {
				res, err := Build(t.Context(), SliceDocs(docs), nItems, Options{Workers: w})
				if err != nil {
					t.Fatal(err)
				}
				st := res.Stats
				if len(res.Vocab) != int(min(5000, st.Candidates)) {
					t.Errorf("%d terms from %d candidates", len(res.Vocab), st.Candidates)
				}
				if st.ItemsNoReviews != 7 || st.Sampled || st.Docs != int64(len(docs)) {
					t.Errorf("stats %+v", st)
				}
				checkWeights(t, res)
				top := map[string]bool{}
				for _, v := range res.Vocab[:50] {
					top[v.Term] = true
				}
				for _, want := range tt.terms {
					if !top[want] {
						t.Errorf("%q not among the 50 most frequent terms", want)
					}
				}
				if b := resultBytes(res); first == nil {
					first = b
					t.Logf("%d reviews, %d tokens, %d candidates, %d items kept, %d without vocabulary hit; top: %v",
						st.Docs, st.Tokens, st.Candidates, st.ItemsKept, st.ItemsNoVocabHit, res.Vocab[:8])
				} else if !bytes.Equal(first, b) {
					t.Errorf("1 and %d workers differ", w)
				}
			}
		})
	}
}

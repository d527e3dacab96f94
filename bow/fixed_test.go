package bow

import (
	"slices"
	"testing"
)

// TestVectorizeFixed: over a fixed vocabulary the vectors are Vectorize's,
// and the coverage counts the candidate occurrences outside it: every
// candidate is a term of the vocabulary Build ranks with no size limit,
// leather and price occur three times each in handDocs, zipper never, and
// a vocabulary equal to the corpus' own leaves out what its own does.
func TestVectorizeFixed(t *testing.T) {
	all, err := Build(t.Context(), SliceDocs(handDocs), 5, Options{VocabSize: 1000, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var candidates int64
	for _, term := range all.Vocab {
		candidates += term.Count
	}
	fixed := []Term{{Term: "leather", Kind: Noun}, {Term: "zipper", Kind: Noun}, {Term: "price", Kind: Noun}}
	res, cov, err := VectorizeFixed(t.Context(), SliceDocs(handDocs), 5, fixed, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if cov.Candidates != candidates || cov.Outside != candidates-6 {
		t.Errorf("coverage %+v, want %d candidates, %d outside", cov, candidates, candidates-6)
	}
	plain, err := Vectorize(t.Context(), SliceDocs(handDocs), 5, fixed, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		a, wa := res.Matrix.SparseRow(i)
		b, wb := plain.Matrix.SparseRow(i)
		if !slices.Equal(a, b) || !slices.Equal(wa, wb) {
			t.Errorf("item %d: %v %v, Vectorize %v %v", i, a, wa, b, wb)
		}
	}
	own, err := Build(t.Context(), SliceDocs(handDocs), 5, Options{VocabSize: 2, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	_, cov, err = VectorizeFixed(t.Context(), SliceDocs(handDocs), 5, own.Vocab, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if cov.Outside != cov.OwnOutside || cov.Outside >= cov.Candidates {
		t.Errorf("own vocabulary: coverage %+v", cov)
	}
	if k, ok := ParseKind(AdjNoun.String()); !ok || k != AdjNoun {
		t.Error("ParseKind")
	}
}

package bow_test

import (
	"context"
	"fmt"

	"monomer/bow"
)

func Example() {
	docs := []bow.Doc{ // in review-file order; item 2 has no review
		{Item: 0, Text: "Soft leather and a great price."},
		{Item: 1, Text: "Great price!"},
		{Item: 0, Text: "The leather is soft, the price is great."},
	}
	res, err := bow.Build(context.Background(), bow.SliceDocs(docs), 3, bow.Options{VocabSize: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	for id, t := range res.Vocab {
		fmt.Printf("term %d: %q %s count=%d items=%d\n", id, t.Term, t.Kind, t.Count, t.DocFreq)
	}
	for i := range res.Matrix.Rows() {
		idx, w := res.Matrix.SparseRow(i)
		fmt.Printf("item %d: %v %.3f\n", i, idx, w)
	}
	fmt.Println("items without reviews:", res.Stats.ItemsNoReviews)
	// Output:
	// term 0: "great" adj count=3 items=2
	// term 1: "price" noun count=3 items=2
	// term 2: "great price" adj_noun count=2 items=2
	// item 0: [0 1 2] [0.400 0.400 0.200]
	// item 1: [0 1 2] [0.333 0.333 0.333]
	// item 2: [] []
	// items without reviews: 1
}

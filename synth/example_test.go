package synth_test

import (
	"fmt"

	"monomer/synth"
)

// A world in memory at a low feature dimension, as model tests use it.
func ExampleNewWorld() {
	cfg, err := synth.Scale("tiny")
	if err != nil {
		panic(err)
	}
	cfg.FeatureDim = 32
	w, err := synth.NewWorld(cfg, 1)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(w.Items), "items in", len(w.Subcats), "subcategories")

	e := w.Edges(synth.AlsoBought)[0]
	x, y := w.Items[e.Src], w.Items[e.Dst]
	fmt.Printf("%s (%s) also bought %s (%s), notion %d\n", x.ASIN, w.Subcats[x.Subcat].Name, y.ASIN, w.Subcats[y.Subcat].Name, x.Notion)

	f := make([]float32, cfg.FeatureDim)
	w.Feature(int(e.Src), f)
	nonzero := 0
	for _, v := range f {
		if v > 0 {
			nonzero++
		}
	}
	fmt.Println(nonzero, "of", len(f), "feature values non-zero;", len(w.ReviewTexts(int(e.Src))), "reviews")
	// Output:
	// 3848 items in 14 subcategories
	// B0Y6N9NI3A (Watches) also bought B0Q6QI7GMX (Jackets & Coats), notion 3
	// 8 of 32 feature values non-zero; 24 reviews
}

package imagefeat_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"monomer/imagefeat"
)

// Write a tiny .b file of 3-d features, extract two of its items into a
// matrix, and read the rows back from the memory-mapped file.
func Example() {
	dir, _ := os.MkdirTemp("", "imagefeat")
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "image_features_Demo.b")

	w, _ := imagefeat.Create(in, 3)
	w.Write("B000000001", []float32{0, 29.2, 58.4})
	w.Write("B000000002", []float32{1, 2, 3}) // not wanted
	w.Write("000100039X", []float32{5.8, 0, 0})
	w.Close()

	rows := map[string]int32{"000100039X": 0, "B000000001": 1}
	out := filepath.Join(dir, "image.arrow")
	st, err := imagefeat.Extract(context.Background(), in, rows, len(rows), 58.4, out, imagefeat.WithDim(3))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("records %d, kept %d, unwanted %d\n", st.Records, st.Kept, st.Unwanted)

	m, err := imagefeat.OpenMatrix(out)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	for i := range m.Rows() {
		fmt.Printf("%s %.2f\n", m.ASIN(i), m.Row(i))
	}
	// Output:
	// records 3, kept 2, unwanted 1
	// 000100039X [0.10 0.00 0.00]
	// B000000001 [0.00 0.50 1.00]
}

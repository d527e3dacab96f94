package download_test

import (
	"fmt"

	"monomer/download"
)

// The files of Table 2's category in the 2014 release, from a mirror.
func ExampleRelease_Files() {
	r, err := download.Lookup("2014")
	if err != nil {
		panic(err)
	}
	fs, err := r.Files(download.Request{Categories: []string{"Clothing_Shoes_and_Jewelry"}, Mirror: "https://mirror.example/amazon"})
	if err != nil {
		panic(err)
	}
	for _, f := range fs {
		fmt.Println(f.Name, f.URL)
	}
	// Output:
	// meta_Clothing_Shoes_and_Jewelry.json.gz https://mirror.example/amazon/categoryFiles/meta_Clothing_Shoes_and_Jewelry.json.gz
	// reviews_Clothing_Shoes_and_Jewelry.json.gz https://mirror.example/amazon/categoryFiles/reviews_Clothing_Shoes_and_Jewelry.json.gz
	// image_features_Clothing_Shoes_and_Jewelry.b https://mirror.example/amazon/image_features/categoryFiles/image_features_Clothing_Shoes_and_Jewelry.b
}

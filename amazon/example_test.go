package amazon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"monomer/amazon"
)

func ExampleReadMeta() {
	dir, err := os.MkdirTemp("", "amazon-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "meta_Demo.json")
	lines := `{'asin': '043965548X', 'title': "Levi's Men&#x92;s Jean", 'price': 39.5, 'categories': [['Clothing, Shoes &amp; Jewelry', 'Men']], 'related': {'also_bought': ['B00001']}}
{"asin": "B00001", "title": "Belt", "also_view": ["043965548X"], "category": ["Clothing, Shoes & Jewelry", "Men"], "price": "$12.99"}
{"asin": "B00001", "title": "Belt", "also_view": ["043965548X"], "category": ["Clothing, Shoes & Jewelry", "Men"], "price": "$12.99"}
{'asin': 'B00002', 'title': 'Broken}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		fmt.Println(err)
		return
	}

	st, err := amazon.ReadMeta(context.Background(), path, func(p *amazon.Product) error {
		fmt.Printf("%s %q $%.2f %q bought=%q viewed=%q\n", p.ASIN, p.Title, p.Price, p.Categories, p.AlsoBought, p.AlsoViewed)
		return nil
	}, func(r amazon.Reject) {
		fmt.Printf("reject %s line %d (offset %d): %s\n", r.File, r.Line, r.Offset, r.Err)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d lines: %d records, %d rejected, %d duplicates\n", st.Lines, st.Records, st.Rejected, st.Duplicates)
	// Output:
	// 043965548X "Levi's Men’s Jean" $39.50 [["Clothing, Shoes & Jewelry" "Men"]] bought=["B00001"] viewed=[]
	// B00001 "Belt" $12.99 [["Clothing, Shoes & Jewelry" "Men"]] bought=[] viewed=["043965548X"]
	// reject meta_Demo.json line 4 (offset 439): unterminated string at byte 28
	// 4 lines: 2 records, 1 rejected, 1 duplicates
}

func ExampleReviews() {
	dir, err := os.MkdirTemp("", "amazon-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "reviews_Demo.json")
	lines := `{"asin": "B00001", "reviewerID": "A1", "summary": "Snug", "reviewText": "Fits well.", "overall": 5.0}
{"reviewerID": "A2", "reviewText": "no asin"}
{"asin": "B00002", "reviewerID": "A3", "reviewText": "Too &quot;tight&quot;", "overall": 2.0}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		fmt.Println(err)
		return
	}

	var st amazon.Stats
	reject := func(r amazon.Reject) { fmt.Printf("reject line %d: %s\n", r.Line, r.Err) }
	for r, err := range amazon.Reviews(path, reject, &st) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s %.0f %q %q\n", r.ASIN, r.Overall, r.Summary, r.ReviewText)
	}
	fmt.Printf("%d lines: %d reviews, %d rejected\n", st.Lines, st.Records, st.Rejected)
	// Output:
	// B00001 5 "Snug" "Fits well."
	// reject line 2: missing asin
	// B00002 2 "" "Too &quot;tight&quot;"
	// 3 lines: 2 reviews, 1 rejected
}

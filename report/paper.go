package report

import (
	"strings"

	"monomer/amazon"
)

// PaperRow is one row of the paper's Tables 1-4: test error rates in percent
// by model, and the data set's statistics.
type PaperRow struct {
	Table    int // 2 (image features) or 4 (bag of words)
	Dataset  string
	Subcats  int
	Items    int
	Edges    map[string]int
	ErrorPct map[string]map[string]float64 // graph -> model -> %
}

// paperRows holds the published figures (He, Packer, McAuley 2016, Tables
// 1-4), keyed by the category prefix of the experiment.
var paperRows = map[string]PaperRow{
	"Clothing, Shoes & Jewelry > Men": {2, "Men", 56, 306215,
		map[string]int{"also_bought": 1075547, "also_viewed": 635610},
		map[string]map[string]float64{
			"also_bought": {"wnn": 34.95, "ct": 47.71, "lmt": 9.20, "monomer": 6.48},
			"also_viewed": {"wnn": 18.98, "ct": 47.40, "lmt": 6.78, "monomer": 6.58},
		}},
	"Clothing, Shoes & Jewelry > Women": {2, "Women", 116, 659566,
		map[string]int{"also_bought": 1923952, "also_viewed": 1691121},
		map[string]map[string]float64{
			"also_bought": {"wnn": 30.50, "ct": 49.73, "lmt": 11.52, "monomer": 7.87},
			"also_viewed": {"wnn": 20.50, "ct": 49.48, "lmt": 7.90, "monomer": 7.34},
		}},
	"Clothing, Shoes & Jewelry > Boys": {2, "Boys", 41, 42156,
		map[string]int{"also_bought": 169503, "also_viewed": 75689},
		map[string]map[string]float64{
			"also_bought": {"wnn": 31.16, "ct": 46.02, "lmt": 8.80, "monomer": 5.71},
			"also_viewed": {"wnn": 21.52, "ct": 46.22, "lmt": 6.72, "monomer": 5.35},
		}},
	"Clothing, Shoes & Jewelry > Girls": {2, "Girls", 44, 56593,
		map[string]int{"also_bought": 191964, "also_viewed": 97881},
		map[string]map[string]float64{
			"also_bought": {"wnn": 31.10, "ct": 47.63, "lmt": 8.33, "monomer": 5.78},
			"also_viewed": {"wnn": 22.36, "ct": 46.43, "lmt": 6.46, "monomer": 5.62},
		}},
	"Clothing, Shoes & Jewelry > Baby": {2, "Baby", 6, 36588,
		map[string]int{"also_bought": 96253, "also_viewed": 95784},
		map[string]map[string]float64{
			"also_bought": {"wnn": 37.26, "ct": 48.01, "lmt": 12.48, "monomer": 7.94},
			"also_viewed": {"wnn": 30.89, "ct": 47.72, "lmt": 11.88, "monomer": 9.25},
		}},
	"Electronics": {4, "Elect", 306, 412082,
		map[string]int{"also_bought": 1654552, "also_viewed": 718361},
		map[string]map[string]float64{
			"also_bought": {"wnn": 37.58, "lda": 36.67, "lmt": 13.73, "monomer": 10.09},
			"also_viewed": {"wnn": 39.37, "lda": 26.60, "lmt": 16.41, "monomer": 9.44},
		}},
	"Automotive": {4, "Auto", 178, 312642,
		map[string]int{"also_bought": 959353, "also_viewed": 1298774},
		map[string]map[string]float64{
			"also_bought": {"wnn": 42.63, "lda": 38.57, "lmt": 17.94, "monomer": 14.09},
			"also_viewed": {"wnn": 42.44, "lda": 34.37, "lmt": 21.15, "monomer": 14.74},
		}},
	"Video Games": {4, "Games", 16, 49801,
		map[string]int{"also_bought": 314124, "also_viewed": 54559},
		map[string]map[string]float64{
			"also_bought": {"wnn": 44.31, "lda": 42.55, "lmt": 14.43, "monomer": 12.03},
			"also_viewed": {"wnn": 40.08, "lda": 33.22, "lmt": 16.18, "monomer": 11.29},
		}},
	"Movies & TV": {4, "Movies", 2, 199737,
		map[string]int{"also_bought": 648256, "also_viewed": 49924},
		map[string]map[string]float64{
			"also_bought": {"wnn": 40.00, "lda": 23.51, "lmt": 11.36, "monomer": 9.47},
			"also_viewed": {"wnn": 42.01, "lda": 26.63, "lmt": 15.12, "monomer": 14.98},
		}},
	"Office Products": {4, "Office", 245, 127054,
		map[string]int{"also_bought": 448720, "also_viewed": 370630},
		map[string]map[string]float64{
			"also_bought": {"wnn": 41.35, "lda": 39.05, "lmt": 18.53, "monomer": 14.30},
			"also_viewed": {"wnn": 37.33, "lda": 28.13, "lmt": 13.52, "monomer": 9.72},
		}},
	"Home & Kitchen": {4, "Home", 81, 393781,
		map[string]int{"also_bought": 560574, "also_viewed": 960925},
		map[string]map[string]float64{
			"also_bought": {"wnn": 39.74, "lda": 31.91, "lmt": 13.96, "monomer": 12.40},
			"also_viewed": {"wnn": 36.49, "lda": 23.09, "lmt": 13.97, "monomer": 9.95},
		}},
	"Cell Phones & Accessories": {4, "Phones", 28, 317965,
		map[string]int{"also_bought": 867418, "also_viewed": 225785},
		map[string]map[string]float64{
			"also_bought": {"wnn": 43.35, "lda": 42.73, "lmt": 29.44, "monomer": 22.68},
			"also_viewed": {"wnn": 43.70, "lda": 34.30, "lmt": 24.65, "monomer": 16.04},
		}},
}

// PaperFor finds the paper's row for an experiment's category, if any. The
// image rows need image features and the text rows bag of words.
func PaperFor(category, features string) (PaperRow, bool) {
	r, ok := paperRows[strings.Join(amazon.CategoryPrefix(category), " > ")]
	if !ok || (r.Table == 2) != (features == "image") {
		return PaperRow{}, false
	}
	return r, true
}

package report

import (
	"math"
	"testing"
)

// TestPaperTablesEmbeddings: an experiment on embeddings gets a table of
// its own after the paper's two, with its errors and Monomer's
// improvement; kinds without an experiment get none.
func TestPaperTablesEmbeddings(t *testing.T) {
	nan := math.NaN()
	exps := []*Experiment{{Name: "men", Graph: "co_review", Features: "embeddings", Models: []ModelResult{
		{Model: "lmt", Title: "LMT", TestError: 0.30, PaperError: nan},
		{Model: "monomer", Title: "Monomer", TestError: 0.24, PaperError: nan},
	}}}
	tables := PaperTables(exps)
	if len(tables) != 1 || tables[0].Title != "Embeddings the user brought (data.embeddings)" {
		t.Fatalf("tables %+v", tables)
	}
	r := tables[0].Rows
	if len(r) != 1 || r[0].Name != "men" || len(r[0].Cells) != 2 || r[0].Cells[0] != "30.00%" || r[0].Cells[1] != "24.00%" || r[0].Impr != "20%" {
		t.Errorf("rows %+v", r)
	}
}

package synth_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"monomer/amazon"
	"monomer/catalogue"
	"monomer/synth"
)

// TestCatalogueStats: WriteCatalogue's counts are those of the tables it
// wrote: Relations every row of the relations table, AlsoBought,
// AlsoViewed and BoughtTogether the rows of the relation named after each
// graph, RelationBytes the file's size. AlsoBought once held every
// relation row (and gen printed it as the table's rows).
func TestCatalogueStats(t *testing.T) {
	w := tinyWorld(t, 1)
	for _, asCSV := range []bool{false, true} {
		t.Run(fmt.Sprint("csv=", asCSV), func(t *testing.T) {
			dir := t.TempDir()
			st, err := synth.WriteCatalogue(context.Background(), dir, "Shop", w, asCSV, synth.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, relations, _, _ := synth.FilesCatalogue(dir, "Shop", asCSV)
			rst, err := catalogue.ReadRelations(context.Background(), relations, "",
				func(*catalogue.Relation) error { return nil }, func(j amazon.Reject) { t.Errorf("reject %+v", j) })
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(relations)
			if err != nil {
				t.Fatal(err)
			}
			got := [5]int64{st.Relations, st.AlsoBought, st.AlsoViewed, st.BoughtTogether, st.RelationBytes}
			want := [5]int64{rst.Rows, rst.Relations[synth.CatalogueRelations[synth.AlsoBought]],
				rst.Relations[synth.CatalogueRelations[synth.AlsoViewed]], rst.Relations[synth.CatalogueRelations[synth.BoughtTogether]], fi.Size()}
			if got != want || want[1] == 0 || want[2] == 0 || want[1] == want[0] {
				t.Errorf("stats (relations, also_bought, also_viewed, bought_together, bytes) %v, the table holds %v", got, want)
			}
		})
	}
}

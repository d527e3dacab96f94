package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"monomer/models"
	"monomer/pipeline"
	"monomer/report"
	"monomer/stages"
)

// oneLine puts a catalogue string on one table cell: raw titles hold tabs
// and line breaks.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

type recommendFlags struct {
	experiment, model, asin string
	k                       int
	json, cross             bool
}

// recommendExample runs on the demo run (make run): B0PIS3DABW, a shoe,
// is in both of its experiments (TestDemoDeterminismAndSkips
// runs these lines).
const recommendExample = `  monomer recommend runs/demo --experiment men-also_bought-image --asin B0PIS3DABW
  monomer recommend runs/demo --experiment men-also_bought-bow --model lmt --asin B0PIS3DABW --k 5 --json
  monomer recommend runs/demo --experiment men-also_bought-image --model lmt --asin B0PIS3DABW --cross`

func newRecommendCommand() *cobra.Command {
	var flags recommendFlags
	cmd := &cobra.Command{
		Use:   "recommend RUNDIR --experiment E --asin A [--model monomer] [--k 10] [--cross] [--json]",
		Short: "Answer one query from a finished run: the items a model recommends for an item",
		Long: `recommend loads one trained model of a finished run (its train stage's
parameters and the experiment's features) and prints the k items with the
highest P(related) for the item A among every item of the experiment with
features, whatever its subcategory: exact, not approximate. Each line has the
item's probability, distance (which ranks the list: LMT's probabilities
often saturate near 0 or 1, printed then as "4.1e-07" or "1 − 3.2e-05"),
for Monomer the space (notion of relatedness) that put it there, and the
item's subcategory and title. With --cross the query's own subcategory is
left out: the cross-category lists of the paper's section V (LMT needs that
taxonomy filter; Monomer's lists cross subcategories without it). It reads
only.

` + exitCodesHelp,
		Example: recommendExample,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := flags
			for _, f := range []struct{ name, v string }{{"experiment", o.experiment}, {"asin", o.asin}} {
				if f.v == "" {
					return fmt.Errorf("%w: recommend needs --%s (see --help)", pipeline.ErrUsage, f.name)
				}
			}
			ans, err := stages.RecommendOne(cmd.Context(), args[0], o.experiment, o.model, o.asin, o.k, o.cross)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if o.json {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(ans)
			}
			other := ""
			if ans.Cross {
				other = ", from other subcategories"
			}
			fmt.Fprintf(w, "%s recommends for %s %q (%s)%s:\n", ans.Model, ans.ASIN, ans.Title, ans.Subcategory, other)
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			// Only Monomer has spaces. The distance ranks the list where
			// the probabilities saturate (LMT's often do).
			m, err := models.Lookup(ans.Model)
			if err != nil {
				return err
			}
			spaces := m.Spaces()
			head := "rank\tasin\tprobability\tdistance\t"
			if spaces {
				head += "space\t"
			}
			fmt.Fprintln(tw, head+"subcategory\ttitle")
			for _, it := range ans.Items {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%.4g\t", it.Rank, it.ASIN, report.Prob(it.Probability), it.Distance)
				if spaces {
					fmt.Fprintf(tw, "%d\t", it.Space)
				}
				fmt.Fprintf(tw, "%s\t%s\n", oneLine(it.Subcategory), oneLine(cmp.Or(it.Title, "(untitled)")))
			}
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&flags.experiment, "experiment", "", "the experiment (required)")
	f.StringVar(&flags.model, "model", models.ModelMonomer, stages.RetrievableNames())
	f.StringVar(&flags.asin, "asin", "", "the query item (required)")
	f.IntVar(&flags.k, "k", 10, "number of items")
	f.BoolVar(&flags.json, "json", false, "print the answer as JSON")
	f.BoolVar(&flags.cross, "cross", false, "leave out items of the query's own subcategory")
	return cmd
}

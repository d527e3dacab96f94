package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"monomer/pipeline"
	"monomer/stages"
)

type recommendFlags struct {
	experiment, model, asin string
	k                       int
	json, cross             bool
}

func newRecommendCommand() *cobra.Command {
	var flags recommendFlags
	cmd := &cobra.Command{
		Use:   "recommend RUNDIR --experiment E --asin A [--model monomer] [--k 10] [--cross] [--json]",
		Short: "Answer one query from a finished run: the items a model recommends for an item",
		Long: `recommend loads one trained model of a finished run (its train stage's
parameters and the experiment's features) and prints the k items with the
highest P(related) for the item A among every item of the experiment with
features, whatever its subcategory: exact, not approximate. Each line has the
item's title, subcategory, probability and, for Monomer, the space (notion of
relatedness) that put it there. With --cross the query's own subcategory is
left out: the cross-category lists of the paper's section V (LMT needs that
taxonomy filter; Monomer's lists cross subcategories without it). It reads
only.

` + exitCodesHelp,
		Example: `  monomer recommend runs/demo --experiment men-also_bought-image --asin B000000001
  monomer recommend runs/demo --experiment men-also_bought-image --model lmt --asin B000000001 --k 5 --json
  monomer recommend runs/demo --experiment men-also_bought-image --model lmt --asin B000000001 --cross`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := flags
			for _, f := range []struct{ name, v string }{{"experiment", o.experiment}, {"asin", o.asin}} {
				if f.v == "" {
					return fmt.Errorf("%w: recommend needs --%s (see --help)", pipeline.ErrUsage, f.name)
				}
			}
			ans, err := stages.RecommendOne(args[0], o.experiment, o.model, o.asin, o.k, o.cross)
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
			fmt.Fprintln(tw, "rank\tasin\tprobability\tspace\tsubcategory\ttitle")
			for _, it := range ans.Items {
				fmt.Fprintf(tw, "%d\t%s\t%.4f\t%d\t%s\t%s\n", it.Rank, it.ASIN, it.Probability, it.Space, it.Subcategory, it.Title)
			}
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&flags.experiment, "experiment", "", "the experiment (required)")
	f.StringVar(&flags.model, "model", "monomer", "wnn, lda, lmt or monomer")
	f.StringVar(&flags.asin, "asin", "", "the query item (required)")
	f.IntVar(&flags.k, "k", 10, "number of items")
	f.BoolVar(&flags.json, "json", false, "print the answer as JSON")
	f.BoolVar(&flags.cross, "cross", false, "leave out items of the query's own subcategory")
	return cmd
}

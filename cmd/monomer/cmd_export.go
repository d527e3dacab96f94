package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"monomer/models"
	"monomer/pipeline"
	"monomer/stages"
)

type exportFlags struct {
	experiment, model, out string
	wnnFeatures            bool
}

// exportExample runs on the demo run (make run).
const exportExample = `  monomer export runs/demo --experiment men-also_bought-image --out men-image-monomer
  monomer export runs/demo --experiment men-also_bought-bow --model lmt --out men-bow-lmt
  monomer export runs/demo --experiment men-also_bought-image --model wnn --wnn-features --out men-image-wnn`

func newExportCommand() *cobra.Command {
	var flags exportFlags
	cmd := &cobra.Command{
		Use:   "export RUNDIR --experiment E [--model monomer] --out DIR",
		Short: "Write a trained model's item vectors for a vector index (FAISS, pgvector, DuckDB)",
		Long: `export writes, for every item of the experiment with features, the trained
model's vectors in inner-product form: query_vector q(x) and item_vector
v(y), so that ranking items by q(x)·v(y), largest first, is ranking them
by the model's distance (the exact lists of recommend and publish, up to
float32 near-ties), and P(related) = σ(c − query_offset(x) + q(x)·v(y)),
c in model.json. DIR gets vectors.parquet (id, query_vector, item_vector
as fixed_size_list<float>, query_offset), the same as ids.npy,
query_vectors.npy, item_vectors.npy and query_offsets.npy, model.json
(model, experiment, dimensions, metric, c, versions, the features'
parameters) and, for bag-of-words experiments, the run's
vocabulary.parquet; score/ holds copies of the run's tables that
` + "`monomer score --model-dir DIR`" + ` reads in place of the run (items'
ids and subcategories, features, fitted parameters, the publish: exclude
table), each with its sha256 in model.json. lmt and monomer; wnn only with --wnn-features, since
its item side is the features themselves (feature dimension + 1 floats an
item, twice: 33 KB an item for image features); lda is refused, its topic
proportions needing inference for new text. DIR must not exist or be
empty; the run is only read. See docs/serving.md.

` + exitCodesHelp,
		Example: exportExample,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := flags
			for _, f := range []struct{ name, v string }{{"experiment", o.experiment}, {"out", o.out}} {
				if f.v == "" {
					return fmt.Errorf("%w: export needs --%s (see --help)", pipeline.ErrUsage, f.name)
				}
			}
			sum, err := stages.Export(cmd.Context(), stages.ExportOptions{RunDir: args[0], Experiment: o.experiment,
				Model: o.model, Out: o.out, Version: versionLine(), WNNFeatures: o.wnnFeatures})
			if err != nil {
				return err
			}
			m := sum.Model
			fmt.Fprintf(cmd.OutOrStdout(), "exported %s of %s: %d items, vectors of %d floats, c = %.6g, to %s\n",
				m.Model, m.Experiment, m.Items, m.Dimension, m.C, sum.Dir)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&flags.experiment, "experiment", "", "the experiment (required)")
	f.StringVar(&flags.model, "model", models.ModelMonomer, "lmt or monomer (wnn with --wnn-features)")
	f.BoolVar(&flags.wnnFeatures, "wnn-features", false, "export a wnn: its vectors are the features themselves, feature dimension + 1 floats an item")
	f.StringVar(&flags.out, "out", "", "the directory to write (required; must not exist or be empty, outside the run)")
	return cmd
}

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"monomer/pipeline"
	"monomer/stages"
)

type scoreFlags struct {
	experiment, model, items, text, out string
	modelDir                            string
	images, embeddings                  string
	k                                   int
}

const scoreExample = `  monomer score runs/demo --experiment men-also_bought-bow --items meta_New.json.gz --text reviews_New.json.gz --out scored/today
  monomer score runs/shop --experiment shoes --model lmt --items new_items.csv --text new_text.csv --out scored/2026-12-02
  monomer score --model-dir men-bow-monomer --items meta_New.json.gz --text reviews_New.json.gz --out scored/today`

func newScoreCommand() *cobra.Command {
	var flags scoreFlags
	cmd := &cobra.Command{
		Use:   "score (RUNDIR --experiment E | --model-dir DIR) --items FILE (--text FILE | --image-features FILE | --embeddings FILE) --out DIR [--model M] [--k 10]",
		Short: "Score new items through a finished run's trained model, without retraining",
		Long: `score places items a run never saw (products added today) with the run's
trained parameters and lists, for each, the items of the run's catalogue and
of the new items themselves that the model relates it to, under the
experiment's publish: rules (k, cross_subcategory, min_probability,
exclude). The inputs are in the experiment's own format: a catalogue's items
and text tables (docs/catalogue.md), or an Amazon metadata and reviews file.

Each new item is scoped as ingest scopes the run's items (outside the
experiment's category, or without a subcategory at its depth, it is a
reject with that reason), featurised by the features stage's own code (the
run's stored vocabulary, image_scale, or the embeddings' checks), and
projected and ranked by the publish stage's code: an item of the run given
again gets exactly the list and probabilities the run's publish table gave
it. An item whose id is an item of the run is scored with its new
features, its copy in the run left out of its list; the run's copy stays
the candidate others see. LDA, which needs topic inference, is refused.

DIR (new, or empty) gets recommendations.parquet (the publish table's
schema), vectors.parquet (each new item's vectors as monomer export writes
them), rejects.parquet (the readers' rejects, the scope's, and items with
no usable features) and manifest.json (the run, model, code versions,
rules, projection path, inputs and outputs with their sha256), whole or
not at all. Nothing in RUNDIR changes. A run made by another train,
features, ingest or publish code version is refused with one line naming
both, as are embeddings of another dimension (exit 3).

--model-dir DIR reads a ` + "`monomer export`" + ` directory in place of RUNDIR:
the export holds copies of what score reads of the run (the items'
ids and subcategories, the features, the fitted parameters and c, the
publish: rules and exclude table), each with its sha256 in model.json, and
score reads them by the same code, so the lists are the bytes a score of
the run gives. A file whose sha256 is not model.json's, or an export of
another code version, is refused with one line (exit 3). --experiment and
--model may be left out (the export's). See docs/scoring.md.

` + exitCodesHelp,
		Example: scoreExample,
		Args: func(cmd *cobra.Command, args []string) error {
			if flags.modelDir != "" {
				if len(args) != 0 {
					return fmt.Errorf("%w: score reads RUNDIR or --model-dir, not both (see %s --help)", pipeline.ErrUsage, cmd.CommandPath())
				}
				return nil
			}
			return exactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o := flags
			run := ""
			need := []struct{ name, v string }{{"items", o.items}, {"out", o.out}}
			if o.modelDir == "" {
				run = args[0]
				need = append(need, struct{ name, v string }{"experiment", o.experiment})
			}
			for _, f := range need {
				if f.v == "" {
					return fmt.Errorf("%w: score needs --%s (see --help)", pipeline.ErrUsage, f.name)
				}
			}
			if o.k < 0 {
				return fmt.Errorf("%w: --k %d must be positive", pipeline.ErrUsage, o.k)
			}
			sum, err := stages.Score(cmd.Context(), stages.ScoreOptions{RunDir: run, ModelDir: o.modelDir, Experiment: o.experiment, Model: o.model,
				Items: o.items, Text: o.text, ImageFeatures: o.images, Embeddings: o.embeddings, K: o.k, Out: o.out})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d items read, %d scored (%d of them items of the run), %d rejects; lists in %s\n",
				sum.Model, sum.Items, sum.Scored, sum.InRun, sum.Rejects, o.out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&flags.experiment, "experiment", "", "the experiment (required with RUNDIR)")
	f.StringVar(&flags.modelDir, "model-dir", "", "a `monomer export` directory to score with in place of RUNDIR")
	f.StringVar(&flags.model, "model", "", "the model: "+stages.RetrievableNames()+` but lda (default: the publish: block's, else monomer)`)
	f.StringVar(&flags.items, "items", "", "the new items: a catalogue items table or an Amazon metadata file (required)")
	f.StringVar(&flags.text, "text", "", "the new items' documents: a catalogue text table or an Amazon reviews file (bag of words)")
	f.StringVar(&flags.images, "image-features", "", "the new items' image-feature file (.b), for features: image")
	f.StringVar(&flags.embeddings, "embeddings", "", "the new items' embeddings (Parquet, or .npy beside its ids), for features: embeddings")
	f.StringVar(&flags.out, "out", "", "the directory to write, new or empty, outside the run (required)")
	f.IntVar(&flags.k, "k", 0, "list length when the experiment has no publish: block (0: 10, at most 1000; refused with one, whose k the lists follow)")
	return cmd
}

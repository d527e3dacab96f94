package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"monomer/pipeline"
	"monomer/synth"
)

type genFlags struct {
	scale        string
	seed         uint64
	out          string
	name         string
	gzipFeatures bool
	workers      int
}

func newGenCommand() *cobra.Command {
	var flags genFlags
	cmd := &cobra.Command{
		Use:   "gen --scale tiny|small|medium|women --seed N --out DIR [--name NAME]",
		Short: "Generate synthetic data in the Amazon formats, with planted structure",
		Long: `gen writes DIR/meta_NAME.json.gz (2014 Python-literal metadata),
DIR/reviews_NAME.json.gz (JSON lines) and DIR/image_features_NAME.b (ASIN +
4096 float32 per record) for a synthetic world whose relations the models can
learn; see the synth package documentation for the generative model.

Scales: tiny (1,900 image items: the committed demo data), small (20,000),
medium (100,000), women (659,566 items and a 10.8 GB .b file, the paper's
largest category). The same --seed gives byte-identical files whatever the
number of workers.

` + exitCodesHelp,
		Example: `  monomer gen --scale tiny --seed 1 --out testdata/amazon --name Demo`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runGen(cmd, &flags) },
	}
	f := cmd.Flags()
	f.StringVar(&flags.scale, "scale", "", "data set size: tiny, small, medium or women (required)")
	f.Uint64Var(&flags.seed, "seed", 1, "random seed")
	f.StringVar(&flags.out, "out", "", "output directory, created if missing (required)")
	f.StringVar(&flags.name, "name", "Clothing_Shoes_and_Jewelry", "data set name in the file names")
	f.BoolVar(&flags.gzipFeatures, "gzip-features", false, "gzip the .b file (default true for tiny, false otherwise)")
	f.IntVar(&flags.workers, "workers", 0, "generator goroutines (0: GOMAXPROCS); the output does not depend on it")
	return cmd
}

func runGen(cmd *cobra.Command, flags *genFlags) error {
	if flags.scale == "" || flags.out == "" {
		return fmt.Errorf("%w: gen needs --scale and --out", pipeline.ErrUsage)
	}
	cfg, err := synth.Scale(flags.scale)
	if err != nil {
		return fmt.Errorf("%w: %v", pipeline.ErrUsage, err)
	}
	gz := flags.gzipFeatures
	if !cmd.Flags().Changed("gzip-features") {
		gz = flags.scale == "tiny"
	}
	if err := os.MkdirAll(flags.out, 0o755); err != nil {
		return err
	}

	start := time.Now()
	w, err := synth.NewWorld(cfg, flags.seed)
	if err != nil {
		if errors.Is(err, synth.ErrConfig) {
			return fmt.Errorf("%w: %v", pipeline.ErrUsage, err)
		}
		return err
	}
	fmt.Fprintf(os.Stderr, "%v (%.1fs)\n", w, time.Since(start).Seconds())

	opts := synth.WriteOptions{GzipFeatures: gz, Workers: flags.workers}
	if info, err := os.Stderr.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
		bar := progressbar.NewOptions64(int64(len(w.Items)+w.Records()),
			progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionSetDescription("gen "+flags.scale),
			progressbar.OptionShowCount(),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish())
		opts.Progress = func(done, _ int64) { bar.Set64(done) }
		defer bar.Finish()
	}
	st, err := synth.Write(cmd.Context(), flags.out, flags.name, w, opts)
	if err != nil {
		return err
	}
	meta, reviews, feats := synth.Files(flags.out, flags.name)
	fmt.Printf("%s\t%d lines\t%d bytes\n", meta, st.MetaLines, st.MetaBytes)
	fmt.Printf("%s\t%d lines\t%d bytes\n", reviews, st.ReviewLines, st.ReviewBytes)
	fmt.Printf("%s\t%d records\t%d bytes\n", feats, st.Records, st.FeatureBytes)
	fmt.Fprintf(os.Stderr, "done in %.1fs\n", time.Since(start).Seconds())
	return nil
}

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"monomer/imagefeat"
	"monomer/job"
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
	fraction     float64
	format       string
	dim          int
	csv          bool
	day          int
}

func newGenCommand() *cobra.Command {
	var flags genFlags
	cmd := &cobra.Command{
		Use:   "gen --scale tiny|small|medium|women|men|...|baby|elect|...|table3 --seed N --out DIR [--name NAME] [--format 2023|catalogue [--csv] [--dim N]] [--day 2]",
		Short: "Generate synthetic data in the Amazon formats, with planted structure",
		Long: `gen writes DIR/meta_NAME.json.gz (2014 Python-literal metadata),
DIR/reviews_NAME.json.gz (JSON lines) and DIR/image_features_NAME.b (ASIN +
4096 float32 per record) for a synthetic world whose relations the models can
learn; see the synth package documentation for the generative model.

Scales: tiny (1,900 image items: the committed demo data), small (20,000),
medium (100,000), women (659,566 items and a 10.8 GB .b file, the paper's
largest category); men, boys, girls and baby write the other tops of the
paper's Table 1 at their sizes (Baby: 36,588 items). The same --seed gives byte-identical files whatever the
number of workers.

Text scales (the paper's Table 3, no image features): elect, auto, games,
movies, office, home, phones write one category each under its 2014 file
name (meta_Electronics.json.gz, reviews_Electronics.json.gz, ...), with the
paper's subcategory, item and edge counts; table3 writes all seven.
--fraction shrinks the items (and with them edges and reviews) of any scale.

--format 2023 writes the 2023 release's layout instead: DIR/meta_NAME.jsonl.gz,
DIR/NAME.jsonl.gz (reviews keyed by parent_asin, with user ids and times in
milliseconds) and DIR/embeddings_NAME.parquet (the image features as an
embeddings table, parent_asin and embedding). There is no related list: the
planted also_bought relation is in the reviews, as buyers who review x and
then y within three weeks, for graph: co_review to find. --dim sets the
feature dimension (default 4096, at most 1048576, the most run reads; the
2014 layout's .b file is 4096 only); jobs/synthetic-2023.yaml runs such a
world. A world's files appear together once all are written, so a gen that
fails (a full disk, an interrupt) leaves none of them.

--format catalogue writes the world as a shop's own tables (data.format:
catalogue; docs/catalogue.md): DIR/items_NAME.parquet (id, title, brand,
categories), DIR/relations_NAME.parquet (src, dst, relation: the planted
also_bought as bought_together, also_viewed as viewed_together, Amazon's
bought_together as bundle), DIR/text_NAME.parquet (id, summary, text: the
reviews) and DIR/embeddings_NAME.parquet (id, embedding: the image
features); --csv writes the three tables as CSV instead. --dim applies;
jobs/catalogue-demo.yaml runs such a world.

--day 2 writes the world of the next night, in any layout: with the same
--seed and --scale as day 1, 3 % of the Regular items are new (from the same
planted structure), 2 % are gone, and 2 % more also_bought and also_viewed
pairs join the items both days have; every other item keeps its ASIN,
features and reviews (synth.World.Day). A warm run from day 1's trains on
it (docs/scheduling.md, "Warm starts").

` + exitCodesHelp,
		Example: `  monomer gen --scale tiny --seed 1 --out testdata/amazon --name Demo`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runGen(cmd, &flags) },
	}
	f := cmd.Flags()
	f.StringVar(&flags.scale, "scale", "", "data set: tiny, small, medium, women, men, boys, girls, baby (Table 1 sizes), or a Table 3 text category at its size: elect, auto, games, movies, office, home, phones, table3 (all seven) (required)")
	f.Uint64Var(&flags.seed, "seed", 1, "random seed")
	f.StringVar(&flags.out, "out", "", "output directory, created if missing (required)")
	f.StringVar(&flags.name, "name", "Clothing_Shoes_and_Jewelry", "data set name in the file names (text scales: the category's, e.g. Electronics)")
	f.BoolVar(&flags.gzipFeatures, "gzip-features", false, "gzip the .b file (default true for tiny, false otherwise)")
	f.IntVar(&flags.workers, "workers", 0, "generator goroutines (0: GOMAXPROCS); the output does not depend on it")
	f.Float64Var(&flags.fraction, "fraction", 1, "generate this fraction of the scale's items, in (0, 1]")
	f.StringVar(&flags.format, "format", "", `file layout: "" (the 2014 release's), 2023 or catalogue`)
	f.BoolVar(&flags.csv, "csv", false, "with --format catalogue: write the items, relations and text tables as CSV, not Parquet")
	f.IntVar(&flags.day, "day", 1, "1, or 2 for the next night's world of the same --seed and --scale: 3 % new items, 2 % removed, 2 % new pairs (docs/scheduling.md)")
	f.IntVar(&flags.dim, "dim", 0, "image-feature dimension (0: 4096); other than 4096 only with --format 2023 or catalogue, at most 1048576")
	return cmd
}

func runGen(cmd *cobra.Command, flags *genFlags) error {
	if flags.scale == "" || flags.out == "" {
		return fmt.Errorf("%w: gen needs --scale and --out", pipeline.ErrUsage)
	}
	cfgs, err := synth.ScaleSet(flags.scale)
	if err != nil {
		return fmt.Errorf("%w: %v", pipeline.ErrUsage, err)
	}
	for i := range cfgs {
		if cfgs[i], err = cfgs[i].Shrunk(flags.fraction); err != nil {
			return fmt.Errorf("%w: --fraction: %v", pipeline.ErrUsage, err)
		}
		// --name renames a single world; table3's seven keep their names.
		if len(cfgs) == 1 && (cmd.Flags().Changed("name") || cfgs[i].Name == "") {
			cfgs[i].Name = flags.name
		}
	}
	if cmd.Flags().Changed("name") && !job.ValidName(flags.name) {
		// It is a part of every file name: a "/" or ".." would put the
		// files elsewhere than --out.
		return fmt.Errorf("%w: --name %q: letters, digits, '.', '_' or '-' only, starting with a letter or digit (it is part of the file names)", pipeline.ErrUsage, flags.name)
	}
	if flags.format != "" && flags.format != "2023" && flags.format != "catalogue" {
		return fmt.Errorf("%w: --format %q: want 2023, catalogue or nothing", pipeline.ErrUsage, flags.format)
	}
	if flags.day != 1 && flags.day != 2 {
		return fmt.Errorf("%w: --day %d: 1 (the world of --seed) or 2 (the next night's)", pipeline.ErrUsage, flags.day)
	}
	if flags.csv && flags.format != "catalogue" {
		return fmt.Errorf("%w: --csv applies to --format catalogue only", pipeline.ErrUsage)
	}
	switch {
	case flags.dim < 0:
		return fmt.Errorf("%w: --dim %d must be positive", pipeline.ErrUsage, flags.dim)
	case flags.dim > imagefeat.MaxEmbeddingDim:
		return fmt.Errorf("%w: --dim %d is above %d, the largest embedding dimension run reads", pipeline.ErrUsage, flags.dim, imagefeat.MaxEmbeddingDim)
	case flags.dim != 0 && flags.dim != imagefeat.Dim && flags.format == "":
		// The .b format has no header: run reads 4096 floats a record.
		return fmt.Errorf("%w: --dim %d: the 2014 layout's .b file holds %d floats per record, the only dimension run reads from it; use --format 2023 or catalogue for another dimension (an embeddings table, features: embeddings)", pipeline.ErrUsage, flags.dim, imagefeat.Dim)
	}
	for i := range cfgs {
		cfgs[i].FeatureDim = flags.dim
	}
	gz := flags.gzipFeatures
	if !cmd.Flags().Changed("gzip-features") {
		gz = flags.scale == "tiny"
	}
	_, statErr := os.Stat(flags.out)
	if err := os.MkdirAll(flags.out, 0o755); err != nil {
		// A file in the way, no permission, a read-only disk: the same
		// command fails the same way again.
		for _, permanent := range []error{syscall.ENOTDIR, fs.ErrExist, fs.ErrPermission, syscall.EROFS, syscall.ENAMETOOLONG} {
			if errors.Is(err, permanent) {
				return fmt.Errorf("%w: --out %s cannot be made a folder: %v", pipeline.ErrUsage, flags.out, err)
			}
		}
		return err
	}
	for _, cfg := range cfgs {
		if err := genOne(cmd, flags, cfg, gz); err != nil {
			// A world's files appear together or not at all (synth.Write);
			// a folder this run made and left empty goes too.
			if errors.Is(statErr, fs.ErrNotExist) {
				os.Remove(flags.out) // only if empty
			}
			return err
		}
	}
	return nil
}

// genOne generates and writes one world.
func genOne(cmd *cobra.Command, flags *genFlags, cfg synth.Config, gz bool) error {
	start := time.Now()
	w, err := synth.NewWorld(cfg, flags.seed)
	if err == nil {
		err = w.Day(flags.day)
	}
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
			progressbar.OptionSetDescription("gen "+cfg.Scale),
			progressbar.OptionShowCount(),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish())
		opts.Progress = func(done, _ int64) { bar.Set64(done) }
		defer bar.Finish()
	}
	name := w.Config.Name
	if flags.format == "2023" {
		return gen2023(cmd, flags, w, opts, start)
	}
	if flags.format == "catalogue" {
		return genCatalogue(cmd, flags, w, opts, start)
	}
	st, err := synth.Write(cmd.Context(), flags.out, name, w, opts)
	if err != nil {
		return err
	}
	meta, reviews, feats := synth.Files(flags.out, name)
	fmt.Printf("%s\t%d lines\t%d bytes\n", meta, st.MetaLines, st.MetaBytes)
	fmt.Printf("%s\t%d lines\t%d bytes\n", reviews, st.ReviewLines, st.ReviewBytes)
	if w.Records() > 0 {
		fmt.Printf("%s\t%d records\t%d bytes\n", feats, st.Records, st.FeatureBytes)
	}
	fmt.Fprintf(os.Stderr, "done in %.1fs\n", time.Since(start).Seconds())
	return nil
}

// gen2023 writes one world in the 2023 layout.
func gen2023(cmd *cobra.Command, flags *genFlags, w *synth.World, opts synth.WriteOptions, start time.Time) error {
	name := w.Config.Name
	st, err := synth.Write2023(cmd.Context(), flags.out, name, w, opts)
	if err != nil {
		return err
	}
	meta, reviews, emb := synth.Files2023(flags.out, name)
	fmt.Printf("%s\t%d lines\t%d bytes\n", meta, st.MetaLines, st.MetaBytes)
	fmt.Printf("%s\t%d lines\t%d bytes\n", reviews, st.ReviewLines, st.ReviewBytes)
	if st.Records > 0 {
		fmt.Printf("%s\t%d rows\t%d bytes\n", emb, st.Records, st.FeatureBytes)
	}
	fmt.Fprintf(os.Stderr, "done in %.1fs\n", time.Since(start).Seconds())
	return nil
}

// genCatalogue writes one world as catalogue tables.
func genCatalogue(cmd *cobra.Command, flags *genFlags, w *synth.World, opts synth.WriteOptions, start time.Time) error {
	name := w.Config.Name
	st, err := synth.WriteCatalogue(cmd.Context(), flags.out, name, w, flags.csv, opts)
	if err != nil {
		return err
	}
	items, relations, text, emb := synth.FilesCatalogue(flags.out, name, flags.csv)
	fmt.Printf("%s\t%d rows\t%d bytes\n", items, st.MetaLines, st.MetaBytes)
	fmt.Printf("%s\t%d rows\t%d bytes\n", relations, st.Relations, st.RelationBytes)
	fmt.Printf("%s\t%d rows\t%d bytes\n", text, st.ReviewLines, st.ReviewBytes)
	if st.Records > 0 {
		fmt.Printf("%s\t%d rows\t%d bytes\n", emb, st.Records, st.FeatureBytes)
	}
	fmt.Fprintf(os.Stderr, "done in %.1fs\n", time.Since(start).Seconds())
	return nil
}

package stages

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"monomer/graph"
	"monomer/job"
	"monomer/models"
	"monomer/pipeline"
	"monomer/pipeline/cache"
	"monomer/schema"
)

// warmParams name the previous fit a train node starts from (warm_from,
// docs/scheduling.md, "Warm starts"). The key holds the predecessor's
// stage versions and, through Files, the content of its fits, parameters
// and vocabulary, so a changed predecessor retrains; its location is not
// keyed. Zero when warm_from is not set, which keeps the keys of cold
// jobs as they were.
type warmParams struct {
	// Missing says why warm_from names no usable predecessor ("" when it
	// does): the fit starts cold, with a WARN saying so. Keyed as a fixed
	// token (trainParams.MarshalJSON): the reason names paths, which would
	// make the key depend on where the run root lies.
	Missing string `json:"missing,omitempty"`
	// TrainVersion and FeaturesVersion are the code versions of the
	// predecessor's train.<model> and features nodes.
	TrainVersion    string `json:"train_version,omitempty"`
	FeaturesVersion string `json:"features_version,omitempty"`
	// Dir is the predecessor's train.<model> directory, Vocabulary its
	// features' vocabulary.parquet for bag-of-words features.
	Dir        string `json:"-"`
	Vocabulary string `json:"-"`
	// Leak says why tonight's test pairs can hold pairs the predecessor
	// trained on ("" when both runs split stable). Not keyed: tonight's
	// split is in the split node's key upstream, the predecessor's in the
	// fits keyed through Files.
	Leak string `json:"-"`
}

// Files are the predecessor's tables the warm start reads.
func (w warmParams) Files() []string {
	if w.Dir == "" {
		return nil
	}
	f := []string{filepath.Join(w.Dir, "fits.parquet"), filepath.Join(w.Dir, "params.parquet")}
	if w.Vocabulary != "" {
		f = append(f, w.Vocabulary)
	}
	return f
}

// Files are the raw files train.<model> reads: the predecessor's, if any.
func (p trainParams) Files() []string { return p.Warm.Files() }

// predecessorRun is the run directory warm_from (or vocabulary_from)
// names for experiment e: the path itself, or for "published" the run the
// experiment's publish compares with (previousRun: its own gate.json on a
// rerun, else the published link), so that a rerun after this run was
// published does not start from itself. why says why there is none.
func predecessorRun(e *job.Resolved, from string) (dir, why string) {
	if from != job.ReservedName {
		own := e.RunDir
		if e.RunRoot != "" {
			own = filepath.Join(e.RunRoot, e.RunID)
		}
		if own != "" && sameDir(from, own) {
			// Its own outputs would change its key on every run.
			return "", fmt.Sprintf("%s is this run's own directory", from)
		}
		return from, ""
	}
	if e.RunRoot == "" {
		return "", "warm_from: published needs a root of runs (--run-id)"
	}
	id := previousRun(e.RunRoot, e.RunID, e.Name)
	if id == "" {
		return "", fmt.Sprintf("experiment %s has no published run in %s yet", e.Name, e.RunRoot)
	}
	return filepath.Join(e.RunRoot, id), ""
}

// sameDir says whether paths a and b name one directory: the same file
// once both exist, else the same cleaned absolute path (a run directory is
// made by the run, so on its first run it may not exist yet).
func sameDir(a, b string) bool {
	if fa, err := os.Stat(a); err == nil {
		if fb, err := os.Stat(b); err == nil {
			return os.SameFile(fa, fb)
		}
	}
	a, errA := filepath.Abs(a)
	b, errB := filepath.Abs(b)
	return errA == nil && errB == nil && a == b
}

// stageVersion is the version part of a node's code ("v2.13.0 go1.26.8/amd64
// [...]" → "2.13.0") recorded in the manifest in dir, or "" if it cannot be
// read.
func stageVersion(dir string) string {
	m, err := cache.ReadManifest(dir)
	if err != nil {
		return ""
	}
	v, _, _ := strings.Cut(m.Inputs.Code, " ")
	return strings.TrimPrefix(v, "v")
}

// warmFor resolves warm_from for node train.<model> of e at plan time.
func warmFor(e *job.Resolved, model string) warmParams {
	if e.WarmFrom == "" || registered(model).Counted {
		return warmParams{}
	}
	run, why := predecessorRun(e, e.WarmFrom)
	if why != "" {
		return warmParams{Missing: why}
	}
	dir := filepath.Join(run, e.Name, pipeline.PartName(Train{}.Name(), model))
	for _, f := range []string{"fits.parquet", "params.parquet"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return warmParams{Missing: fmt.Sprintf("%s has no %s (no finished %s fit there)", dir, f, model)}
		}
	}
	w := warmParams{Dir: dir, TrainVersion: stageVersion(dir)}
	w.Leak = splitLeak(e.Settings.Split.Get(), filepath.Join(run, e.Name, Split{}.Name()))
	feat := filepath.Join(run, e.Name, Features{}.Name())
	w.FeaturesVersion = stageVersion(feat)
	if e.Features == "bow" {
		w.Vocabulary = filepath.Join(feat, "vocabulary.parquet")
		if _, err := os.Stat(w.Vocabulary); err != nil {
			return warmParams{Missing: fmt.Sprintf("%s has no bag-of-words vocabulary to map the parameters through", feat)}
		}
	}
	return w
}

// splitLeak says how a warm start's test pairs can include pairs its
// predecessor trained on: under any split but stable, a pair is dealt
// afresh each night (about 40 % of a day-2 test split were day 1's
// training pairs, BENCHMARKS.md), and a predecessor that did not split
// stable dealt its pairs by another rule. "" when both split stable.
func splitLeak(split, predSplitDir string) string {
	if split != graph.SplitStable {
		return fmt.Sprintf("this run splits %s, so its validation and test pairs include pairs the predecessor trained on: its test error is optimistic and the gate's max_error_increase lenient; set split: stable (docs/scheduling.md)", cmp.Or(split, graph.SplitPaper))
	}
	var p string
	if m, err := cache.ReadManifest(predSplitDir); err == nil {
		p, _ = m.Stats["protocol"].(string)
	}
	if p != graph.SplitStable {
		return fmt.Sprintf("the predecessor did not split stable (%s), so pairs it trained on can be in this run's test split; once both runs split stable, none are", cmp.Or(p, "its split unread"))
	}
	return ""
}

// warmStart reads the predecessor's fit of model and maps it onto this
// run's features (dim rows; vocab the terms of a bag of words, nil for
// dense features). A nil start with a warning is a cold start and why:
//   - no predecessor (warmParams.Missing);
//   - LDA+WNN, whose weights act on topics that LDA refits each run, so a
//     topic of yesterday is not today's;
//   - another Features version in the predecessor: the values its
//     parameters act on may mean something else (another weighting or
//     scale), which no mapping can know;
//   - another shape (K, N, or dense features of another dimension).
//
// Another Train version maps: the parameters act on raw features, and
// their layout is checked as any saved fit's is (models.NewFit); a
// warning says the versions.
func warmStart(ctx context.Context, w warmParams, spec models.Spec, model string, dim int, vocab []string) (*models.Start, []pipeline.Warning, error) {
	if w.Dir == "" && w.Missing == "" {
		return nil, nil, nil
	}
	cold := func(format string, a ...any) (*models.Start, []pipeline.Warning, error) {
		return nil, []pipeline.Warning{{Msg: "warm_from: cold start: " + fmt.Sprintf(format, a...),
			Attrs: map[string]any{"model": model, "warm_from": w.Dir}}}, nil
	}
	switch {
	case w.Missing != "":
		return cold("%s", w.Missing)
	case registered(model).Topics:
		return cold("%s trains on LDA topics, which every run refits from its own random start, so yesterday's weights do not name today's topics", model)
	case w.FeaturesVersion != Features{}.Version():
		return cold("the predecessor's features were made by features %s, this run's by %s: its parameters may act on features that mean something else",
			cmp.Or(w.FeaturesVersion, "of an unknown version"), Features{}.Version())
	}
	saved, err := readFits(ctx, w.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("stages: warm_from: %w", err)
	}
	s := saved[model]
	if s == nil {
		return cold("%s has no fit of %s", w.Dir, model)
	}
	params := s.params
	if vocab != nil {
		prev, err := schema.ReadAll[schema.VocabularyCols](ctx, w.Vocabulary)
		if err != nil {
			return nil, nil, fmt.Errorf("stages: warm_from: %w", err)
		}
		if params, err = models.MapRows(params, models.RowMap(prev.Term, vocab)); err != nil {
			return nil, nil, fmt.Errorf("stages: warm_from: %s: %w", w.Dir, err)
		}
	}
	st := &models.Start{C: s.c, Params: params, Lambda: s.lambda}
	if err := spec.CheckStart(dim, st); err != nil {
		return cold("%v", err)
	}
	var warns []pipeline.Warning
	if w.Leak != "" {
		warns = append(warns, pipeline.Warning{Msg: "warm_from: " + w.Leak, Attrs: map[string]any{"model": model, "warm_from": w.Dir}})
	}
	if w.TrainVersion != (Train{}).Version() {
		warns = append(warns, pipeline.Warning{Msg: fmt.Sprintf("warm_from: the predecessor was trained by train %s, this run trains with %s; its parameters are mapped as they are",
			cmp.Or(w.TrainVersion, "of an unknown version"), Train{}.Version()), Attrs: map[string]any{"model": model, "warm_from": w.Dir}})
	}
	return st, warns, nil
}

package job

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"monomer/amazon"
	"monomer/bow"
	"monomer/graph"
	"monomer/imagefeat"
	"monomer/models"
)

// Sentinels the CLI maps to exit code 2. Wrap them with %w and a message
// that names the file, field or flag.
var (
	// ErrConfig marks an invalid job file or override.
	ErrConfig = errors.New("invalid job")
	// ErrUsage marks a wrong command line, e.g. a --set without '='.
	// The CLI maps it to exit 2, as it does the runner's own ErrUsage.
	ErrUsage = errors.New("usage")
)

// Job is a job file: a named set of experiments sharing raw data and a seed.
type Job struct {
	Name string `yaml:"name"`
	// Seed drives every random choice of the job. Each experiment and stage
	// derives its own stream from it (see Env.RNG), so adding an experiment
	// never changes another's outputs. If Seed is 0, it is defaulted to 1.
	Seed uint64 `yaml:"seed"`
	// DataDir is the directory the data paths are relative to. Relative
	// DataDir is itself relative to the job file (given with --set or
	// MONOMER_DATA_DIR, to the working directory: see ResolvePaths). If
	// empty, paths are relative to the job file.
	DataDir string `yaml:"data_dir"`
	// Data names the raw files shared by all experiments; an experiment may
	// override any of them.
	Data Data `yaml:"data"`
	// Settings apply to every experiment unless it sets its own.
	Settings Settings `yaml:"settings"`
	// BLASKernel is the OpenBLAS CPU kernel the process runs: "auto" (the
	// default: the widest kernel the CPU supports), "env" (whatever
	// OPENBLAS_CORETYPE says, or OpenBLAS's own pick), or a kernel name
	// such as "Haswell" (one of models.OpenBLASKernels). The pure-Go build
	// checks the name and ignores it. See README, "BLAS".
	BLASKernel string `yaml:"blas_kernel"`

	Experiments []Experiment `yaml:"experiments"`

	// Path is the job file's absolute path, set by Load.
	Path string `yaml:"-"`
}

// Data names raw input files. Empty fields are not used.
type Data struct {
	Meta          string `yaml:"meta"`
	Reviews       string `yaml:"reviews"`
	ImageFeatures string `yaml:"image_features"`
	// Format is the release the meta and reviews files come from: empty
	// for 2014 or 2018 (told apart line by line), "2023" for the 2023
	// release (meta_<Category>.jsonl and <Category>.jsonl, items keyed by
	// parent_asin; it has no also_bought or also_viewed). Named rather
	// than guessed, so that a wrong guess cannot turn into a run of
	// rejects (see amazon.Formats).
	Format string `yaml:"format" json:",omitempty"` // omitted: see Settings.CoReviewWindow
}

// Experiment is one (data set, category, graph, feature type) combination.
type Experiment struct {
	Name string `yaml:"name"`
	// Category is the category-path prefix, levels separated by " > ".
	Category string `yaml:"category"`
	// Depth is how many levels below the prefix the subcategory node sits,
	// at least 1 (0 would make every item's subcategory the prefix itself,
	// leaving CT and the per-subcategory measures nothing to tell apart). If
	// unset, it is defaulted to 1.
	Depth Opt[int] `yaml:"depth"`
	// Graph is also_bought, also_viewed, bought_together (lists of the
	// metadata) or co_review (derived from the reviews file; see
	// graph.CoReview and the co_review settings).
	Graph string `yaml:"graph"`
	// Features is image or bow.
	Features string `yaml:"features"`
	// Models to train: wnn, ct, lmt, monomer, lda. If empty, all that fit the
	// feature type (lda only with bow).
	Models []string `yaml:"models"`
	// Data overrides the job's raw files for this experiment.
	Data Data `yaml:"data"`
	// Settings override the job's settings for this experiment.
	Settings Settings `yaml:"settings"`
}

// Settings are the tunable parameters. An unset field inherits: the
// experiment's value wins over the job's, the job's over the default named on
// each field. A zero field is unset, but for the Opt fields, whose zero means
// something and which are unset only when absent from the file. Resolve
// fills every field.
type Settings struct {
	// RejectRatio is the fraction of malformed lines above which ingest fails
	// (exit 3). 0 fails on the first malformed line; a negative value
	// never fails. If unset, 0.001.
	RejectRatio Opt[float64] `yaml:"reject_ratio"`
	// ImageScale divides every image feature. If 0, imagefeat.DefaultScale,
	// the maximum FC7 activation the original code divides by.
	ImageScale float64 `yaml:"image_scale"`
	// VocabSize is the bag-of-words vocabulary size. If 0,
	// bow.DefaultVocabSize (paper §4.5).
	VocabSize int `yaml:"vocab_size"`
	// UseSummary adds review summaries to the text. If unset, false.
	UseSummary Opt[bool] `yaml:"use_summary"`
	// VocabSampleTokens caps the tokens used to choose the vocabulary; the
	// vectors always count every review. If 0, bow.DefaultSampleTokens.
	VocabSampleTokens int64 `yaml:"vocab_sample_tokens"`
	// VocabShards, when above 0, counts a bag-of-words experiment's
	// candidate terms in that many bow-shard DAG nodes, which the features
	// stage merges instead of counting itself (the vocabulary is the
	// same). If 0 or unset, the stage counts in-process.
	VocabShards Opt[int] `yaml:"vocab_shards"`
	// Negatives is rewire (degree-preserving, the paper's), uniform, or
	// auto: rewire, falling back to uniform (with a warning, recorded in
	// the stage's stats) when the graph is too dense to rewire. If empty,
	// rewire.
	Negatives string `yaml:"negatives"`
	// SwapsPerEdge is the number of switch attempts per edge in the first
	// rewiring phase. If 0, graph.DefaultSwapsPerEdge.
	SwapsPerEdge int `yaml:"swaps_per_edge"`
	// TrainCap bounds the training pairs; larger data are subsampled before
	// the 80/10/10 split. If 0, graph.DefaultTrainCap (paper §4.1).
	TrainCap int `yaml:"train_cap"`
	// K is the embedding rank of LMT. If 0, models.DefaultLMTK (paper
	// Table 2).
	K int `yaml:"k"`
	// MonomerK is Monomer's per-space rank. If 0, models.DefaultMonomerK
	// (paper Table 2).
	MonomerK int `yaml:"monomer_k"`
	// N is Monomer's number of non-anchor spaces. If 0,
	// models.DefaultMonomerN.
	N int `yaml:"n"`
	// GatePenalty is the L2 weight of Monomer's gate U as a multiple of
	// λ (models.Spec.GatePenalty). If 0, models.DefaultGatePenalty.
	GatePenalty float64 `yaml:"gate_penalty"`
	// GateInit is the standard deviation of Monomer's starting gating
	// logits (models.Spec.GateInit). If 0, models.DefaultGateInit.
	GateInit float64 `yaml:"gate_init"`
	// Topics is the LDA topic count. If 0, models.DefaultTopics.
	Topics int `yaml:"topics"`
	// LDAPasses is the number of LDA passes over the corpus. If 0,
	// max(1, ⌈20 / chunks⌉) (chunks of 2000 documents): at least 20 M-steps,
	// where gensim's default is one pass.
	LDAPasses int `yaml:"lda_passes"`
	// Lambdas is the L2 grid searched on validation error. If empty,
	// models.DefaultLambdas().
	Lambdas []float64 `yaml:"lambdas"`
	// MaxIter caps L-BFGS iterations per fit. If 0, models.DefaultMaxIter.
	MaxIter int `yaml:"max_iter"`
	// ValidEvery is how many iterations pass between validation checks.
	// If 0, models.DefaultValidEvery.
	ValidEvery int `yaml:"valid_every"`
	// CTTop is the fraction of linked subcategories CT predicts positive.
	// If 0, models.DefaultCTTop (paper §4.2).
	CTTop float64 `yaml:"ct_top"`
	// Patience ends a fit after this many validation checks in a row that
	// keep nothing (models.Spec.Patience). If 0, 6 (measured to change no
	// test error beyond noise, BENCHMARKS.md); negative: never.
	Patience int `yaml:"patience"`
	// WarmStart trains the λ grid from the largest λ to the smallest, each
	// from the parameters kept at the one before (models.Spec.WarmStart).
	// If unset, false.
	WarmStart Opt[bool] `yaml:"warm_start"`

	// The co_review graph (graph.CoReview). Left out of the JSON when
	// unset, so that the hash of a job that does not use them (which the
	// report shows and keys) is what it was before they existed.

	// CoReviewWindow is the longest time, in days, between one user's
	// reviews of two items for that user to relate them; 0 relates only
	// reviews at the same time (the same day in the 2014 and 2018 files,
	// whose times are whole days). If unset,
	// graph.DefaultCoReviewWindowDays.
	CoReviewWindow Opt[int] `yaml:"co_review_window" json:",omitzero"`
	// CoReviewMinUsers is how many distinct users must relate two items
	// for an edge. If 0, graph.DefaultCoReviewMinUsers.
	CoReviewMinUsers int `yaml:"co_review_min_users" json:",omitzero"`
	// CoReviewMaxUserItems leaves out the reviews of users who reviewed
	// more distinct items of the experiment's scope than this (their pairs
	// grow as the square). If 0, graph.DefaultCoReviewMaxUserItems.
	CoReviewMaxUserItems int `yaml:"co_review_max_user_items" json:",omitzero"`

	// Recommendations (the recommend stage and the report).

	// RecommendQueries is the size of the deterministic sample of query
	// items the recommend stage answers. If 0, 300.
	RecommendQueries int `yaml:"recommend_queries"`
	// RecommendK is the length of each recommendation list. If 0, 10 (the
	// paper's top-10).
	RecommendK int `yaml:"recommend_k"`
	// ReportMapItems is the number of items on each of the report's t-SNE
	// maps. Exact t-SNE costs O(n²) per iteration: about 2.5 CPU-s a map
	// at 1000 items, four times that at 2000. If 0, 1000.
	ReportMapItems int `yaml:"report_map_items"`
}

// Defaults returns the documented defaults: the library packages' own
// (imagefeat, bow, graph, models), and the job's for what no library
// decides (reject ratio, negatives method, patience, recommendations, maps).
func Defaults() Settings {
	return Settings{
		RejectRatio:       Set(0.001),
		UseSummary:        Set(false),
		VocabShards:       Set(0),
		WarmStart:         Set(false),
		ImageScale:        imagefeat.DefaultScale,
		VocabSize:         bow.DefaultVocabSize,
		VocabSampleTokens: bow.DefaultSampleTokens,
		Negatives:         "rewire",
		SwapsPerEdge:      graph.DefaultSwapsPerEdge,
		TrainCap:          graph.DefaultTrainCap,
		K:                 models.DefaultLMTK,
		MonomerK:          models.DefaultMonomerK,
		N:                 models.DefaultMonomerN,
		GatePenalty:       models.DefaultGatePenalty,
		GateInit:          models.DefaultGateInit,
		Topics:            models.DefaultTopics,
		Lambdas:           models.DefaultLambdas(),
		MaxIter:           models.DefaultMaxIter,
		ValidEvery:        models.DefaultValidEvery,
		CTTop:             models.DefaultCTTop,
		Patience:          6,

		CoReviewWindow:       Set(graph.DefaultCoReviewWindowDays),
		CoReviewMinUsers:     graph.DefaultCoReviewMinUsers,
		CoReviewMaxUserItems: graph.DefaultCoReviewMaxUserItems,

		RecommendQueries: 300,
		RecommendK:       10,
		ReportMapItems:   1000,
	}
}

// over returns s with every set field of o copied over it.
func (s Settings) over(o Settings) Settings {
	inherit(&s.RejectRatio, o.RejectRatio)
	inherit(&s.ImageScale, o.ImageScale)
	inherit(&s.VocabSize, o.VocabSize)
	inherit(&s.UseSummary, o.UseSummary)
	inherit(&s.VocabSampleTokens, o.VocabSampleTokens)
	inherit(&s.VocabShards, o.VocabShards)
	inherit(&s.Negatives, o.Negatives)
	inherit(&s.SwapsPerEdge, o.SwapsPerEdge)
	inherit(&s.TrainCap, o.TrainCap)
	inherit(&s.K, o.K)
	inherit(&s.MonomerK, o.MonomerK)
	inherit(&s.N, o.N)
	inherit(&s.GatePenalty, o.GatePenalty)
	inherit(&s.GateInit, o.GateInit)
	inherit(&s.Topics, o.Topics)
	inherit(&s.LDAPasses, o.LDAPasses)
	if len(o.Lambdas) != 0 {
		s.Lambdas = slices.Clone(o.Lambdas)
	}
	inherit(&s.MaxIter, o.MaxIter)
	inherit(&s.ValidEvery, o.ValidEvery)
	inherit(&s.CTTop, o.CTTop)
	inherit(&s.Patience, o.Patience)
	inherit(&s.WarmStart, o.WarmStart)
	inherit(&s.CoReviewWindow, o.CoReviewWindow)
	inherit(&s.CoReviewMinUsers, o.CoReviewMinUsers)
	inherit(&s.CoReviewMaxUserItems, o.CoReviewMaxUserItems)
	inherit(&s.RecommendQueries, o.RecommendQueries)
	inherit(&s.RecommendK, o.RecommendK)
	inherit(&s.ReportMapItems, o.ReportMapItems)
	return s
}

// inherit sets *dst to v unless v is its type's zero value ("unset"; for
// an Opt, the zero value is unset whatever it holds).
func inherit[T comparable](dst *T, v T) {
	var zero T
	if v != zero {
		*dst = v
	}
}

// Resolved is an experiment with every setting and path filled in.
type Resolved struct {
	Experiment
	Seed     uint64
	Data     Data // absolute paths
	Settings Settings
}

// Resolve returns experiment i with defaults, job settings and its own
// settings merged, and data paths made absolute.
func (j *Job) Resolve(i int) Resolved {
	e := j.Experiments[i]
	r := Resolved{Experiment: e, Seed: j.Seed}
	if r.Seed == 0 {
		r.Seed = 1
	}
	if !r.Depth.IsSet() {
		r.Depth = Set(1)
	}
	if len(r.Models) == 0 {
		r.Models = []string{"wnn", "ct", "lmt", "monomer"}
		if r.Features == "bow" {
			r.Models = append(r.Models, "lda")
		}
	}
	r.Settings = Defaults().over(j.Settings).over(e.Settings)
	base := filepath.Dir(j.Path)
	if j.DataDir != "" {
		base = j.abs(base, j.DataDir)
	}
	pick := func(exp, job string) string {
		if exp != "" {
			return j.abs(base, exp)
		}
		if job != "" {
			return j.abs(base, job)
		}
		return ""
	}
	r.Data = Data{
		Meta:          pick(e.Data.Meta, j.Data.Meta),
		Reviews:       pick(e.Data.Reviews, j.Data.Reviews),
		ImageFeatures: pick(e.Data.ImageFeatures, j.Data.ImageFeatures),
		Format:        cmp.Or(e.Data.Format, j.Data.Format),
	}
	return r
}

func (j *Job) abs(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// Load reads and validates a job file. Unknown fields are errors. No other
// file is touched: validation happens before any I/O on data.
func Load(path string) (*Job, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return Parse(path, b)
}

// Parse parses and validates job-file bytes; path locates relative paths.
func Parse(path string, b []byte) (*Job, error) {
	j, err := decodeJob(filepath.Base(path), b)
	if err != nil {
		return nil, err
	}
	return finishJob(path, j)
}

// finishJob sets the job's path and validates it.
func finishJob(path string, j *Job) (*Job, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	j.Path = abs
	if err := j.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrConfig, filepath.Base(path), err)
	}
	return j, nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidName reports whether name is a valid job or experiment name:
// letters, digits, '.', '_' and '-', not starting with a punctuation mark,
// so that it is one directory of the run directory. Stage names follow the
// same rule.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// Validate checks every field and names the first bad one by its path in the
// file, e.g. "experiments[2].graph".
func (j *Job) Validate() error {
	if !nameRE.MatchString(j.Name) {
		return fmt.Errorf("name: %q must be letters, digits, '.', '_' or '-'", j.Name)
	}
	if err := j.Settings.validate("settings"); err != nil {
		return err
	}
	if err := models.CheckKernel(j.BLASKernel); err != nil {
		return fmt.Errorf("blas_kernel: %v", err)
	}
	if len(j.Experiments) == 0 {
		return errors.New("experiments: at least one is required")
	}
	seen := map[string]bool{}
	for i, e := range j.Experiments {
		at := fmt.Sprintf("experiments[%d]", i)
		if !nameRE.MatchString(e.Name) {
			return fmt.Errorf("%s.name: %q must be letters, digits, '.', '_' or '-'", at, e.Name)
		}
		if seen[e.Name] {
			return fmt.Errorf("%s.name: %q is used twice", at, e.Name)
		}
		seen[e.Name] = true
		if strings.TrimSpace(e.Category) == "" {
			return fmt.Errorf("%s.category: required", at)
		}
		for _, level := range strings.Split(e.Category, ">") {
			if strings.TrimSpace(level) == "" {
				return fmt.Errorf("%s.category: %q has an empty level (levels are separated by \" > \")", at, e.Category)
			}
		}
		if e.Depth.IsSet() && e.Depth.Get() < 1 {
			return fmt.Errorf("%s.depth: %d must be at least 1 (the subcategory is the node that many levels below the category; omit depth for 1)", at, e.Depth.Get())
		}
		if !slices.Contains(Graphs, e.Graph) {
			return fmt.Errorf("%s.graph: %q is not one of %s", at, e.Graph, strings.Join(Graphs, ", "))
		}
		if !slices.Contains(FeatureKinds, e.Features) {
			return fmt.Errorf("%s.features: %q is not one of %s", at, e.Features, strings.Join(FeatureKinds, ", "))
		}
		for k, m := range e.Models {
			if !slices.Contains(Models, m) {
				return fmt.Errorf("%s.models[%d]: %q is not one of %s", at, k, m, strings.Join(Models, ", "))
			}
			if slices.Index(e.Models, m) < k {
				return fmt.Errorf("%s.models[%d]: %q is listed twice", at, k, m)
			}
			if m == "lda" && e.Features != "bow" {
				return fmt.Errorf("%s.models[%d]: lda needs features: bow", at, k)
			}
		}
		if err := e.Settings.validate(at + ".settings"); err != nil {
			return err
		}
		r := j.Resolve(i)
		if err := r.checkBounds(at); err != nil {
			return err
		}
		if r.Data.Meta == "" {
			return fmt.Errorf("%s.data.meta: no metadata file (set data.meta on the job or the experiment)", at)
		}
		if r.Features == "image" && r.Data.ImageFeatures == "" {
			return fmt.Errorf("%s.data.image_features: required for features: image", at)
		}
		if r.Features == "bow" && r.Data.Reviews == "" {
			return fmt.Errorf("%s.data.reviews: required for features: bow", at)
		}
		if r.Graph == "co_review" && r.Data.Reviews == "" {
			return fmt.Errorf("%s.data.reviews: required for graph: co_review (the graph is derived from the reviews)", at)
		}
		if !slices.Contains(amazon.Formats, r.Data.Format) {
			return fmt.Errorf("%s.data.format: %q is not one of %s (empty: 2014 or 2018)", at, r.Data.Format, strings.Join(amazon.Formats[1:], ", "))
		}
		if r.Data.Format == amazon.Format2023 && (r.Graph == "also_bought" || r.Graph == "also_viewed") {
			return fmt.Errorf("%s.graph: %s does not exist in the 2023 release (data.format: 2023); use co_review", at, r.Graph)
		}
	}
	return nil
}

// The accepted values of the enumerated fields.
var (
	Graphs       = []string{"also_bought", "also_viewed", "bought_together", "co_review"}
	FeatureKinds = []string{"image", "bow"}
	Models       = []string{"wnn", "ct", "lmt", "monomer", "lda"}
	// NegativeMethods are the values of settings.negatives.
	NegativeMethods = []string{"rewire", "uniform", "auto"}
)

func (s Settings) validate(at string) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"reject_ratio", s.RejectRatio.Get()}, {"image_scale", s.ImageScale}, {"ct_top", s.CTTop}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s.%s: %g is not a number", at, f.name, f.v)
		}
	}
	switch {
	case s.RejectRatio.Get() > 1:
		return fmt.Errorf("%s.reject_ratio: %g must be at most 1", at, s.RejectRatio.Get())
	case s.ImageScale < 0:
		return fmt.Errorf("%s.image_scale: %g must be positive", at, s.ImageScale)
	case s.VocabSize < 0:
		return fmt.Errorf("%s.vocab_size: %d must be positive", at, s.VocabSize)
	case s.VocabSampleTokens < 0:
		return fmt.Errorf("%s.vocab_sample_tokens: %d must be positive", at, s.VocabSampleTokens)
	case s.VocabShards.Get() < 0:
		return fmt.Errorf("%s.vocab_shards: %d must be positive", at, s.VocabShards.Get())
	case s.Negatives != "" && !slices.Contains(NegativeMethods, s.Negatives):
		return fmt.Errorf("%s.negatives: %q is not one of %s", at, s.Negatives, strings.Join(NegativeMethods, ", "))
	case s.SwapsPerEdge < 0:
		return fmt.Errorf("%s.swaps_per_edge: %d must be positive", at, s.SwapsPerEdge)
	case s.TrainCap < 0:
		return fmt.Errorf("%s.train_cap: %d must be positive", at, s.TrainCap)
	case s.K < 0:
		return fmt.Errorf("%s.k: %d must be positive", at, s.K)
	case s.MonomerK < 0:
		return fmt.Errorf("%s.monomer_k: %d must be positive", at, s.MonomerK)
	case s.N < 0:
		return fmt.Errorf("%s.n: %d must be positive", at, s.N)
	case !(s.GatePenalty >= 0) || math.IsInf(s.GatePenalty, 0):
		return fmt.Errorf("%s.gate_penalty: %g must be finite and non-negative", at, s.GatePenalty)
	case !(s.GateInit >= 0) || math.IsInf(s.GateInit, 0):
		return fmt.Errorf("%s.gate_init: %g must be finite and non-negative", at, s.GateInit)
	case s.Topics < 0:
		return fmt.Errorf("%s.topics: %d must be positive", at, s.Topics)
	case s.LDAPasses < 0:
		return fmt.Errorf("%s.lda_passes: %d must be positive", at, s.LDAPasses)
	case s.MaxIter < 0:
		return fmt.Errorf("%s.max_iter: %d must be positive", at, s.MaxIter)
	case s.ValidEvery < 0:
		return fmt.Errorf("%s.valid_every: %d must be positive", at, s.ValidEvery)
	case s.CTTop < 0 || s.CTTop > 1:
		return fmt.Errorf("%s.ct_top: %g must be in (0, 1]", at, s.CTTop)

	case s.RecommendQueries < 0:
		return fmt.Errorf("%s.recommend_queries: %d must be positive", at, s.RecommendQueries)
	case s.RecommendK < 0:
		return fmt.Errorf("%s.recommend_k: %d must be positive", at, s.RecommendK)
	case s.CoReviewWindow.Get() < 0:
		return fmt.Errorf("%s.co_review_window: %d must be positive", at, s.CoReviewWindow.Get())
	case s.CoReviewMinUsers < 0:
		return fmt.Errorf("%s.co_review_min_users: %d must be positive", at, s.CoReviewMinUsers)
	case s.CoReviewMaxUserItems < 0 || s.CoReviewMaxUserItems == 1:
		return fmt.Errorf("%s.co_review_max_user_items: %d must be at least 2 (one item makes no pair)", at, s.CoReviewMaxUserItems)
	case s.ReportMapItems < 0:
		return fmt.Errorf("%s.report_map_items: %d must be positive", at, s.ReportMapItems)
	}
	for i, l := range s.Lambdas {
		if l < 0 || math.IsNaN(l) || math.IsInf(l, 0) {
			return fmt.Errorf("%s.lambdas[%d]: %g must be non-negative", at, i, l)
		}
		if slices.Contains(s.Lambdas[:i], l) {
			return fmt.Errorf("%s.lambdas[%d]: %g is listed twice", at, i, l)
		}
	}
	return nil
}

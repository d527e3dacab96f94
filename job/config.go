package job

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"monomer/amazon"
	"monomer/internal/nearest"
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
	// Name names the job in the report, the run log and the job_metrics
	// table.
	Name string `yaml:"name"`
	// Seed drives every random choice of the job. Each experiment and stage
	// derives its own stream from it (see Env.RNG), so adding an experiment
	// never changes another's outputs. If Seed is 0, it is defaulted to 1.
	Seed uint64 `yaml:"seed"`
	// Seeds, in place of Seed, runs each experiment's negatives, split,
	// training, evaluate and recommend once per seed (docs/jobs.md,
	// "Seeds"): the first seed's nodes keep their names and are those of
	// a job with seed: <first>, the others' names end in ".s<seed>"
	// (SeedTag). Publish and the job-level stages use the first seed.
	// Distinct, each at least 1; setting both Seed and Seeds is an error.
	Seeds []uint64 `yaml:"seeds" json:",omitempty"`
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
	// WarmFrom starts every experiment's training from a previous run's fitted parameters for
	// the same experiment and model (docs/scheduling.md, "Warm starts"): a
	// run directory, or "published" for the run the experiment's published
	// link names (with --run-id). Relative to the job file's folder (given
	// with --set, to the working directory). Empty: a cold start.
	WarmFrom string `yaml:"warm_from" json:",omitempty"`
	// VocabularyFrom fixes every bag-of-words experiment's vocabulary to a
	// previous run's (its features/vocabulary.parquet; docs/scheduling.md,
	// "Warm starts"), named as warm_from names runs; empty: the
	// vocabulary is counted on this run's reviews.
	VocabularyFrom string `yaml:"vocabulary_from" json:",omitempty"`
	// Publish is every experiment's publish: block unless it sets its own
	// fields (docs/publishing.md); without one nothing is published.
	Publish *Publish `yaml:"publish" json:",omitempty"`
	// BLASKernel is the OpenBLAS CPU kernel the process runs: "auto" (the
	// default: the widest kernel the CPU supports), "env" (whatever
	// OPENBLAS_CORETYPE says, or OpenBLAS's own pick), or a kernel name
	// such as "Haswell" (one of models.OpenBLASKernels). The pure-Go build
	// checks the name and ignores it. See docs/install.md, "BLAS".
	BLASKernel string `yaml:"blas_kernel"`
	// Experiments share the job's data and settings unless they set
	// their own; each writes its own directory in the run directory.
	Experiments []Experiment `yaml:"experiments"`

	// Path is the job file's absolute path, set by Load.
	Path string `yaml:"-"`
	// RunRoot is the directory holding the runs of a --run-id, where the
	// published links live, and RunID this run's subdirectory of it; both
	// empty for a run without --run-id. RunDir is the directory the run
	// writes (RunRoot/RunID with --run-id, else --run-dir's). Set by the
	// CLI, never hashed.
	RunRoot string `yaml:"-" json:"-"`
	RunID   string `yaml:"-" json:"-"`
	RunDir  string `yaml:"-" json:"-"`
}

// Data names raw input files. Empty fields are not used.
type Data struct {
	// Meta is the metadata file: meta_<Category>.json.gz (2014, 2018) or
	// meta_<Category>.jsonl (2023).
	Meta string `yaml:"meta"`
	// Reviews is the reviews file, for features: bow, graph: co_review
	// and the items' review counts.
	Reviews string `yaml:"reviews"`
	// ImageFeatures is the 2014 release's image_features_<Category>.b,
	// for features: image.
	ImageFeatures string `yaml:"image_features"`
	// Format is the release the meta and reviews files come from: empty
	// for 2014 or 2018 (told apart line by line), "2023" for the 2023
	// release (meta_<Category>.jsonl and <Category>.jsonl, items keyed by
	// parent_asin; it has no also_bought or also_viewed), or "catalogue"
	// for a shop's own tables (items, relations, text). Named rather
	// than guessed, so that a wrong guess cannot turn into a run of
	// rejects (see amazon.Formats).
	Format string `yaml:"format" json:",omitempty"` // omitted: see Settings.CoReviewWindow
	// Embeddings is the item vectors of features: embeddings, a Parquet
	// table (an asin or parent_asin column and one list column of
	// float32 or float64) or a NumPy .npy matrix beside its id file
	// (imagefeat.EmbeddingFiles). Omitted from the JSON when empty, like
	// Format.
	Embeddings string `yaml:"embeddings" json:",omitempty"`
	// Items, Relations and Text are the tables of data.format: catalogue
	// (a shop's own catalogue, package catalogue; docs/catalogue.md), in
	// place of Meta and Reviews: the items with their category paths, the
	// directed pairs of named relations an experiment's graph picks from,
	// and the text documents of features: bow. Omitted from the JSON when
	// empty, like Format.
	Items     string `yaml:"items" json:",omitempty"`
	Relations string `yaml:"relations" json:",omitempty"`
	Text      string `yaml:"text" json:",omitempty"`
}

// Experiment is one (data set, category, graph, feature type) combination.
type Experiment struct {
	// Name names the experiment's directory in the run directory and its
	// rows in the metrics; unique in the job.
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
	// graph.CoReview and the co_review settings); with data.format:
	// catalogue, one of the relation names of the relations table.
	Graph string `yaml:"graph"`
	// Features is image (the .b file), bow (the reviews) or embeddings
	// (data.embeddings, vectors the user computed).
	Features string `yaml:"features"`
	// Models to train, by name in models' registry (models.Names: wnn, ct,
	// lmt, monomer, lda). If empty, all that fit the feature type
	// (models.Defaults: lda only with bow).
	Models []string `yaml:"models"`
	// Data overrides the job's raw files for this experiment.
	Data Data `yaml:"data"`
	// Settings override the job's settings for this experiment.
	Settings Settings `yaml:"settings"`
	// WarmFrom overrides the job's warm_from for this experiment.
	WarmFrom string `yaml:"warm_from" json:",omitempty"`
	// VocabularyFrom overrides the job's vocabulary_from for this
	// experiment, whose features must be bow.
	VocabularyFrom string `yaml:"vocabulary_from" json:",omitempty"`
	// Publish overrides the fields of the job's publish: block.
	Publish *Publish `yaml:"publish" json:",omitempty"`
}

// Resolved is an experiment with every setting and path filled in.
type Resolved struct {
	Experiment
	Seed     uint64
	Data     Data // absolute paths
	Settings Settings
	// Publish is the job's and the experiment's publish: blocks merged,
	// defaults filled and paths absolute; nil when neither has one.
	Publish *Publish `json:",omitempty"`
	// RunRoot, RunID and RunDir are the job's (Job.RunRoot).
	RunRoot string `json:"-"`
	RunID   string `json:"-"`
	RunDir  string `json:"-"`
	// Index is the experiment's place in the job, from 0.
	Index int `json:"-"`
}

// Resolve returns experiment i with defaults, job settings and its own
// settings merged, and data paths made absolute.
func (j *Job) Resolve(i int) Resolved {
	e := j.Experiments[i]
	r := Resolved{Experiment: e, Seed: j.SeedList()[0], RunRoot: j.RunRoot, RunID: j.RunID, RunDir: j.RunDir, Index: i}
	if !r.Depth.IsSet() {
		r.Depth = Set(1)
	}
	if len(r.Models) == 0 {
		r.Models = models.Defaults(r.Features)
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
	r.Publish = j.Publish.over(e.Publish).resolve(func(p string) string { return j.abs(base, p) })
	run := func(exp, job string) string { // a run directory, relative to the job file, or "published"
		if p := cmp.Or(exp, job); p != "" && p != ReservedName {
			return j.abs(filepath.Dir(j.Path), p)
		}
		return cmp.Or(exp, job)
	}
	vocab := j.VocabularyFrom
	if r.Features != "bow" {
		vocab = "" // the job's is for its bag-of-words experiments; an image experiment's own is an error
	}
	r.WarmFrom, r.VocabularyFrom = run(e.WarmFrom, j.WarmFrom), run(e.VocabularyFrom, vocab)
	r.Data = Data{
		Meta:          pick(e.Data.Meta, j.Data.Meta),
		Reviews:       pick(e.Data.Reviews, j.Data.Reviews),
		ImageFeatures: pick(e.Data.ImageFeatures, j.Data.ImageFeatures),
		Format:        cmp.Or(e.Data.Format, j.Data.Format),
		Embeddings:    pick(e.Data.Embeddings, j.Data.Embeddings),
		Items:         pick(e.Data.Items, j.Data.Items),
		Relations:     pick(e.Data.Relations, j.Data.Relations),
		Text:          pick(e.Data.Text, j.Data.Text),
	}
	return r
}

// SeedList is the job's seeds in the order given: Seeds, or Seed alone
// (1 when unset).
func (j *Job) SeedList() []uint64 {
	if len(j.Seeds) > 0 {
		return j.Seeds
	}
	return []uint64{cmp.Or(j.Seed, 1)}
}

// SeedTag is the suffix, without its dot, of the names of the nodes a
// seed after the first runs ("s2": train.lmt.s2); "" for the first seed,
// whose nodes keep the names of a one-seed job.
func (j *Job) SeedTag(seed uint64) string {
	if seed == j.SeedList()[0] {
		return ""
	}
	return "s" + strconv.FormatUint(seed, 10)
}

// MaxSeeds caps seeds: each is a full set of negatives, split, training,
// evaluation and recommendation per experiment.
const MaxSeeds = 100

// checkSeeds says what is wrong with seed and seeds, or nil.
func (j *Job) checkSeeds() error {
	switch {
	case j.Seed != 0 && len(j.Seeds) > 0:
		return errors.New("seeds: set either seed or seeds, not both (seeds: [1, 2, 3] runs every seed; the first is the one seed: would be)")
	case len(j.Seeds) > MaxSeeds:
		return fmt.Errorf("seeds: %d seeds, more than %d", len(j.Seeds), MaxSeeds)
	}
	for i, s := range j.Seeds {
		if s == 0 {
			return fmt.Errorf("seeds[%d]: 0 is not a seed (seed: 0 means seed 1; write 1)", i)
		}
		if k := slices.Index(j.Seeds, s); k < i {
			return fmt.Errorf("seeds[%d]: %d is seeds[%d] too", i, s, k)
		}
	}
	return nil
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
	j, err := decodeJob(path, b)
	if err != nil {
		return nil, err
	}
	return finishJob(path, j, b)
}

// finishJob sets the job's path and validates it. With the file's bytes
// (nil once overrides changed the document), an invalid field is named
// with its line.
func finishJob(path string, j *Job, b []byte) (*Job, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	j.Path = abs
	if err := j.Validate(); err != nil {
		at := ""
		if line := fieldLine(b, err.Error()); line > 0 {
			at = fmt.Sprintf("line %d: ", line)
		}
		return nil, fmt.Errorf("%w: %s: %s%v", ErrConfig, path, at, err)
	}
	return j, nil
}

// fieldPath is the field a validation message starts with:
// "experiments[0].settings.k: ...".
var fieldPath = regexp.MustCompile(`^([a-z_]+(?:\[\d+\])?(?:\.[a-z_]+(?:\[\d+\])?)*): `)

// fieldLine is the line of b on which the field msg names is written, or 0.
// An experiment's setting or data field not written under the experiment
// is inherited from the job's settings or data: its line is the job's.
func fieldLine(b []byte, msg string) int {
	m := fieldPath.FindStringSubmatch(msg)
	var doc yaml.Node
	if b == nil || m == nil || yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	path := m[1]
	if n := nodeAt(doc.Content[0], path); n != nil {
		return n.Line
	}
	for _, section := range []string{"settings", "data"} {
		if _, rest, ok := strings.Cut(path, "]."+section+"."); ok && strings.HasPrefix(path, "experiments[") {
			if n := nodeAt(doc.Content[0], section+"."+rest); n != nil {
				return n.Line
			}
		}
	}
	return 0
}

// nodeAt follows path ("experiments[0].models[3]") from a mapping node to
// the value it names, or nil.
func nodeAt(n *yaml.Node, path string) *yaml.Node {
	for _, seg := range strings.Split(path, ".") {
		key, index, list := strings.Cut(seg, "[")
		if n = getKey(n, key); n == nil {
			return nil
		}
		if list {
			i, err := strconv.Atoi(strings.TrimSuffix(index, "]"))
			if err != nil || n.Kind != yaml.SequenceNode || i >= len(n.Content) {
				return nil
			}
			n = n.Content[i]
		}
	}
	return n
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// MaxNameLen caps job and experiment names. Each is one directory name in
// the run directory, beside which the runner makes temporary names up to
// about 30 characters longer; file systems allow 255 bytes.
const MaxNameLen = 100

// ValidName reports whether name is a valid job or experiment name:
// letters, digits, '.', '_' and '-', starting with a letter or digit, at
// most MaxNameLen characters, so that it is one directory of the run
// directory. Stage names follow the same rule.
func ValidName(name string) bool { return checkName("", name) == nil }

// checkName says what is wrong with the name at field, or nil.
func checkName(field, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s: required (letters, digits, '.', '_' or '-', starting with a letter or digit)", field)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%s: %q... is %d characters, more than %d (it names a directory)", field, name[:20], len(name), MaxNameLen)
	case !nameRE.MatchString(name):
		return fmt.Errorf("%s: %q must start with a letter or digit and hold only letters, digits, '.', '_' or '-'", field, name)
	}
	return nil
}

// Validate checks every field and names the first bad one by its path in the
// file, e.g. "experiments[2].graph".
func (j *Job) Validate() error {
	if err := checkName("name", j.Name); err != nil {
		return err
	}
	if err := j.checkSeeds(); err != nil {
		return err
	}
	if err := j.Settings.validate("settings"); err != nil {
		return err
	}
	if err := j.Publish.validate("publish"); err != nil {
		return err
	}
	if err := models.CheckKernel(j.BLASKernel); err != nil {
		return fmt.Errorf("blas_kernel: %v", err)
	}
	if len(j.Experiments) == 0 {
		return errors.New("experiments: at least one is required")
	}
	seen := map[string]int{} // folded name -> index
	for i, e := range j.Experiments {
		at := fmt.Sprintf("experiments[%d]", i)
		if err := checkName(at+".name", e.Name); err != nil {
			return err
		}
		// Names are directories: two that differ only in case are one
		// directory on a case-insensitive file system (macOS, Windows).
		if k, ok := seen[strings.ToLower(e.Name)]; ok {
			if j.Experiments[k].Name == e.Name {
				return fmt.Errorf("%s.name: %q is used twice", at, e.Name)
			}
			return fmt.Errorf("%s.name: %q differs from experiments[%d].name %q only in case (one directory on a case-insensitive file system)", at, e.Name, k, j.Experiments[k].Name)
		}
		seen[strings.ToLower(e.Name)] = i
		if strings.EqualFold(e.Name, ReservedName) {
			return fmt.Errorf("%s.name: %q is reserved for the run root's links to published runs (docs/publishing.md)", at, e.Name)
		}
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
		// The format first: every other check of the data depends on it.
		if f := cmp.Or(e.Data.Format, j.Data.Format); f != FormatCatalogue && !slices.Contains(amazon.Formats, f) {
			formats := append(slices.Clone(amazon.Formats[1:]), FormatCatalogue)
			hint := ""
			if near, ok := nearest.Slip(f, formats); ok {
				hint = "; did you mean " + near + "?"
			}
			return fmt.Errorf("%s.data.format: %q is not one of %s (empty: 2014 or 2018)%s", at, f, strings.Join(formats, ", "), hint)
		}
		if cmp.Or(e.Data.Format, j.Data.Format) == FormatCatalogue {
			// Any relation of the table: whether it holds one of this
			// name, ingest finds out (job validation reads no data).
			if !nameRE.MatchString(e.Graph) {
				return fmt.Errorf("%s.graph: %q must name a relation of data.relations (letters, digits, '.', '_' or '-')", at, e.Graph)
			}
		} else if !slices.Contains(Graphs, e.Graph) {
			return fmt.Errorf("%s.graph: %q is not one of %s", at, e.Graph, strings.Join(Graphs, ", "))
		}
		if !slices.Contains(FeatureKinds, e.Features) {
			return fmt.Errorf("%s.features: %q is not one of %s", at, e.Features, strings.Join(FeatureKinds, ", "))
		}
		for k, name := range e.Models {
			m, err := models.Lookup(name)
			if err != nil {
				return fmt.Errorf("%s.models[%d]: %q is not one of %s", at, k, name, strings.Join(models.Names(), ", "))
			}
			if slices.Index(e.Models, name) < k {
				return fmt.Errorf("%s.models[%d]: %q is listed twice", at, k, name)
			}
			if m.Bow && e.Features != "bow" {
				return fmt.Errorf("%s.models[%d]: %s needs features: bow", at, k, name)
			}
		}
		if err := e.Settings.validate(at + ".settings"); err != nil {
			return err
		}
		if err := e.Publish.validate(at + ".publish"); err != nil {
			return err
		}
		r := j.Resolve(i)
		if err := r.checkBounds(at); err != nil {
			return err
		}
		if err := r.checkPublish(at); err != nil {
			return err
		}
		if r.Data.Format == FormatCatalogue {
			if err := r.checkCatalogue(at); err != nil {
				return err
			}
			continue
		}
		if r.Data.Items != "" || r.Data.Relations != "" || r.Data.Text != "" {
			return fmt.Errorf("%s.data: items, relations and text are the tables of data.format: catalogue; this experiment's format is %q", at, r.Data.Format)
		}
		if r.Data.Meta == "" {
			return fmt.Errorf("%s.data.meta: no metadata file (set data.meta on the job or the experiment)", at)
		}
		if r.Features == "image" && r.Data.ImageFeatures == "" {
			return fmt.Errorf("%s.data.image_features: required for features: image", at)
		}
		if r.Features == "embeddings" && r.Data.Embeddings == "" {
			return fmt.Errorf("%s.data.embeddings: required for features: embeddings", at)
		}
		if r.Features == "bow" && r.Data.Reviews == "" {
			return fmt.Errorf("%s.data.reviews: required for features: bow", at)
		}
		if r.Graph == "co_review" && r.Data.Reviews == "" {
			return fmt.Errorf("%s.data.reviews: required for graph: co_review (the graph is derived from the reviews)", at)
		}
		if r.Data.Format == amazon.Format2023 && (r.Graph == "also_bought" || r.Graph == "also_viewed") {
			return fmt.Errorf("%s.graph: %s does not exist in the 2023 release (data.format: 2023); use co_review", at, r.Graph)
		}
		if r.Data.Format == amazon.Format2023 && r.Graph == "bought_together" {
			// The field is there, but null on every line of the release:
			// the graph would have no edge.
			return fmt.Errorf("%s.graph: bought_together is null throughout the 2023 release (data.format: 2023); use co_review", at)
		}
	}
	return nil
}

// checkCatalogue checks the files of a data.format: catalogue experiment.
func (r *Resolved) checkCatalogue(at string) error {
	switch {
	case r.Data.Meta != "" || r.Data.Reviews != "":
		return fmt.Errorf("%s.data: meta and reviews are not read with data.format: catalogue; name its tables in data.items, data.relations and data.text", at)
	case r.Data.Items == "":
		return fmt.Errorf("%s.data.items: required with data.format: catalogue", at)
	case r.Data.Relations == "":
		return fmt.Errorf("%s.data.relations: required with data.format: catalogue (graph: %s names one of its relations)", at, r.Graph)
	case r.Graph == "co_review":
		// A relation may be called so; but one named like the derived
		// graph would read as derived, and the text table has no
		// reviewers or times to derive it from.
		return fmt.Errorf("%s.graph: co_review is derived from the reviewers and times of a review file, which a catalogue's text does not carry; write such pairs into data.relations under another name", at)
	case r.Features == "bow" && r.Data.Text == "":
		return fmt.Errorf("%s.data.text: required for features: bow", at)
	case r.Features == "image" && r.Data.ImageFeatures == "":
		return fmt.Errorf("%s.data.image_features: required for features: image", at)
	case r.Features == "embeddings" && r.Data.Embeddings == "":
		return fmt.Errorf("%s.data.embeddings: required for features: embeddings", at)
	}
	return nil
}

// FormatCatalogue is the data.format of a shop's own tables (package
// catalogue), not a release of Amazon's.
const FormatCatalogue = "catalogue"

// The accepted values of the enumerated fields.
var (
	Graphs       = []string{"also_bought", "also_viewed", "bought_together", "co_review"}
	FeatureKinds = []string{"image", "bow", "embeddings"}
)

package schema

import (
	"reflect"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
)

// CreatedBy is pinned so the footer does not change with the library version.
const CreatedBy = "monomer"

// dictKey marks a field whose Parquet column is dictionary-encoded.
const dictKey = "monomer.dictionary"

// keyed is the first field of every declared table struct: a struct with
// an unexported field cannot be written as a positional literal outside
// this package, so every column is set by its name.
type keyed = struct{}

// The tables a run writes, one struct each. The first columns are the
// contract; columns after them are extras documented here. Each doc
// comment starts with the table's name and where a run writes it (paths
// under <experiment>/ but for job_metrics), and docs/tables.md is printed
// from these comments (cmd/docgen).

// ItemsCols: items, ingest/items.parquet. One row per valid item of an
// experiment, in item-index order (row i is item i everywhere else).
type ItemsCols struct {
	_            keyed
	ASIN         []string `col:"asin"`
	Title        []string `col:"title"`
	Brand        []string `col:"brand"`
	Subcategory  []string `col:"subcategory,dict"`
	CategoryPath []string `col:"category_path"`
	NReviews     []int32  `col:"n_reviews"`
	HasImage     []bool   `col:"has_image"`
}

// ReviewsCols: reviews, ingest/reviews.parquet (bag-of-words experiments
// only). The reviews of the experiment's items, in the reviews file's
// order: each review's asin, summary and text as read, so that features
// and bow-shard need not read the raw file again. Summary and text stay
// apart: whether the summary counts is their setting.
type ReviewsCols struct {
	_       keyed
	ASIN    []string `col:"asin"`
	Summary []string `col:"summary"`
	Text    []string `col:"text"`
}

// EdgesCols: edges, ingest/edges.parquet, and the same columns in
// negatives/positives.parquet, negatives/negatives.parquet and
// negatives/cold_relations.parquet (the relations of the items held out
// by cold_items, written only with that setting). Kept
// relationships (or negative pairs), sorted by (src_idx, dst_idx).
// Extras: the item indices of both ends.
type EdgesCols struct {
	_      keyed
	Src    []string `col:"src"`
	Dst    []string `col:"dst"`
	Graph  []string `col:"graph,dict"`
	SrcIdx []int32  `col:"src_idx"`
	DstIdx []int32  `col:"dst_idx"`
}

// RejectsCols: rejects, ingest/rejects.parquet; when ingest fails with
// exit 3, ingest.failed.rejects.parquet beside the stage's directory.
// Malformed input records, in file then line order.
type RejectsCols struct {
	_       keyed
	File    []string `col:"file,dict"`
	Line    []int64  `col:"line"`
	Offset  []int64  `col:"offset"`
	Error   []string `col:"error"`
	Excerpt []string `col:"excerpt"`
}

// CatalogueRejectsCols is the rejects table of a catalogue's ingest
// (data.format: catalogue): the columns of RejectsCols, error holding a
// fixed reason ("duplicate id", "empty path", ...) to group by, then the
// row's id and the reason's detail. Not declared: rejects is the table's
// one name, and the releases' rejects keep their bytes.
type CatalogueRejectsCols struct {
	_       keyed
	File    []string `col:"file,dict"`
	Line    []int64  `col:"line"`
	Offset  []int64  `col:"offset"`
	Error   []string `col:"error,dict"`
	Excerpt []string `col:"excerpt"`
	ID      []string `col:"id"`
	Detail  []string `col:"detail"`
}

// VocabularyCols: vocabulary, features/vocabulary.parquet (bag of words).
// Term ids in rank order (count desc, term asc); kind is noun, adj or
// adj_noun. Extra: surface, a readable unstemmed form.
type VocabularyCols struct {
	_       keyed
	TermID  []int32  `col:"term_id"`
	Term    []string `col:"term"`
	Kind    []string `col:"kind,dict"`
	Count   []int64  `col:"count"`
	DocFreq []int64  `col:"doc_freq"`
	Surface []string `col:"surface"`
}

// BowCols: bow, features/bow.parquet. One row per kept item, in item
// order. Extras: the item index and
// raw counts (LDA's input).
type BowCols struct {
	_       keyed
	ASIN    []string    `col:"asin"`
	TermIDs [][]int32   `col:"term_ids"`
	Weights [][]float32 `col:"weights"`
	ItemIdx []int32     `col:"item_idx"`
	Counts  [][]int32   `col:"counts"`
}

// groupRows: at Electronics' size (412,082 items) one row group of
// RowGroupRows left the term ids and weights to two cores in every
// training, evaluate and recommend node; groups of 65,536 rows give 7.
func (BowCols) groupRows() int { return 1 << 16 }

// BowCountsCols: bow_counts, bow-shard-<i>-of-<n>/counts.parquet (with
// vocab_shards: n). One shard's candidate-term counts, by term then
// sampling level.
type BowCountsCols struct {
	_     keyed
	Term  []string `col:"term"`
	Level []int32  `col:"level"`
	Count []int64  `col:"count"`
	Nouns []int64  `col:"nouns"`
}

// BowShardCols: bow_shard, bow-shard-<i>-of-<n>/info.parquet. One shard's
// totals, one row.
type BowShardCols struct {
	_           keyed
	Shard       []int32   `col:"shard"`
	Shards      []int32   `col:"shards"`
	Docs        []int64   `col:"docs"`
	Tokens      []int64   `col:"tokens"`
	LevelTokens [][]int64 `col:"level_tokens"`
	Fingerprint []string  `col:"fingerprint"`
}

// FeatureItemsCols: feature_items, features/feature_items.parquet, and
// the same columns in negatives/cold_items.parquet (the items held out by
// cold_items, written only with that setting). The
// items that have a feature vector (or are held out), in item order;
// for image features, row i of the matrix is item_idx[i].
type FeatureItemsCols struct {
	_       keyed
	ASIN    []string `col:"asin"`
	ItemIdx []int32  `col:"item_idx"`
}

// PairsCols: pairs, split/pairs.parquet. R and the negatives, split:
// label is 1 for a related pair, 0 for a negative; split is train, valid
// or test, and rows are in that order, shuffled within. Extras: item
// indices.
type PairsCols struct {
	_     keyed
	X     []string `col:"x"`
	Y     []string `col:"y"`
	Label []int8   `col:"label"`
	Split []string `col:"split,dict"`
	XIdx  []int32  `col:"x_idx"`
	YIdx  []int32  `col:"y_idx"`
}

// PredictionsCols: predictions, evaluate/predictions.parquet. Per model
// and split, in pairs order.
type PredictionsCols struct {
	_           keyed
	Model       []string  `col:"model,dict"`
	Split       []string  `col:"split,dict"`
	X           []string  `col:"x"`
	Y           []string  `col:"y"`
	Label       []int8    `col:"label"`
	Distance    []float64 `col:"distance"`
	Probability []float64 `col:"probability"`
	Predicted   []int8    `col:"predicted"`
}

// MetricsCols: metrics, evaluate/metrics.parquet. One row per (model,
// lambda, split). Extra: selected marks
// the lambda chosen on validation error; only its rows have train and test.
type MetricsCols struct {
	_             keyed
	Experiment    []string  `col:"experiment,dict"`
	Model         []string  `col:"model,dict"`
	Split         []string  `col:"split,dict"`
	Error         []float64 `col:"error"`
	AUC           []float64 `col:"auc"`
	LogLikelihood []float64 `col:"log_likelihood"`
	Pairs         []int64   `col:"pairs"`
	Lambda        []float64 `col:"lambda"`
	K             []int32   `col:"k"`
	N             []int32   `col:"n"`
	Iterations    []int32   `col:"iterations"`
	Selected      []bool    `col:"selected"`
}

// FitsCols: fits, train.<model>/fits.parquet. The training record, one
// row per (model, lambda) in grid order; status is the optimiser's end
// (Patience: stopped early, see the patience setting); selected marks the lambda chosen on validation error, and c is
// the chosen fit's sigmoid offset (NaN on other rows). valid_spread is the
// range of the validation probabilities; flags names what is degenerate
// about the fit (models.GridPoint.Flags, comma-separated, empty when
// nothing is). evaluations counts the fit's objective evaluations (forward
// passes), grad_evaluations those that also computed the gradient.
// train_objective is the objective at the kept (best-validation) iterate,
// final_objective at the last one: together they show how far training
// went past the kept one. gate_spaces and gate_routes say how many of
// Monomer's N spaces its gate uses at the kept parameters (NaN for other
// models), over the queries x of the train pairs, each weighted by its
// number of pairs: with p̄ the mean P(k|x) and H the entropy in nats,
// gate_spaces = exp H(p̄), the effective number of spaces the distances
// are spread over (1: all weight on one space, N: even), and
// gate_routes = exp(H(p̄) − mean H(P(·|x))), exp of the mutual
// information of query and space, the effective number of spaces the gate
// chooses among (1 when it collapses or gives every query the same mix;
// models.GateUse).
type FitsCols struct {
	_                  keyed
	Model              []string  `col:"model,dict"`
	Lambda             []float64 `col:"lambda"`
	ValidError         []float64 `col:"valid_error"`
	ValidLogLikelihood []float64 `col:"valid_log_likelihood"`
	TrainObjective     []float64 `col:"train_objective"`
	Iterations         []int32   `col:"iterations"`
	BestIteration      []int32   `col:"best_iteration"`
	Status             []string  `col:"status,dict"`
	Selected           []bool    `col:"selected"`
	K                  []int32   `col:"k"`
	N                  []int32   `col:"n"`
	C                  []float64 `col:"c"`
	ValidSpread        []float64 `col:"valid_spread"`
	Flags              []string  `col:"flags,dict"`
	Evaluations        []int32   `col:"evaluations"`
	GradEvaluations    []int32   `col:"grad_evaluations"`
	FinalObjective     []float64 `col:"final_objective"`
	GateSpaces         []float64 `col:"gate_spaces,optional"`
	GateRoutes         []float64 `col:"gate_routes,optional"`
}

// TraceCols: trace, train.<model>/trace.parquet. One row per L-BFGS
// iteration of every grid point of every
// model, in training order (models as in the job, grid points in
// models.GridOrder). valid_error is NaN where it was not checked;
// evaluations and grad_evaluations are the grid point's so far.
type TraceCols struct {
	_               keyed
	Model           []string  `col:"model,dict"`
	Lambda          []float64 `col:"lambda"`
	Iteration       []int32   `col:"iteration"`
	Objective       []float64 `col:"objective"`
	ValidError      []float64 `col:"valid_error"`
	Evaluations     []int32   `col:"evaluations"`
	GradEvaluations []int32   `col:"grad_evaluations"`
}

// CTCountsCols: ct_counts, train.ct/ct_counts.parquet. The Category Tree
// baseline's fit, one row
// per linked (source, target) pair of subcategories, by source index then
// rank (models.CTCount): links counts the training positives from source
// to target, rank is target's place among the subcategories linked from
// source, and kept marks those CT predicts related. Extras: the
// subcategory indices (into the sorted subcategory names).
type CTCountsCols struct {
	_         keyed
	Source    []string `col:"source,dict"`
	Target    []string `col:"target,dict"`
	Links     []int64  `col:"links"`
	Rank      []int32  `col:"rank"`
	Kept      []bool   `col:"kept"`
	SourceIdx []int32  `col:"source_idx"`
	TargetIdx []int32  `col:"target_idx"`
}

// TopicsCols: topics, train.lda/topics.parquet. LDA's topic proportions
// of each item with a vector, in item order.
type TopicsCols struct {
	_           keyed
	ItemIdx     []int32     `col:"item_idx"`
	Proportions [][]float32 `col:"proportions"`
}

// ParamsCols: params, train.<model>/params.parquet. Learned parameters,
// one row per matrix row; c and other scalars are 1x1 matrices, and LDA
// adds its topic_words matrix.
type ParamsCols struct {
	_      keyed
	Model  []string    `col:"model,dict"`
	Param  []string    `col:"param,dict"`
	Row    []int32     `col:"row"`
	Values [][]float64 `col:"values"`
}

// JobMetricsCols: job_metrics, metrics.parquet at the run directory's
// top and report/metrics.parquet. The job-level table across experiments, one row per
// (experiment, model, split) at the chosen lambda: the metrics columns,
// then the paper's data set name, the graph, the feature kind and the
// paper's published test error (NaN where the paper has none), then the
// recommendation claims (RecommendMetricsCols' columns), on the test rows
// of the models the recommend stage answered; NaN elsewhere; then the
// number of the job's seeds and the error's mean and sample standard
// deviation over them (NaN with one seed; error itself is the first
// seed's, docs/jobs.md "Seeds"); then the job's
// name and hash (the same on every row: the sha256 of the job's settings,
// file locations left out); then ndcg and mrr beside hit_rate, and
// negatives, the method the experiment's negatives were drawn by (rewire,
// or uniform: errors not comparable with rewired experiments'; "" when
// unknown). dataset is the paper's name for the category,
// else the category's last level: the Dataset column of
// report/tables.md.
type JobMetricsCols struct {
	_                     keyed
	Experiment            []string  `col:"experiment,dict"`
	Model                 []string  `col:"model,dict"`
	Split                 []string  `col:"split,dict"`
	Error                 []float64 `col:"error"`
	AUC                   []float64 `col:"auc"`
	LogLikelihood         []float64 `col:"log_likelihood"`
	Pairs                 []int64   `col:"pairs"`
	Lambda                []float64 `col:"lambda"`
	K                     []int32   `col:"k"`
	N                     []int32   `col:"n"`
	Iterations            []int32   `col:"iterations"`
	Dataset               []string  `col:"dataset,dict"`
	Graph                 []string  `col:"graph,dict"`
	Features              []string  `col:"features,dict"`
	PaperError            []float64 `col:"paper_error"`
	SameSubcategory       []float64 `col:"same_subcategory"`
	DistinctSubcategories []float64 `col:"distinct_subcategories"`
	Coverage              []float64 `col:"coverage"`
	Gini                  []float64 `col:"gini"`
	CoverageCross         []float64 `col:"coverage_cross"`
	GiniCross             []float64 `col:"gini_cross"`
	HitRate               []float64 `col:"hit_rate"`
	Recall                []float64 `col:"recall"`
	Seeds                 []int32   `col:"seeds,optional"`
	ErrorMean             []float64 `col:"error_mean,optional"`
	ErrorSD               []float64 `col:"error_sd,optional"`
	Job                   []string  `col:"job,dict"`
	JobHash               []string  `col:"job_hash,dict"`
	NDCG                  []float64 `col:"ndcg,optional"`
	MRR                   []float64 `col:"mrr,optional"`
	Negatives             []string  `col:"negatives,optional"`
}

// RecommendationsCols: recommendations, recommend/recommendations.parquet.
// The exact top-k of each
// sampled query item over every item with features, by model then query
// (item order) then rank (1-based, nearest first). space is, for Monomer,
// the space k in 1..N contributing most to the item's score (0 for other
// models). Extras: distance and the item indices.
type RecommendationsCols struct {
	_               keyed
	Model           []string  `col:"model,dict"`
	Query           []string  `col:"query"`
	Rank            []int32   `col:"rank"`
	Item            []string  `col:"item"`
	Probability     []float64 `col:"probability"`
	SameSubcategory []bool    `col:"same_subcategory"`
	Space           []int32   `col:"space"`
	Distance        []float64 `col:"distance"`
	QueryIdx        []int32   `col:"query_idx"`
	ItemIdx         []int32   `col:"item_idx"`
}

// RecommendMetricsCols: recommend_metrics,
// recommend/recommend_metrics.parquet. One row per model. same_subcategory is the share
// of recommended items in the query's subcategory; distinct_subcategories
// the mean number of subcategories in a list; coverage the share of
// candidate items in anyone's list and gini the Gini coefficient of how
// often each candidate is recommended. coverage_cross and gini_cross are
// the same over the same queries' cross-subcategory top k, the query's own
// subcategory left out: the setting of the paper's "limited coverage"
// claim, as LMT needs that taxonomy filter at test time (section V); those
// lists are not in RecommendationsCols. hit_rate and recall are over
// test_queries, the query items with held-out test positives: the share
// with at least one test positive in its top k, and the mean share of its
// test positives found (known train and validation positives are left out
// of those lists); ndcg is the mean NDCG@k and mrr the mean reciprocal
// rank of the first test positive in the top k (0 without one) over the
// same lists. top_item_share is the largest share of the lists one item is
// in, top_item that item, and dominated says the share is above
// stages.DominantShare. The row of model "popularity" is the baseline that
// recommends every query the most trained-on items (models.Popularity).
// negatives is the method the negatives were drawn by (rewire or
// uniform: the held-out figures of uniform negatives' models are not
// comparable with rewired ones').
type RecommendMetricsCols struct {
	_                     keyed
	Model                 []string  `col:"model,dict"`
	Queries               []int32   `col:"queries"`
	K                     []int32   `col:"k"`
	Candidates            []int32   `col:"candidates"`
	SameSubcategory       []float64 `col:"same_subcategory"`
	DistinctSubcategories []float64 `col:"distinct_subcategories"`
	Coverage              []float64 `col:"coverage"`
	Gini                  []float64 `col:"gini"`
	CoverageCross         []float64 `col:"coverage_cross,optional"`
	GiniCross             []float64 `col:"gini_cross,optional"`
	TestQueries           []int32   `col:"test_queries"`
	HitRate               []float64 `col:"hit_rate"`
	Recall                []float64 `col:"recall"`
	NDCG                  []float64 `col:"ndcg,optional"`
	MRR                   []float64 `col:"mrr,optional"`
	TopItemShare          []float64 `col:"top_item_share,optional"`
	TopItem               []string  `col:"top_item,optional"`
	Dominated             []bool    `col:"dominated,optional"`
	Negatives             []string  `col:"negatives,optional"`
}

// PublishedCols: published, publish/recommendations.parquet. For every
// query (each item with features, or each id of publish.queries), the exact
// top k of the publish model by P(related) after the publish rules, by
// query (id in byte order) then rank (1-based); ties go to the lower item
// id. A list the rules shorten is shorter, one with nothing left is absent.
// Each row group holds whole lists. space is as in recommendations.
type PublishedCols struct {
	_               keyed
	Query           []string  `col:"query"`
	Rank            []int32   `col:"rank"`
	Item            []string  `col:"item"`
	Probability     []float64 `col:"probability"`
	Space           []int32   `col:"space"`
	SameSubcategory []bool    `col:"same_subcategory"`
}

// ChurnCols: churn, publish/churn.parquet. One row per query of this run's
// or the published run's table, by query: overlap is the number of items
// the two top-k lists share, jaccard that over the size of their union (1
// when both are empty); in_previous and in_current say which tables list
// the query (a query of one alone has overlap 0 and jaccard 0).
type ChurnCols struct {
	_          keyed
	Query      []string  `col:"query"`
	Overlap    []int32   `col:"overlap"`
	Jaccard    []float64 `col:"jaccard"`
	InPrevious []bool    `col:"in_previous"`
	InCurrent  []bool    `col:"in_current"`
}

// ColdItemsMetricsCols: cold_items_metrics,
// recommend/cold_items_metrics.parquet, written only by a run with the
// cold_items setting. One row per model, then the popularity baseline's:
// the items held out of the whole run (cold_items) scored as new items
// against the run's catalogue (candidates, the items with features not
// held out). queries are the sampled held-out items with a held-out
// relation to a catalogue item, relations those relations counted once;
// hit_rate is the share of queries with a partner in its top k, recall the
// mean share of its partners found, ndcg and mrr as in recommend_metrics.
// Not the "cold" slice of slices (test pairs with an end in no training
// pair, items the run still trained beside).
type ColdItemsMetricsCols struct {
	_          keyed
	Model      []string  `col:"model,dict"`
	ColdItems  []int32   `col:"cold_items"`
	Queries    []int32   `col:"queries"`
	Relations  []int64   `col:"relations"`
	K          []int32   `col:"k"`
	Candidates []int32   `col:"candidates"`
	HitRate    []float64 `col:"hit_rate"`
	Recall     []float64 `col:"recall"`
	NDCG       []float64 `col:"ndcg"`
	MRR        []float64 `col:"mrr"`
}

// ExportVectorsCols: export_vectors, vectors.parquet in the directory
// `monomer export` writes (not under a run directory; docs/serving.md),
// and in a `monomer score` directory for its new items (docs/scoring.md).
// One row per item of the experiment with features, by id (byte order):
// its query_vector q(x) and item_vector v(y), float32 of the model's
// inner-product form, so that P(related) = σ(c − query_offset + q(x)·v(y))
// with c in model.json, and query_offset, ‖E₀ᵀx‖² in float64. The two
// vectors are fixed_size_list<float>[dimension] in the file (the
// dimension is in model.json: K+1 for LMT, N(K+1) for Monomer).
type ExportVectorsCols struct {
	_           keyed
	ID          []string    `col:"id"`
	QueryVector [][]float32 `col:"query_vector,fixed"`
	ItemVector  [][]float32 `col:"item_vector,fixed"`
	QueryOffset []float64   `col:"query_offset"`
}

// SlicesCols: slices, evaluate/slices.parquet. Each model's test pairs at
// the chosen λ cut three ways (slice), each group's rows adding up to the
// test set: cold (an end of the pair in no training pair) against warm;
// query_degree, the quartiles of the query's training positives over the
// test pairs (group "q2: degree 3-5"); category_pair, the query's
// subcategory → the item's ("Boots → Socks"), whose heterogeneity is the
// Euclidean distance between the two subcategories' mean feature vectors
// (NaN on the other slices). error and auc are as in metrics, over the
// group's pairs (NaN for a group without pairs, or auc without both
// labels). negatives is the method the negatives were drawn by, on every
// row: uniform errors are not comparable with rewired ones. Rows by model
// (the job's order), slice (cold, query_degree,
// category_pair), then group (category pairs in name order).
type SlicesCols struct {
	_             keyed
	Experiment    []string  `col:"experiment,dict"`
	Model         []string  `col:"model,dict"`
	Slice         []string  `col:"slice,dict"`
	Group         []string  `col:"group"`
	Pairs         []int64   `col:"pairs"`
	Positives     []int64   `col:"positives"`
	Error         []float64 `col:"error"`
	AUC           []float64 `col:"auc"`
	Heterogeneity []float64 `col:"heterogeneity"`
	Negatives     []string  `col:"negatives,dict"`
}

// ComparisonsCols: comparisons, comparisons.parquet at the run directory's
// top and report/comparisons.parquet. One row per experiment and pair of
// models (Monomer against LMT, each against WNN, those the experiment
// trained), in experiment and then that order: McNemar's test of the two
// models' per-pair correct/incorrect over the same test pairs, pooled over
// the job's seeds. a_only and b_only count the pairs only model a, only
// model b got right; test is mcnemar_exact (the exact binomial test, below
// 25 discordant pairs; statistic min(a_only, b_only)) or mcnemar_chi2_cc
// (chi-square with continuity correction); error_a and error_b are the
// pooled test errors.
type ComparisonsCols struct {
	_          keyed
	Experiment []string  `col:"experiment,dict"`
	ModelA     []string  `col:"model_a,dict"`
	ModelB     []string  `col:"model_b,dict"`
	Seeds      []int32   `col:"seeds"`
	Pairs      []int64   `col:"pairs"`
	AOnly      []int64   `col:"a_only"`
	BOnly      []int64   `col:"b_only"`
	Test       []string  `col:"test,dict"`
	Statistic  []float64 `col:"statistic"`
	PValue     []float64 `col:"p_value"`
	ErrorA     []float64 `col:"error_a"`
	ErrorB     []float64 `col:"error_b"`
	Job        []string  `col:"job,dict"`
	JobHash    []string  `col:"job_hash,dict"`
}

// The Arrow schema of each table, derived from its struct; Tables lists
// them with their names.
var (
	Items            = declare[ItemsCols]("items")
	Edges            = declare[EdgesCols]("edges")
	Rejects          = declare[RejectsCols]("rejects")
	Reviews          = declare[ReviewsCols]("reviews")
	Vocabulary       = declare[VocabularyCols]("vocabulary")
	Bow              = declare[BowCols]("bow")
	BowCounts        = declare[BowCountsCols]("bow_counts")
	BowShard         = declare[BowShardCols]("bow_shard")
	FeatureItems     = declare[FeatureItemsCols]("feature_items")
	Pairs            = declare[PairsCols]("pairs")
	Predictions      = declare[PredictionsCols]("predictions")
	Metrics          = declare[MetricsCols]("metrics")
	Fits             = declare[FitsCols]("fits")
	Trace            = declare[TraceCols]("trace")
	Topics           = declare[TopicsCols]("topics")
	CTCounts         = declare[CTCountsCols]("ct_counts")
	Params           = declare[ParamsCols]("params")
	JobMetrics       = declare[JobMetricsCols]("job_metrics")
	Recommendations  = declare[RecommendationsCols]("recommendations")
	RecommendMetrics = declare[RecommendMetricsCols]("recommend_metrics")
	Published        = declare[PublishedCols]("published")
	Churn            = declare[ChurnCols]("churn")
	ExportVectors    = declare[ExportVectorsCols]("export_vectors")
	Slices           = declare[SlicesCols]("slices")
	Comparisons      = declare[ComparisonsCols]("comparisons")
	ColdItemsMetrics = declare[ColdItemsMetricsCols]("cold_items_metrics")
)

// NamedSchema is one declared table: its name and schema.
type NamedSchema struct {
	Name   string
	Schema *arrow.Schema
	cols   reflect.Type // the table struct
}

var declared []NamedSchema

// Tables returns the declared tables, in declaration order.
func Tables() []NamedSchema { return slices.Clone(declared) }

// declare derives T's schema; T is a table struct of this package, so an
// error is a programming error caught by every test run.
func declare[T any](name string) *arrow.Schema {
	s, err := Of[T]()
	if err != nil {
		panic(err)
	}
	declared = append(declared, NamedSchema{name, s, reflect.TypeFor[T]()})
	return s
}

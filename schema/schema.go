// Package schema holds the Arrow schemas of every table monomer writes and is
// the only code that reads or writes Parquet.
//
// Files are written one way so two runs on the same rows give the same bytes
// (see DEPENDENCIES.md, "Reproducibility hazards"): a pinned created-by,
// zstd compression at a fixed level, a fixed row-group length, and dictionary
// encoding only for the low-cardinality string columns marked in the schema
// (arrow-go writes encoding statistics in map order once a dictionary falls
// back to plain encoding, which breaks byte identity).
package schema

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// CreatedBy is pinned so the footer does not change with the library version.
const CreatedBy = "monomer"

// dictKey marks a field whose Parquet column is dictionary-encoded.
const dictKey = "monomer.dictionary"

var (
	str   = arrow.BinaryTypes.String
	i8    = arrow.PrimitiveTypes.Int8
	i32   = arrow.PrimitiveTypes.Int32
	i64   = arrow.PrimitiveTypes.Int64
	f32   = arrow.PrimitiveTypes.Float32
	f64   = arrow.PrimitiveTypes.Float64
	boolT = arrow.FixedWidthTypes.Boolean
)

func field(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t}
}

// dict is a low-cardinality string field (a category, a split name).
func dict(name string) arrow.Field {
	return arrow.Field{Name: name, Type: str, Metadata: arrow.NewMetadata([]string{dictKey}, []string{"true"})}
}

func newSchema(fields ...arrow.Field) *arrow.Schema { return arrow.NewSchema(fields, nil) }

// The tables of SPEC section 8. The first columns are the contract; columns
// after them are extras documented here.
var (
	// Items: one row per valid item of an experiment, in item-index order
	// (row i is item i everywhere else).
	Items = newSchema(
		field("asin", str), field("title", str), field("brand", str),
		dict("subcategory"), field("category_path", str),
		field("n_reviews", i32), field("has_image", boolT),
	)
	// Edges: kept relationships, sorted by (src_idx, dst_idx). Extras: the
	// item indices of both ends.
	Edges = newSchema(
		field("src", str), field("dst", str), dict("graph"),
		field("src_idx", i32), field("dst_idx", i32),
	)
	// Rejects: malformed input records, in file then line order.
	Rejects = newSchema(
		dict("file"), field("line", i64), field("offset", i64),
		field("error", str), field("excerpt", str),
	)
	// Vocabulary: term ids in rank order (count desc, term asc). Extra:
	// surface, a readable unstemmed form.
	Vocabulary = newSchema(
		field("term_id", i32), field("term", str), dict("kind"),
		field("count", i64), field("doc_freq", i64), field("surface", str),
	)
	// Bow: one row per kept item, in item order. Extras: the item index and
	// raw counts (LDA's input).
	Bow = newSchema(
		field("asin", str),
		field("term_ids", arrow.ListOf(i32)), field("weights", arrow.ListOf(f32)),
		field("item_idx", i32), field("counts", arrow.ListOf(i32)),
	)
	// BowCounts: one shard's candidate-term counts (monomer bow-shard), by
	// term then sampling level; BowShard its totals, one row.
	BowCounts = newSchema(field("term", str), field("level", i32), field("count", i64), field("nouns", i64))
	BowShard  = newSchema(field("shard", i32), field("shards", i32), field("docs", i64),
		field("tokens", i64), field("level_tokens", arrow.ListOf(i64)), field("fingerprint", str))
	// FeatureItems: the items that have a feature vector, in item order;
	// for image features, row i of the matrix is item_idx[i].
	FeatureItems = newSchema(field("asin", str), field("item_idx", i32))
	// Pairs: R and the negatives, split; rows in split order (train, valid,
	// test), shuffled within. Extras: item indices.
	Pairs = newSchema(
		field("x", str), field("y", str), field("label", i8), dict("split"),
		field("x_idx", i32), field("y_idx", i32),
	)
	// Predictions: per model and split, in pairs order.
	Predictions = newSchema(
		dict("model"), dict("split"), field("x", str), field("y", str),
		field("label", i8), field("distance", f64), field("probability", f64),
		field("predicted", i8),
	)
	// Metrics: one row per (model, lambda, split). Extra: selected marks the
	// lambda chosen on validation error; only its rows have train and test.
	Metrics = newSchema(
		dict("experiment"), dict("model"), dict("split"),
		field("error", f64), field("auc", f64), field("log_likelihood", f64),
		field("pairs", i64), field("lambda", f64), field("k", i32), field("n", i32),
		field("iterations", i32), field("selected", boolT),
	)
	// Fits: the training record, one row per (model, lambda) in grid order;
	// selected marks the lambda chosen on validation error, and c is the
	// chosen fit's sigmoid offset (NaN on other rows). valid_spread is the
	// range of the validation probabilities; flags names what is
	// degenerate about the fit (models.GridPoint.Flags, comma-separated,
	// empty when nothing is). evaluations counts the fit's objective
	// evaluations (forward passes), grad_evaluations those that also
	// computed the gradient. train_objective is
	// the objective at the kept (best-validation) iterate, final_objective
	// at the last one: together they show how far training went past the
	// kept one.
	Fits = newSchema(
		dict("model"), field("lambda", f64), field("valid_error", f64),
		field("valid_log_likelihood", f64), field("train_objective", f64),
		field("iterations", i32), field("best_iteration", i32), dict("status"),
		field("selected", boolT), field("k", i32), field("n", i32), field("c", f64),
		field("valid_spread", f64), dict("flags"),
		field("evaluations", i32), field("grad_evaluations", i32), field("final_objective", f64),
	)
	// Trace: one row per L-BFGS iteration of every grid point of every
	// model, in training order (models as in the job, grid points in
	// models.GridOrder). valid_error is NaN where it was not checked;
	// evaluations and grad_evaluations are the grid point's so far.
	Trace = newSchema(
		dict("model"), field("lambda", f64), field("iteration", i32), field("objective", f64),
		field("valid_error", f64), field("evaluations", i32), field("grad_evaluations", i32),
	)
	// Topics: LDA topic proportions of each item with a vector, item order.
	Topics = newSchema(field("item_idx", i32), field("proportions", arrow.ListOf(f32)))
	// Params: learned parameters, one row per matrix row; c and other scalars
	// are 1x1 matrices.
	Params = newSchema(
		dict("model"), dict("param"), field("row", i32), field("values", arrow.ListOf(f64)),
	)
	// JobMetrics: the job-level table across experiments, one row per
	// (experiment, model, split) at the chosen lambda: the metrics columns,
	// then the paper's data set name, the graph, the feature kind and the
	// paper's published test error (NaN where the paper has none).
	JobMetrics = newSchema(
		dict("experiment"), dict("model"), dict("split"),
		field("error", f64), field("auc", f64), field("log_likelihood", f64),
		field("pairs", i64), field("lambda", f64), field("k", i32), field("n", i32),
		field("iterations", i32),
		dict("dataset"), dict("graph"), dict("features"), field("paper_error", f64),
		// The recommendation claims (RecommendMetrics' columns), on the
		// test rows of the models the recommend stage answered; NaN
		// elsewhere.
		field("same_subcategory", f64), field("distinct_subcategories", f64),
		field("coverage", f64), field("gini", f64), field("hit_rate", f64), field("recall", f64),
	)
)

// Recommendations (the recommend stage).
var (
	// Recommendations: the exact top-k of each sampled query item over every
	// item with features, by model then query (item order) then rank
	// (1-based, nearest first). space is, for Monomer, the space k in 1..N
	// contributing most to the item's score (0 for other models). Extras:
	// distance and the item indices.
	Recommendations = newSchema(
		dict("model"), field("query", str), field("rank", i32), field("item", str),
		field("probability", f64), field("same_subcategory", boolT), field("space", i32),
		field("distance", f64), field("query_idx", i32), field("item_idx", i32),
	)
	// RecommendMetrics: one row per model. same_subcategory is the share
	// of recommended items in the query's subcategory; distinct_subcategories
	// the mean number of subcategories in a list; coverage the share of
	// candidate items in anyone's list and gini the Gini coefficient of how
	// often each candidate is recommended. hit_rate and recall are over
	// test_queries, the query items with held-out test positives: the share
	// with at least one test positive in its top k, and the mean share of
	// its test positives found (known train and validation positives are
	// left out of those lists).
	RecommendMetrics = newSchema(
		dict("model"), field("queries", i32), field("k", i32), field("candidates", i32),
		field("same_subcategory", f64), field("distinct_subcategories", f64),
		field("coverage", f64), field("gini", f64),
		field("test_queries", i32), field("hit_rate", f64), field("recall", f64),
	)
)

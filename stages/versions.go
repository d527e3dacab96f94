package stages

import (
	"monomer/models"
)

// Code versions: each stage's version is the cache key's code part (see
// cache.Code; Graph reads these methods into it), so a rebuild reruns only the stages whose version
// changed. Bump a stage's version in the same commit as any change that can
// change its outputs for the same inputs, including changes to the library
// code it calls (amazon, bow, graph, models, schema, report) and dependency
// upgrades that write other bytes. TestStageVersions fails, naming the
// stage, when outputs change under an unchanged version; after a bump,
// `go test ./stages -run TestStageVersions -update` records the new
// outputs in testdata/stage-versions.json.
//
// They live together here so the whole set reads as one table.

func (Ingest) Version() string    { return "1.1.0" } // 1.1: reviews.parquet (bag-of-words experiments)
func (BowShard) Version() string  { return "1.1.0" } // 1.1: reads ingest's reviews.parquet (same outputs)
func (Features) Version() string  { return "1.1.0" } // 1.1: reads ingest's reviews.parquet (same outputs)
func (Negatives) Version() string { return "1.1.0" } // 1.1: the graph it names the positives by is in its key (issue 25)
func (Split) Version() string     { return "1.0.0" }
func (Train) Version() string     { return "2.11.0" } // 2.11: L-BFGS on all cores, its dot products summed over fixed chunks (issue 40); 2.10: warm_start runs the λ path from the smallest λ up (it ran from the largest down); 2.9: the features kind in a learned model's key (issue 25); 2.8: fits gate_spaces, gate_routes (Monomer's gate use); earlier ones below
func (Evaluate) Version() string  { return "1.4.0" }  // 1.4: the features kind in its key (issue 25); 1.1: WNN SIMD dot; 1.2: WNN distance in wnnkern lane order; 1.3: scores through sparse rows as Train 2.7
func (Recommend) Version() string { return "1.3.0" }  // 1.3: the features kind in its key (issue 25); 1.2: scores in internal/dotkern's fixed arithmetic, the same bits under every BLAS kernel; 1.1: coverage_cross and gini_cross, the lists with the query's own subcategory left out
func (Report) Version() string    { return "1.4.0" }  // 1.4: its key holds the job name, seed and what it reads of each experiment (issue 25); 1.1: coverage_cross and gini_cross in metrics.parquet and the claims table; 1.2: one renderer for index.html and tables.md (issue 22), provenance, plots capped; the gate's spaces used and routes under its plot, a small-data warning; 1.3: the two 1.2.0 of issues 22 and 28 merged (each shipped alone), the build left out of the rendered page

// Train's earlier versions: 2: one node per model; 2.1: WNN SIMD dot;
// 2.2: Monomer item gradients summed per pseudo space; 2.3: train.ct; 2.4:
// WNN distance in wnnkern lane order, pairs in x order; 2.5: blocks of
// items spanning up to 640 rows multiplied in place (Xᵀ·G over their gap
// rows rounds otherwise); 2.6: blocks crossing a record batch multiplied in
// place in segments, not copied; 2.7: dense features at most 25 %
// non-zero multiplied as sparse rows, WNN on sparse rows through its
// pairs' products.

// The toolchain decides the outputs of the stages doing floating-point
// arithmetic (bag-of-words weights, training, scores) or drawing from
// math/rand/v2 (rewiring, the split's shuffle, initialisation). Ingest only
// parses and sorts, so a Go upgrade leaves it up to date; report runs a
// seeded t-SNE in floating point, and recommend sums its scores in float64.

func (Features) GoDependent() bool  { return true }
func (Negatives) GoDependent() bool { return true }
func (Split) GoDependent() bool     { return true }
func (Train) GoDependent() bool     { return true }
func (Evaluate) GoDependent() bool  { return true }
func (Recommend) GoDependent() bool { return true }
func (Report) GoDependent() bool    { return true }

// Training and scoring run their matrix products on the BLAS gonum routes
// them to (pure Go, or OpenBLAS in the openblas build), which rounds
// differently per implementation and CPU kernel.
func (Train) NumericEnv() string     { return blasEnv() }
func (Evaluate) NumericEnv() string  { return blasEnv() }
func (Recommend) NumericEnv() string { return blasEnv() }
func (Report) NumericEnv() string    { return blasEnv() } // it projects items for the maps

// blasEnv names the BLAS implementation, version and CPU kernel in use
// (models.BLAS): two kernels round differently, so they must not share
// cached outputs.
func blasEnv() string { return models.BLAS().String() }

var (
	_ interface{ Version() string }    = Ingest{}
	_ interface{ Version() string }    = Report{}
	_ interface{ GoDependent() bool }  = Train{}
	_ interface{ NumericEnv() string } = Train{}
	_ interface{ NumericEnv() string } = Evaluate{}
)

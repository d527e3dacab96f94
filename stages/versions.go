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
// They live together here so the whole set reads as one table; why each
// was bumped is in CHANGELOG.md ("Stage code versions"), where a bump adds
// its row.

func (Ingest) Version() string    { return "1.3.0" }
func (BowShard) Version() string  { return "1.1.0" }
func (Features) Version() string  { return "1.4.0" }
func (Negatives) Version() string { return "1.2.0" }
func (Split) Version() string     { return "1.1.0" }
func (Train) Version() string     { return "2.13.0" }
func (Evaluate) Version() string  { return "1.4.0" }
func (Recommend) Version() string { return "1.3.0" }
func (Report) Version() string    { return "1.6.0" }
func (Publish) Version() string   { return "1.0.0" }

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
func (Publish) GoDependent() bool   { return true }

// Training and scoring run their matrix products on the BLAS gonum routes
// them to (pure Go, or OpenBLAS in the openblas build), which rounds
// differently per implementation and CPU kernel.
func (Train) NumericEnv() string     { return blasEnv() }
func (Evaluate) NumericEnv() string  { return blasEnv() }
func (Recommend) NumericEnv() string { return blasEnv() }
func (Report) NumericEnv() string    { return blasEnv() } // it projects items for the maps
func (Publish) NumericEnv() string   { return blasEnv() }

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

// Package cache is the runner's content cache, like Go's
// cmd/go/internal/cache: the manifest a finished stage leaves beside its
// outputs (Manifest), the cache key derived from a complete description of
// the computation (KeyInputs.Key: stage, code version, seed, normalised
// parameters, raw-file content, upstream output hashes), the code version
// (CodeVersion), the memory of raw-file hashes by file identity
// (HashCache), the content-addressed store of outputs by key (Store,
// Trim), and the guard on declared code versions (StageRecord,
// CheckStages, UpdateRecords). It knows nothing of the job, the DAG or the
// run directory's layout beyond one stage directory; package pipeline runs
// the stages and uses it. Its error messages name the runner
// ("pipeline: ..."), which is what a user runs.
package cache

// Package pipeline runs stages: it owns the DAG of a job's stages and
// experiments (Graph), the selection of what runs (Options: --experiment,
// --only, --from, --force), the run directory, when to key, restore and
// store a stage's outputs (package cache keeps them), locking, the atomic commit of every output, the plan
// (Plan), verification (Verify), the comparison of two run directories
// (Diff, table cells through a comparison it is given) and the logs.
// Stages themselves live in package stages and only read inputs from and
// write outputs to the directories the runner gives them.
//
// Package pipeline is a leaf, like Go's cmd/go/internal/cache: it imports
// no package of this module and no table format. It must not know what a
// stage computes, nor the job file's format: the layer above (package
// stages) expands the job into a neutral Spec of nodes (name, experiment,
// seed, code version, parameters, files, dependencies) and the runner
// hashes each node's parameters, hands the same value to its Run, and
// reads a stage's tables only to hash them (or compare them, through
// DiffOptions.Compare and Options.Compare). It is the one place that logs
// (log/slog); stages return their counts in Result.
//
// The run directory:
//
//	DIR/.lock                      flock: exclusive for whole-job runs, shared
//	                               for --experiment runs (see LockName)
//	DIR/<experiment>/.lock         flock of one experiment's runs
//	DIR/<experiment>/<stage>/      the stage's outputs and its manifest.json
//	DIR/<experiment>/<node>/       the same for one shard (bow-shard-0-of-2)
//	                               or part (train.lmt) of a stage
//	DIR/<job stage>/               job-level stages (report)
//	DIR/metrics.parquet            published by report (see Node.Publish)
//	DIR/.hashcache.json            raw-input hashes by path, size, mtime, ctime
//
// A stage's cache key (cache.KeyInputs.Key) hashes its name, code version
// (the version it declares, see cache.CodeVersion), seed, normalised
// parameters, the content of its raw inputs and the output hashes its
// upstream stages' manifests record, like the ActionID of Go's build cache.
// The manifests, keys, file hashes and the store of outputs are package
// cache; this package decides when to use them. A stage runs into
// DIR/<exp>/.<stage>.tmp-<pid>, its files and manifest are fsynced, and it
// is renamed into place; the next run under the lock removes what a killed
// run left (recoverDir).
package pipeline

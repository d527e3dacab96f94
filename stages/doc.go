// Package stages holds one file per pipeline stage. Each reads its inputs
// from the run directory (or the raw files), writes its tables into the
// directory the runner gives it, and returns counts; the runner logs.
//
// It owns the glue: which library call a stage makes with which settings,
// its typed parameters, which are its cache key (bind.go), its code version
// (versions.go), and the expansion of a job into the runner's DAG (Graph).
// Domain rules belong to the library packages (amazon, graph, bow, imagefeat,
// models); a stage must not log, read the environment, or read a stage's
// outputs it does not declare in Deps (pipeline.Env refuses them).
package stages

// Package job is the job file: its YAML schema (Job, Experiment, Data,
// Settings), the defaults (Defaults), --set and MONOMER_* overrides
// (Override, ParseSets, EnvOverrides), validation before any data is read
// (Validate: names, enumerations, bounds, the feature dimension each size
// must fit) and per-experiment resolution (Resolve: defaults, then the job's
// settings, then the experiment's, with data paths made absolute).
//
// Settings embeds the settings structs the libraries declare (each field
// with its doc comment, default and bounds: see monomer/internal/setting)
// and handles every field alike by reflection, so that adding a setting is
// one field in its library plus its use.
//
// A setting left out inherits; so does a zero one, except for the Opt
// settings, whose zero means something (reject_ratio: 0, use_summary:
// false): those inherit only when absent. The resolved values are what cache
// keys hash, so a default changes a key only when its value changes.
//
// Errors wrap ErrConfig (an invalid file or override) or ErrUsage (a
// malformed --set), name the file and the field's path in it
// ("experiments[2].graph"), and map to exit code 2.
//
// Package job must not import pipeline, stages, report, schema or Arrow
// (TestJobImports), and the runner (package pipeline) does not import job
// either: package stages turns the resolved job into the runner's nodes,
// and a job file is checked without linking the table code. It reads no
// file but the job file, runs nothing, does not log and does not read the
// environment itself (callers pass os.Environ() to EnvOverrides).
package job

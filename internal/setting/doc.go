// Package setting is how a library declares the job-file settings it owns:
// one exported struct of settings per concern (bow.VocabSettings,
// graph.PairSettings, ...), which the job package embeds in job.Settings
// and handles by reflection, so that a setting is one field, declared once:
//
//	// SwapsPerEdge is the number of switch attempts per edge in the
//	// first rewiring phase (see DefaultSwapsPerEdge for why 20).
//	SwapsPerEdge int `yaml:"swaps_per_edge" default:"20" min:"0" cap:"10_000"`
//
// The field's doc comment says what it means; its tags say the rest:
//
//	yaml     the key in the job file, under settings: (required)
//	json     as for encoding/json: the job's JSON, whose hash the report
//	         shows, names the field by its Go name; `json:",omitzero"`
//	         keeps a setting that is not set out of it
//	default  the value when neither the job nor the experiment sets it,
//	         written as in the job file (YAML: 20, 0.5, rewire,
//	         [0, 1e-6]); without it, the zero value, which the code using
//	         the setting reads as its doc comment says
//	min, max the range of a value given in the job file, checked before
//	         anything is read ("settings.k: -1 must be positive"); for a
//	         list, of each element
//	cap      a bound far above any sensible value that keeps derived sizes
//	         in range, checked on each experiment's resolved value
//	         ("experiments[0].settings.vocab_size: 2000000 is above the
//	         maximum 1000000"); for a list, of its length
//	oneof    the accepted values of a string, separated by spaces
//	unique   "true": a list's elements must differ
//	must     replaces the derived "must be ..." of a range error
//	         ("finite and non-negative")
//	why      appended in parentheses to a range error
//
// A range error reads "must be positive" for min 0 (a zero given for a
// plain field is unset, so a value is above 0), "must be at least 2",
// "must be at most 1" or "must be in (0, 1]". A float that is NaN or
// infinite "is not a number", or fails the must phrase when there is one.
//
// A plain field is unset when zero (or empty), and then inherits; a
// setting whose zero means something (reject_ratio: 0, use_summary:
// false) is an Opt, unset only when absent from the file.
//
// A stage keyed by settings (train, by the models' settings it reads) keys
// them with Key: the settings by their yaml keys, zeros left out, so adding a
// setting changes no key where its value is zero.
//
// The number types are int, int64 and float64, plus string, Opt[bool] and
// []float64: what job's checks of a value's type (an integer, a number,
// true or false) know. job's tests hold every declaration to these rules.
package setting

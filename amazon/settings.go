package amazon

import "monomer/internal/setting"

// IngestSettings are the job settings of reading the raw files (declared
// as package setting describes).
type IngestSettings struct {
	// RejectRatio is the fraction of malformed lines above which ingest
	// fails (exit 3). 0 fails on the first malformed line; a negative value
	// never fails. It applies to each input file (metadata, reviews, image
	// features, embeddings) against that file's own lines, and any reject
	// at all gives one WARN per file with its count; the rejected lines are
	// in the rejects table.
	RejectRatio setting.Opt[float64] `yaml:"reject_ratio" default:"0.001" max:"1"`
}

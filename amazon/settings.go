package amazon

import "monomer/internal/setting"

// IngestSettings are the job settings of reading the raw files (declared
// as package setting describes).
type IngestSettings struct {
	// RejectRatio is the fraction of malformed lines above which ingest
	// fails (exit 3). 0 fails on the first malformed line; a negative value
	// never fails.
	RejectRatio setting.Opt[float64] `yaml:"reject_ratio" default:"0.001" max:"1"`
}

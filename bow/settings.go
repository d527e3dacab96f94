package bow

import "monomer/internal/setting"

// VocabSettings are the job settings of the bag-of-words features
// (declared as package setting describes).
type VocabSettings struct {
	// VocabSize is the vocabulary size (DefaultVocabSize, paper §4.5). The
	// cap is far above the distinct adjectives and nouns of a category's
	// reviews.
	VocabSize int `yaml:"vocab_size" default:"5000" min:"0" cap:"1_000_000"`
	// UseSummary adds review summaries to the text.
	UseSummary setting.Opt[bool] `yaml:"use_summary" default:"false"`
	// VocabSampleTokens caps the tokens used to choose the vocabulary:
	// above it, the vocabulary is chosen from a deterministic sample of
	// the reviews (DefaultSampleTokens); the vectors always count every
	// review. Capped
	// at 2⁴⁰.
	VocabSampleTokens int64 `yaml:"vocab_sample_tokens" default:"50_000_000" min:"0" cap:"1_099_511_627_776"`
	// VocabShards, when above 0, counts a bag-of-words experiment's
	// candidate terms in that many bow-shard DAG nodes (tasks), which the
	// features stage merges instead of counting itself (the vocabulary is
	// the same). If 0, the stage counts in-process.
	VocabShards setting.Opt[int] `yaml:"vocab_shards" default:"0" min:"0" cap:"10_000"`
}

package graph

import "monomer/internal/setting"

// PairSettings are the job settings of the training pairs: how negatives
// are drawn and how many pairs the split keeps (declared as package setting
// describes).
type PairSettings struct {
	// Negatives is rewire (degree-preserving, the paper's: Rewire),
	// uniform (Uniform), or auto: rewire, falling back to uniform when the
	// graph is too dense to rewire (more than 0.1 % of the pairs still in R
	// after the clean-up: RewireOptions.MaxDropFraction), with a WARN line and
	// fallback: uniform, method_used and rewire_error in the negatives
	// stage's stats.
	Negatives string `yaml:"negatives" default:"rewire" oneof:"rewire uniform auto"`
	// SwapsPerEdge is the number of switch attempts per edge in the first
	// rewiring phase (DefaultSwapsPerEdge says why 20; 20 mixes the graph,
	// hence the cap).
	SwapsPerEdge int `yaml:"swaps_per_edge" default:"20" min:"0" cap:"10_000"`
	// TrainCap bounds the training pairs; larger data are subsampled before
	// the 80/10/10 split (DefaultTrainCap, paper §4.1). Pair indices are
	// int32 in the tables, hence the cap; below MinTrainCap a split would
	// lack a positive or a negative pair.
	TrainCap int `yaml:"train_cap" default:"2_000_000" min:"14" why:"a smaller cap leaves the validation or test split without a positive and a negative pair" cap:"2_147_483_647"`
	// Split is how pairs are dealt to train, validation and test: paper
	// (the default: one pair at a time, SplitPairs) or
	// grouped (the two directions of a pair always together,
	// SplitPairsGrouped), for a graph whose relations are given both ways,
	// where the paper's split puts one direction in training and the
	// other in test (the split stage's stats say how often: ReverseShare),
	// or stable (a pair's split drawn from a hash of its two ids,
	// SplitPairsStable, grouped as well), for nightly runs warm-started
	// from the last, whose test pairs must not be pairs it trained on.
	Split setting.Opt[string] `yaml:"split" json:",omitzero" default:"paper" oneof:"paper grouped stable"` // out of the job hash when unset, as CoReviewSettings
	// ColdItems is the share of the experiment's related items (with
	// features) held out of the whole run, with every relation touching
	// them, before negatives, split and training; the recommend stage then
	// scores them as new items against the rest (docs/scoring.md "Cold
	// items"). 0, the default, holds out nothing; the cap keeps most of
	// the graph to train on. An Opt out of the job hash when unset, as
	// Split.
	ColdItems setting.Opt[float64] `yaml:"cold_items" json:",omitzero" default:"0" min:"0" max:"0.5"`
}

// CoReviewSettings are the job settings of the co_review graph (CoReview;
// declared as package setting describes). They are left out of the job's
// JSON when unset, so that the hash of a job that does not use them (which
// the report shows and keys) is what it was before they existed.
type CoReviewSettings struct {
	// CoReviewWindow is the longest time, in days, between one user's
	// reviews of two items for that user to relate them
	// (DefaultCoReviewWindowDays); 0 relates only reviews at the same time
	// (the same day in the 2014 and 2018 files, whose times are whole
	// days; the same second in the 2023 files). The cap is far beyond any
	// review history, and in seconds fits int64.
	CoReviewWindow setting.Opt[int] `yaml:"co_review_window" json:",omitzero" default:"30" min:"0" cap:"1_000_000"`
	// CoReviewMinUsers is how many distinct users must relate two items
	// for an edge (DefaultCoReviewMinUsers). An Opt, so that a 0 given is
	// refused rather than read as the default: it reads as "no minimum",
	// which no value can mean (an edge needs a user), and 1 is accepted.
	CoReviewMinUsers setting.Opt[int] `yaml:"co_review_min_users" json:",omitzero" default:"2" min:"1" why:"an edge needs a user; omit the setting for the default, 2" cap:"2_147_483_647"`
	// CoReviewMaxUserItems leaves out the reviews of users who reviewed
	// more distinct items of the experiment's scope than this (their pairs
	// grow as the square; DefaultCoReviewMaxUserItems). At the cap, one
	// user's 5·10¹¹ pairs are already hopeless. An Opt like
	// CoReviewMinUsers: 0 reads as "no cap", so it is refused like 1.
	CoReviewMaxUserItems setting.Opt[int] `yaml:"co_review_max_user_items" json:",omitzero" default:"1000" min:"2" why:"one item makes no pair; omit the setting for the default, 1000" cap:"1_000_000"`
}

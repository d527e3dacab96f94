package models

import "monomer/internal/setting"

// TrainSettings are the job settings of training (declared as package
// setting describes). The sizes are capped far above any sensible value
// before the feature dimension bounds them (the job checks that). Each
// registered model reads its own of them (Model.Reads), and its train node
// is keyed by those, named by their yaml keys (setting.Key).
type TrainSettings struct {
	// K is the embedding rank of LMT (DefaultLMTK, paper Table 2).
	K int `yaml:"k" default:"100" min:"0" cap:"1_000_000"`
	// MonomerK is Monomer's per-space rank (DefaultMonomerK, paper
	// Table 2).
	MonomerK int `yaml:"monomer_k" default:"20" min:"0" cap:"1_000_000"`
	// N is Monomer's number of non-anchor spaces (DefaultMonomerN).
	N int `yaml:"n" default:"4" min:"0" cap:"1_000_000"`
	// GatePenalty is the L2 weight of Monomer's gate U as a multiple of λ
	// (Spec.GatePenalty, DefaultGatePenalty).
	GatePenalty float64 `yaml:"gate_penalty" default:"1" min:"0" must:"finite and non-negative"`
	// GateInit is the standard deviation of Monomer's starting gating
	// logits (Spec.GateInit, DefaultGateInit).
	GateInit float64 `yaml:"gate_init" default:"0.01" min:"0" must:"finite and non-negative"`
	// Topics is the LDA topic count (DefaultTopics).
	Topics int `yaml:"topics" default:"100" min:"0" cap:"1_000_000"`
	// LDAPasses is the number of LDA passes over the corpus. If 0,
	// max(1, ⌈20 / chunks⌉) (chunks of 2000 documents): at least 20
	// M-steps, where gensim's default is one pass.
	LDAPasses int `yaml:"lda_passes" min:"0"`
	// Lambdas is the L2 grid searched on validation error
	// (DefaultLambdas).
	// A λ above 1e6 leaves parameters of at most about 1e-6 (the
	// gradient of the scaled log-likelihood is O(1)): a constant
	// predictor; 1e308 overflowed the objective.
	Lambdas []float64 `yaml:"lambdas" default:"[0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2]" min:"0" max:"1e6" unique:"true" cap:"1000"`
	// MaxIter caps L-BFGS iterations per fit (DefaultMaxIter).
	MaxIter int `yaml:"max_iter" default:"200" min:"0" cap:"1_000_000"`
	// ValidEvery is how many iterations pass between validation checks
	// (DefaultValidEvery).
	ValidEvery int `yaml:"valid_every" default:"10" min:"0" cap:"1_000_000"`
	// CTTop is the fraction of linked subcategories CT predicts positive
	// (DefaultCTTop, paper §4.2).
	CTTop float64 `yaml:"ct_top" default:"0.5" min:"0" max:"1"`
	// Patience ends a fit after this many validation checks in a row that
	// keep nothing (Spec.Patience). 6 was measured to change no test error
	// beyond noise (docs/notes/2026-11-23-blas-kernels-sgemm.md, "Fewer
	// evaluations"); negative: never.
	Patience int `yaml:"patience" default:"6"`
	// WarmStart trains the λ grid from the smallest λ to the largest, each
	// from the parameters kept at the one before (Spec.WarmStart, GridOrder).
	WarmStart setting.Opt[bool] `yaml:"warm_start" default:"false"`
}

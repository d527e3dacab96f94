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
	// (Spec.GatePenalty, DefaultGatePenalty): Ω = λ(‖E₀‖² + … + ‖E_N‖² +
	// gate_penalty·‖U‖²). The paper's Ω is "an L2-regularizer"
	// with validated hyperparameters; a gate that routes items to distinct
	// spaces needs a larger U than the embeddings' λ allows. 0.1 with
	// gate_init 1 made the gate follow synth's planted notions at three
	// of five seeds but cost 0.01 test error on a smaller world, and costs
	// text features 0.008-0.017 test error at 500-4,000 training pairs, so
	// it is an option, not the default
	// (docs/notes/2026-11-23-recommendations-report.md and
	// docs/notes/2026-11-25-gate-spaces.md). The
	// fits table's gate_routes says whether the gate routes.
	GatePenalty float64 `yaml:"gate_penalty" default:"1" min:"0" must:"finite and non-negative"`
	// GateInit is the standard deviation of Monomer's starting gating
	// logits Uᵀf, with the features scaled to mean ‖f‖² = 1 (Spec.GateInit,
	// DefaultGateInit). Near 0 every item starts at a uniform gate, where
	// the spaces see the same gradients and stay alike.
	GateInit float64 `yaml:"gate_init" default:"0.01" min:"0" must:"finite and non-negative"`
	// Topics is the LDA topic count (DefaultTopics).
	Topics int `yaml:"topics" default:"100" min:"0" cap:"1_000_000"`
	// LDAPasses is the number of LDA passes over the corpus. If 0,
	// max(1, ⌈20 / chunks⌉) (chunks of 2000 documents): at least 20
	// M-steps. gensim's other defaults are kept, but not its one pass: a
	// corpus under 2000 documents would be a single M-step (ρ = 1) from
	// random topics. The passes taken are lda_topics.passes in the stats
	// of train.lda's manifest.
	LDAPasses int `yaml:"lda_passes" min:"0"`
	// Lambdas is the L2 grid searched on validation error
	// (DefaultLambdas). Training scales the features by s = 1/√(mean ‖f‖²)
	// over the train items (image activations have mean ‖f‖² ≈ 16,
	// sum-to-one word vectors ≈ 0.02), so a λ is the same strength of
	// regularisation for image and bag-of-words features; the saved
	// parameters are multiplied back to act on the raw features (each
	// train.<model> manifest's feature_scale records s).
	// A λ above 1e6 leaves parameters of at most about 1e-6 (the
	// gradient of the scaled log-likelihood is O(1)): a constant
	// predictor; 1e308 overflowed the objective.
	Lambdas []float64 `yaml:"lambdas" default:"[0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2]" min:"0" max:"1e6" unique:"true" cap:"1000"`
	// MaxIter caps L-BFGS iterations per fit (DefaultMaxIter).
	MaxIter int `yaml:"max_iter" default:"200" min:"0" cap:"1_000_000"`
	// ValidEvery is how many iterations pass between validation checks
	// (DefaultValidEvery); the iterate with the best validation error is
	// kept.
	ValidEvery int `yaml:"valid_every" default:"10" min:"0" cap:"1_000_000"`
	// CTTop is the fraction of linked subcategories CT predicts positive
	// (DefaultCTTop, paper §4.2).
	CTTop float64 `yaml:"ct_top" default:"0.5" min:"0" max:"1"`
	// Patience ends a fit after this many validation checks in a row that
	// keep nothing (Spec.Patience), with status Patience in the fits
	// table. 6 was measured to change no test error beyond noise
	// (docs/notes/2026-11-23-blas-kernels-sgemm.md, "Fewer evaluations");
	// negative: never.
	Patience int `yaml:"patience" default:"6"`
	// WarmStart trains the λ grid from the smallest λ to the largest, each
	// from the parameters kept at the one before (Spec.WarmStart,
	// GridOrder); the first starts from the seeded start, as its cold fit
	// does. A larger λ then starts at a fit that is already good and
	// mostly ends after patience checks: on the paper-size Electronics and
	// Baby grids 24-34 % fewer evaluations for WNN, LMT and Monomer, test
	// errors within 0.005 of the cold grids'
	// (docs/notes/2026-11-27-warm-lambda-path.md). The paper jobs turn it on; the default keeps every λ's fit
	// the paper's independent one. Before train 2.10 the path ran
	// downwards, which carried a degenerate large-λ fit into every smaller
	// λ on bags of words.
	WarmStart setting.Opt[bool] `yaml:"warm_start" default:"false"`
}

package job

import (
	"cmp"
	"fmt"
	"slices"

	"monomer/models"
)

// Publish is the publish: block (docs/publishing.md): the whole-catalogue
// item-to-item lists of one trained model and the gate that decides
// whether they replace the experiment's published run. At job level it is
// every experiment's default; an experiment's own block overrides it field
// by field, as settings: does. A job without one publishes nothing.
type Publish struct {
	// Model is the trained model whose lists are published: wnn, lda, lmt
	// or monomer, one of the experiment's models. Required.
	Model string `yaml:"model" json:"model"`
	// K is the length of each list. If unset, it is defaulted to 20.
	K Opt[int] `yaml:"k" json:"k"`
	// CrossSubcategory leaves the query's own subcategory out of its list
	// (the paper's heterogeneous setting). Default false.
	CrossSubcategory Opt[bool] `yaml:"cross_subcategory" json:"cross_subcategory"`
	// MinProbability drops items whose P(related) is below it, shortening
	// the list. Default 0.
	MinProbability Opt[float64] `yaml:"min_probability" json:"min_probability"`
	// Exclude is an optional CSV table of item ids never recommended (out
	// of stock, banned): a header line, then one id per line in the first
	// column. Relative to data_dir like the data files.
	Exclude string `yaml:"exclude" json:"-"`
	// Queries is "all" (the default: every item with features) or a CSV
	// table of the ids to publish lists for, laid out as Exclude.
	Queries string `yaml:"queries" json:"-"`
	// Gate holds the promotion thresholds; one left out is not checked.
	Gate Gate `yaml:"gate" json:"gate"`
}

// Gate is the promotion gate of Publish: the run's lists replace the
// published ones only if every threshold set holds.
type Gate struct {
	// MaxErrorIncrease bounds the model's test error minus the published
	// run's.
	MaxErrorIncrease Opt[float64] `yaml:"max_error_increase" json:"max_error_increase"`
	// MinCoverage is the least share of the candidates that must appear in
	// some list.
	MinCoverage Opt[float64] `yaml:"min_coverage" json:"min_coverage"`
	// MaxChurn bounds 1 − the mean Jaccard@k of the lists of queries the
	// published run has too.
	MaxChurn Opt[float64] `yaml:"max_churn" json:"max_churn"`
}

// PublishAll is Publish.Queries' value for every item with features.
const PublishAll = "all"

// DefaultPublishK is Publish.K when unset.
const DefaultPublishK = 20

// MaxPublishK caps Publish.K: a list longer than that is no
// recommendation, and k bounds each worker's heaps.
const MaxPublishK = 1000

// ReservedName is the directory of the run root holding the published
// links (docs/publishing.md): no run id or experiment may take it.
const ReservedName = "published"

// over is p with o's set fields laid over it; nil stays nil only if both
// are.
func (p *Publish) over(o *Publish) *Publish {
	if p == nil && o == nil {
		return nil
	}
	var r Publish
	if p != nil {
		r = *p
	}
	if o == nil {
		return &r
	}
	r.Model = cmp.Or(o.Model, r.Model)
	r.Exclude = cmp.Or(o.Exclude, r.Exclude)
	r.Queries = cmp.Or(o.Queries, r.Queries)
	setIf(&r.K, o.K)
	setIf(&r.CrossSubcategory, o.CrossSubcategory)
	setIf(&r.MinProbability, o.MinProbability)
	setIf(&r.Gate.MaxErrorIncrease, o.Gate.MaxErrorIncrease)
	setIf(&r.Gate.MinCoverage, o.Gate.MinCoverage)
	setIf(&r.Gate.MaxChurn, o.Gate.MaxChurn)
	return &r
}

func setIf[T comparable](dst *Opt[T], src Opt[T]) {
	if src.IsSet() {
		*dst = src
	}
}

// resolvePublish fills the defaults and makes the table paths absolute
// (by abs, relative to the data directory).
func (p *Publish) resolve(abs func(string) string) *Publish {
	if p == nil {
		return nil
	}
	r := *p
	if !r.K.IsSet() {
		r.K = Set(DefaultPublishK)
	}
	if !r.CrossSubcategory.IsSet() {
		r.CrossSubcategory = Set(false)
	}
	if !r.MinProbability.IsSet() {
		r.MinProbability = Set(0.0)
	}
	if r.Queries == "" {
		r.Queries = PublishAll
	}
	if r.Exclude != "" {
		r.Exclude = abs(r.Exclude)
	}
	if r.Queries != PublishAll {
		r.Queries = abs(r.Queries)
	}
	return &r
}

// validate checks the fields set; at is the block's path ("publish",
// "experiments[1].publish").
func (p *Publish) validate(at string) error {
	if p == nil {
		return nil
	}
	if p.Model != "" {
		m, err := models.Lookup(p.Model)
		if err != nil || m.Counted {
			return fmt.Errorf("%s.model: %q is not a model that ranks items (%s)", at, p.Model, retrievableNames())
		}
	}
	if p.K.IsSet() && (p.K.Get() < 1 || p.K.Get() > MaxPublishK) {
		return fmt.Errorf("%s.k: %d must be from 1 to %d", at, p.K.Get(), MaxPublishK)
	}
	if v := p.MinProbability.Get(); p.MinProbability.IsSet() && !(v >= 0 && v <= 1) {
		return fmt.Errorf("%s.min_probability: %v must be from 0 to 1", at, v)
	}
	if v := p.Gate.MaxErrorIncrease.Get(); p.Gate.MaxErrorIncrease.IsSet() && !(v >= 0 && v <= 1) {
		return fmt.Errorf("%s.gate.max_error_increase: %v must be from 0 to 1 (an error rate)", at, v)
	}
	if v := p.Gate.MinCoverage.Get(); p.Gate.MinCoverage.IsSet() && !(v >= 0 && v <= 1) {
		return fmt.Errorf("%s.gate.min_coverage: %v must be from 0 to 1 (a share of the items)", at, v)
	}
	if v := p.Gate.MaxChurn.Get(); p.Gate.MaxChurn.IsSet() && !(v >= 0 && v <= 1) {
		return fmt.Errorf("%s.gate.max_churn: %v must be from 0 to 1 (1 − mean Jaccard)", at, v)
	}
	return nil
}

// checkPublish checks the experiment's resolved block against its models;
// at is the experiment's path.
func (r *Resolved) checkPublish(at string) error {
	p := r.Publish
	if p == nil {
		return nil
	}
	switch {
	case p.Model == "":
		return fmt.Errorf("%s.publish.model: required (%s)", at, retrievableNames())
	case !slices.Contains(r.Models, p.Model):
		return fmt.Errorf("%s.publish.model: %s is not among the experiment's models %v", at, p.Model, r.Models)
	}
	return nil
}

// retrievableNames lists the models that rank items.
func retrievableNames() string {
	var names []string
	for _, m := range models.ByColumn() {
		if !m.Counted {
			names = append(names, m.Name)
		}
	}
	return "one of " + fmt.Sprint(names)
}

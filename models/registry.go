package models

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Model is one entry of the registry of the models a job can train: all
// that the job file's check, the train, evaluate, recommend and report
// stages and the command line know of it. Adding a model is one entry
// (Register, or the list in registry below) and its trainer.
type Model struct {
	// Name names it in job files, its train.<name> node and the model
	// column of every table.
	Name string
	// Title names it in the report.
	Title string
	// Column orders the columns of the paper's Tables 2 and 4 (ascending);
	// the registry's own order is that of a job's default model list.
	Column int
	// Bow: it trains on bag-of-words counts only (features: bow).
	Bow bool
	// Counted: a count over subcategories (CT). It has no λ, no learned
	// parameters and no distance between items, so nothing to retrieve or
	// project. Every other model is learned by the L-BFGS trainer (Train)
	// and its node writes fits, a trace and parameters.
	Counted bool
	// Scorer is the Fit family (Spec.Model) a learned model is trained and
	// scored as.
	Scorer string
	// Topics: the scorer runs on LDA topic proportions of the items' word
	// counts (FitLDA, with the settings' Topics and LDAPasses), not on the
	// features.
	Topics bool
	// Embeds: the scorer maps items into embedding spaces (LMT's E,
	// Monomer's E₁..E_N), which the report draws.
	Embeds bool
	// Reads keeps the settings the model reads of s and zeroes the others,
	// so that changing another model's settings retrains nothing of it
	// (its train node is keyed by what Reads returns).
	Reads func(s TrainSettings) TrainSettings
	// Bounds are its sizes that the data bound (checked when a job trains
	// it).
	Bounds func(s TrainSettings) []Bound
	// Size is what training it holds at feature dimension dim, for the
	// memory check before a run; nil: nothing that grows with the settings.
	Size func(dim int64, s TrainSettings) Size
}

// Bound is a size setting that may not exceed a size of the data.
type Bound struct {
	// Setting is its name in job files; Value its value.
	Setting string
	Value   int
	// Words bounds it by the vocabulary (vocab_size), not the feature
	// dimension.
	Words bool
	// Why the bound holds, for the error message.
	Why string
}

// Size counts what training a model holds: learned parameters (each with
// the trainer's L-BFGS history and gradients) and topic-word weights
// (LDA's).
type Size struct {
	Params, TopicWords int64
}

// Spaces reports whether the model scores with several embedding spaces
// and a gate choosing one per pair (Monomer): its recommendations name the
// space that put each item in the list.
func (m *Model) Spaces() bool { return m.Scorer == ModelMonomer }

// Spec is the training spec of learned model m under s.
func (m *Model) Spec(s TrainSettings) Spec {
	spec := Spec{Model: m.Scorer, Lambdas: s.Lambdas, MaxIter: s.MaxIter, ValidEvery: s.ValidEvery,
		Patience: max(s.Patience, 0), WarmStart: s.WarmStart.Get()}
	switch m.Scorer {
	case ModelLMT:
		spec.K = s.K
	case ModelMonomer:
		spec.K, spec.N = s.MonomerK, s.N
		spec.GatePenalty, spec.GateInit = s.GatePenalty, s.GateInit
	}
	return spec
}

// learnedReads keeps the trainer's settings, which every learned model
// reads, and the ones own copies from s.
func learnedReads(own func(from TrainSettings, to *TrainSettings)) func(TrainSettings) TrainSettings {
	return func(s TrainSettings) TrainSettings {
		out := TrainSettings{Lambdas: s.Lambdas, MaxIter: s.MaxIter, ValidEvery: s.ValidEvery,
			Patience: s.Patience, WarmStart: s.WarmStart}
		if own != nil {
			own(s, &out)
		}
		return out
	}
}

func projects(name string) string {
	return name + " projects the features to at most that many dimensions"
}

// registry holds the models in the order of a job's default list.
var registry = []Model{
	{Name: ModelWNN, Title: "WNN", Column: 0, Scorer: ModelWNN,
		Reads: learnedReads(nil),
		Size:  func(f int64, _ TrainSettings) Size { return Size{Params: f + 1} }},
	{Name: ModelCT, Title: "CT", Column: 1, Counted: true,
		Reads: func(s TrainSettings) TrainSettings { return TrainSettings{CTTop: s.CTTop} }},
	{Name: ModelLMT, Title: "LMT", Column: 3, Scorer: ModelLMT, Embeds: true,
		Reads:  learnedReads(func(s TrainSettings, o *TrainSettings) { o.K = s.K }),
		Bounds: func(s TrainSettings) []Bound { return []Bound{{Setting: "k", Value: s.K, Why: projects(ModelLMT)}} },
		Size:   func(f int64, s TrainSettings) Size { return Size{Params: f*int64(s.K) + 1} }},
	{Name: ModelMonomer, Title: "Monomer", Column: 4, Scorer: ModelMonomer, Embeds: true,
		Reads: learnedReads(func(s TrainSettings, o *TrainSettings) {
			o.MonomerK, o.N, o.GatePenalty, o.GateInit = s.MonomerK, s.N, s.GatePenalty, s.GateInit
		}),
		Bounds: func(s TrainSettings) []Bound {
			return []Bound{{Setting: "monomer_k", Value: s.MonomerK, Why: projects(ModelMonomer)},
				{Setting: "n", Value: s.N, Why: projects(ModelMonomer)}}
		},
		Size: func(f int64, s TrainSettings) Size {
			k, n := int64(s.MonomerK), int64(s.N)
			return Size{Params: f*(n*k+k+n) + 1}
		}},
	// LDA+WNN (paper §4.3): WNN on the items' topic proportions.
	{Name: ModelLDA, Title: "LDA", Column: 2, Bow: true, Scorer: ModelWNN, Topics: true,
		Reads: learnedReads(func(s TrainSettings, o *TrainSettings) { o.Topics, o.LDAPasses = s.Topics, s.LDAPasses }),
		Bounds: func(s TrainSettings) []Bound {
			return []Bound{{Setting: "topics", Value: s.Topics, Words: true, Why: "more topics than words"}}
		},
		Size: func(f int64, s TrainSettings) Size {
			t := int64(s.Topics)
			return Size{Params: t + 1, TopicWords: t * f}
		}},
}

var registryMu sync.RWMutex

// Models lists the registered models in the order of a job's default
// model list.
func Models() []Model {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return slices.Clone(registry)
}

// ByColumn lists the registered models in the column order of the paper's
// tables.
func ByColumn() []Model {
	out := Models()
	slices.SortStableFunc(out, func(a, b Model) int { return cmp.Compare(a.Column, b.Column) })
	return out
}

// Names lists the registered models' names, in registry order.
func Names() []string {
	var out []string
	for _, m := range Models() {
		out = append(out, m.Name)
	}
	return out
}

// Lookup returns the registered model called name, or an error wrapping
// ErrSpec that lists the registered ones.
func Lookup(name string) (*Model, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	for i := range registry {
		if registry[i].Name == name {
			m := registry[i]
			return &m, nil
		}
	}
	return nil, fmt.Errorf("models: model %q is not one of %s: %w", name, strings.Join(namesLocked(), ", "), ErrSpec)
}

func namesLocked() []string {
	out := make([]string, len(registry))
	for i, m := range registry {
		out[i] = m.Name
	}
	return out
}

// Defaults lists the models a job trains when it names none: every one
// the features allow, in registry order.
func Defaults(features string) []string {
	var out []string
	for _, m := range Models() {
		if !m.Bow || features == "bow" {
			out = append(out, m.Name)
		}
	}
	return out
}

// Register adds m to the registry and returns the function that removes it
// again. It panics on an empty or registered name, and on a learned model
// whose scorer is not a Fit family (ModelWNN, ModelLMT, ModelMonomer) or
// without Reads, like database/sql's Register: a programming error.
func Register(m Model) (unregister func()) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if m.Name == "" || slices.Contains(namesLocked(), m.Name) {
		panic(fmt.Sprintf("models: Register of %q: empty or registered twice", m.Name))
	}
	if m.Reads == nil || (!m.Counted && !slices.Contains([]string{ModelWNN, ModelLMT, ModelMonomer}, m.Scorer)) {
		panic(fmt.Sprintf("models: Register of %q: no Reads, or a learned model without a Fit family as scorer", m.Name))
	}
	registry = append(registry, m)
	return func() {
		registryMu.Lock()
		defer registryMu.Unlock()
		registry = slices.DeleteFunc(registry, func(r Model) bool { return r.Name == m.Name })
	}
}

package models

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"monomer/internal/setting"
)

// The registry in the order a job's default list uses and the names the
// job file, the node names and every table's model column use.
func TestRegistry(t *testing.T) {
	if got, want := Names(), []string{"wnn", "ct", "lmt", "monomer", "lda"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	var cols []string
	for _, m := range ByColumn() {
		cols = append(cols, m.Title)
	}
	if want := []string{"WNN", "CT", "LDA", "LMT", "Monomer"}; !slices.Equal(cols, want) {
		t.Errorf("ByColumn() titles %v, want the paper's columns %v", cols, want)
	}
	for _, tc := range []struct {
		features string
		want     []string
	}{
		{"image", []string{"wnn", "ct", "lmt", "monomer"}},
		{"bow", []string{"wnn", "ct", "lmt", "monomer", "lda"}},
	} {
		if got := Defaults(tc.features); !slices.Equal(got, tc.want) {
			t.Errorf("Defaults(%s) = %v, want %v", tc.features, got, tc.want)
		}
	}
	_, err := Lookup("mnn")
	if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), `"mnn" is not one of wnn, ct, lmt, monomer, lda`) {
		t.Errorf("Lookup(mnn): %v", err)
	}
	for _, m := range Models() {
		if m.Counted {
			if m.Scorer != "" || m.Topics || m.Embeds || m.Size != nil {
				t.Errorf("%s: counted with a scorer, topics, embeddings or a size", m.Name)
			}
			continue
		}
		// A learned model's spec is one Train accepts, and its scorer is
		// the family NewFit rebuilds.
		s := TrainSettings{K: 3, MonomerK: 2, N: 2, Topics: 4, MaxIter: 5}
		spec := m.Spec(s)
		if _, err := spec.resolve(); err != nil {
			t.Errorf("%s: spec %+v: %v", m.Name, spec, err)
		}
		if _, err := newModel(m.Scorer, 8, spec.K, spec.N); err != nil {
			t.Errorf("%s: scorer: %v", m.Name, err)
		}
		if m.Embeds != (m.Scorer == ModelLMT || m.Scorer == ModelMonomer) {
			t.Errorf("%s: Embeds %v for scorer %s (Fit.Project works on LMT and Monomer)", m.Name, m.Embeds, m.Scorer)
		}
	}
}

// TestReadsKeepsWhatTheModelReads: a model's Reads (its train node's key)
// changes with every setting that changes its spec, size or bounds, and
// with no setting of another model: a setting read but not keyed would
// give stale cache hits, one keyed but not read needless retraining.
func TestReadsKeepsWhatTheModelReads(t *testing.T) {
	base := TrainSettings{K: 10, MonomerK: 4, N: 3, GatePenalty: 1, GateInit: 0.01, Topics: 6, LDAPasses: 2,
		Lambdas: []float64{1e-4}, MaxIter: 20, ValidEvery: 5, Patience: 3, CTTop: 0.5}
	// Which settings each model reads: the trainer's five for every
	// learned model, then its own.
	trainer := []string{"Lambdas", "MaxIter", "ValidEvery", "Patience", "WarmStart"}
	reads := map[string][]string{
		"wnn":     trainer,
		"ct":      {"CTTop"},
		"lmt":     append(slices.Clone(trainer), "K"),
		"monomer": append(slices.Clone(trainer), "MonomerK", "N", "GatePenalty", "GateInit"),
		"lda":     append(slices.Clone(trainer), "Topics", "LDAPasses"),
	}
	typ := reflect.TypeFor[TrainSettings]()
	for _, m := range Models() {
		want, ok := reads[m.Name]
		if !ok {
			t.Errorf("%s: no expectation", m.Name)
			continue
		}
		for i := range typ.NumField() {
			field := typ.Field(i).Name
			s := base
			v := reflect.ValueOf(&s).Elem().Field(i)
			switch v.Kind() {
			case reflect.Int:
				v.SetInt(v.Int() + 1)
			case reflect.Float64:
				v.SetFloat(v.Float() * 2)
			case reflect.Bool:
				v.SetBool(!v.Bool())
			case reflect.Slice:
				v.Set(reflect.ValueOf([]float64{0, 1e-3}))
			case reflect.Struct: // an Opt
				v.Set(reflect.ValueOf(setting.Set(!s.WarmStart.Get())))
			}
			keyed := !reflect.DeepEqual(m.Reads(s), m.Reads(base))
			if keyed != slices.Contains(want, field) {
				t.Errorf("%s: changing %s changes its key: %v", m.Name, field, keyed)
			}
			used := false
			if !m.Counted {
				used = !reflect.DeepEqual(m.Spec(s), m.Spec(base))
			}
			if m.Size != nil && m.Size(100, s) != m.Size(100, base) {
				used = true
			}
			if m.Bounds != nil && !reflect.DeepEqual(m.Bounds(s), m.Bounds(base)) {
				used = true
			}
			if used && !keyed {
				t.Errorf("%s: %s changes its spec, size or bounds but not its key", m.Name, field)
			}
		}
	}
}

// A registered model is listed, looked up and defaulted like the built-in
// ones until it is removed; registering a name twice panics.
func TestRegister(t *testing.T) {
	wnn, err := Lookup(ModelWNN)
	if err != nil {
		t.Fatal(err)
	}
	fake := Model{Name: "wnn2", Title: "WNN2", Column: 2, Scorer: ModelWNN, Reads: wnn.Reads}
	unregister := Register(fake)
	if got := Names(); got[len(got)-1] != "wnn2" {
		t.Errorf("Names() = %v", got)
	}
	var cols []string
	for _, m := range ByColumn() {
		cols = append(cols, m.Name)
	}
	if want := []string{"wnn", "ct", "lda", "wnn2", "lmt", "monomer"}; !slices.Equal(cols, want) {
		t.Errorf("ByColumn() = %v, want %v (ties in registry order)", cols, want)
	}
	if got := Defaults("image"); !slices.Contains(got, "wnn2") {
		t.Errorf("Defaults(image) = %v", got)
	}
	if m, err := Lookup("wnn2"); err != nil || m.Title != "WNN2" {
		t.Errorf("Lookup(wnn2) = %v, %v", m, err)
	}
	for _, bad := range []Model{fake, {Name: "x", Scorer: "ct", Reads: wnn.Reads}, {Name: "y", Scorer: ModelWNN}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%+v) did not panic", bad.Name)
				}
			}()
			Register(bad)
		}()
	}
	unregister()
	if _, err := Lookup("wnn2"); err == nil || slices.Contains(Names(), "wnn2") {
		t.Error("wnn2 still registered")
	}
}

package job

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"

	"go.yaml.in/yaml/v3"

	"monomer/imagefeat/fc7"
	"monomer/models"
)

// checkNodes walks a job document beside the Job type, before it is
// decoded. It names the field and the type wanted where the decoder would
// name only Go types ("cannot unmarshal !!str `forty` into int"), and
// rejects what the decoder would silently accept: a non-integral number for
// an integer field (the decoder truncates 10.5 to 10) and an explicit empty
// list (`lambdas: []` would otherwise mean "inherit", the opposite of what
// it says). Omitting a key (or giving it null) still inherits. at is the
// field's path in the file ("settings.k", "experiments[1].models").
func checkNodes(n *yaml.Node, t reflect.Type, at string) error {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.DocumentNode {
		for _, c := range n.Content {
			if err := checkNodes(c, t, at); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind == yaml.AliasNode {
		return checkNodes(n.Alias, t, at)
	}
	if n.Kind == 0 || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil // an empty document or value: everything inherits
	}
	t = plainType(t)
	if t.Kind() == reflect.Pointer { // publish: a block that may be absent
		t = t.Elem()
	}
	if want := wantedType(n, t); want != "" {
		got := strconv.Quote(n.Value)
		switch n.Kind {
		case yaml.MappingNode:
			got = "a mapping"
		case yaml.SequenceNode:
			got = "a list"
		}
		if at == "" {
			at = "the job file"
		}
		return fmt.Errorf("line %d: %s: want %s, got %s", n.Line, at, want, got)
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if key == "<<" && n.Content[i].ShortTag() == "!!merge" {
				continue // a merge key: the decoder checks what it merges
			}
			f, ok := fieldByYAML(t, key)
			if !ok {
				return fmt.Errorf("line %d: %w", n.Content[i].Line, unknownKey(key, at, t))
			}
			if err := checkNodes(n.Content[i+1], f.Type, joinPath(at, key)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if len(n.Content) == 0 {
			return fmt.Errorf("line %d: %s: an empty list is not allowed; omit the key to inherit the default", n.Line, at)
		}
		for i, c := range n.Content {
			// A null item would decode as the zero value or vanish
			// (`lambdas: [~]` became the default grid): never what it says.
			if c.Kind == yaml.ScalarNode && c.ShortTag() == "!!null" {
				return fmt.Errorf("line %d: %s[%d]: an empty (null) item is not allowed", c.Line, at, i)
			}
			if err := checkNodes(c, t.Elem(), fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.ShortTag() != "!!float" {
			return nil
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil
		}
		// 2e6 is an integer written as a float; 10.5 is not an integer.
		if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("line %d: %s: %s is not an integer", n.Line, at, n.Value)
		}
		// An integer beyond 64 bits reaches here as a float too, which the
		// decoder would convert with wraparound (2^64 became 2^63 for seed).
		if lo, hi := intRange(t); f < lo || f >= hi {
			return fmt.Errorf("line %d: %s: %s is out of range (%s)", n.Line, at, n.Value, intRangeText(t))
		}
	}
	return nil
}

// intRange is the range [lo, hi) of the integer kind t, exactly (powers
// of two are floats without rounding).
func intRange(t reflect.Type) (lo, hi float64) {
	bits := t.Bits()
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return 0, math.Ldexp(1, bits)
	}
	return -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1)
}

// intRangeText is the range of the integer kind t as a user reads it.
func intRangeText(t reflect.Type) string {
	bits := uint(t.Bits())
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "0 to " + strconv.FormatUint(1<<bits-1, 10)
	}
	return strconv.FormatInt(-1<<(bits-1), 10) + " to " + strconv.FormatInt(1<<(bits-1)-1, 10)
}

// wantedType is what a value of type t is written as ("an integer"), when
// node n (not null) is not that; "" when it is, or when the decoder alone
// can tell (a string takes any scalar; overflow is the decoder's).
func wantedType(n *yaml.Node, t reflect.Type) string {
	tag := n.ShortTag()
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return "a mapping of keys"
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return "a list"
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return "a string"
		}
	case reflect.Bool:
		if tag != "!!bool" {
			return "true or false"
		}
	case reflect.Float32, reflect.Float64:
		if tag != "!!int" && tag != "!!float" {
			return "a number"
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if tag != "!!int" && tag != "!!float" {
			return "an integer"
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		var f float64
		if tag != "!!int" && tag != "!!float" || n.Decode(&f) == nil && f < 0 {
			return "an unsigned integer"
		}
	}
	return ""
}

// maxDepth caps an experiment's depth: category levels below the prefix.
const maxDepth = 64

// FeatureDim is the feature dimension of an experiment: fc7.Dim for image
// features, the vocabulary size for bag-of-words, 0 (unknown until the
// file is read) for embeddings.
func (r *Resolved) FeatureDim() int {
	if r.Features == "image" {
		return fc7.Dim
	}
	if r.Features == "embeddings" {
		return 0
	}
	return r.Settings.VocabSize
}

// checkBounds checks the upper bounds of a resolved experiment's sizes
// against each other and the data they apply to: K, Monomer's K and N at
// most the feature dimension, topics at most the vocabulary; then every
// setting's cap. A bound that
// only matters to a model is checked when the experiment trains it. at
// names the experiment ("experiments[1]"); the memory the sizes imply is
// checked before training (see Preflighter).
func (r *Resolved) checkBounds(at string) error {
	s := r.Settings
	if r.Depth.Get() > maxDepth {
		return fmt.Errorf("%s.depth: %d is above the maximum %d", at, r.Depth.Get(), maxDepth)
	}
	if r.VocabularyFrom != "" && r.Features != "bow" {
		return fmt.Errorf("%s.vocabulary_from: the experiment's features are %s; a fixed vocabulary is for features: bow", at, r.Features)
	}
	at += ".settings"
	dim, what := r.FeatureDim(), "the image features' dimension"
	if r.Features == "bow" {
		what = "vocab_size (the bag-of-words dimension)"
	}
	for _, m := range models.Models() {
		if m.Bounds == nil || !slices.Contains(r.Models, m.Name) {
			continue
		}
		for _, b := range m.Bounds(s.TrainSettings) {
			limit, of := dim, what
			if b.Words {
				limit, of = s.VocabSize, "vocab_size"
			}
			if limit > 0 && b.Value > limit { // embeddings: train checks, once the file is read
				return fmt.Errorf("%s.%s: %d is above %s, %d (%s)", at, b.Setting, b.Value, of, limit, b.Why)
			}
		}
	}
	return s.checkCaps(at)
}

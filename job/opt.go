package job

import (
	"encoding/json"
	"fmt"
	"reflect"

	"go.yaml.in/yaml/v3"
)

// Opt is a setting whose zero value means something (use_summary: false,
// reject_ratio: 0), so "unset" must differ from it: a key absent from the
// file leaves it unset, and an unset setting inherits the job's value or the
// default (see Settings). In the file it is written as the plain value;
// Resolve sets every Opt.
type Opt[T comparable] struct {
	v   T
	set bool
}

// Set returns an Opt set to v.
func Set[T comparable](v T) Opt[T] { return Opt[T]{v: v, set: true} }

// Get returns the value; the zero value when unset.
func (o Opt[T]) Get() T { return o.v }

// IsSet reports whether the value was given.
func (o Opt[T]) IsSet() bool { return o.set }

// Format prints the value as fmt would print it plain (the zero value when
// unset), so a key hashed with fmt reads the same as before Opt existed.
func (o Opt[T]) Format(f fmt.State, verb rune) { fmt.Fprintf(f, fmt.FormatString(f, verb), o.v) }

// UnmarshalYAML decodes the plain value. The decoder does not call it for
// a null value (`use_summary:` or `~`), which leaves the Opt unset.
func (o *Opt[T]) UnmarshalYAML(n *yaml.Node) error {
	var v T
	if err := n.Decode(&v); err != nil {
		return err
	}
	*o = Set(v)
	return nil
}

// MarshalYAML writes the plain value.
func (o Opt[T]) MarshalYAML() (any, error) { return o.v, nil }

// MarshalJSON writes the plain value (the zero value when unset), so a
// manifest's resolved config reads as before Opt existed.
func (o Opt[T]) MarshalJSON() ([]byte, error) { return json.Marshal(o.v) }

// UnmarshalJSON reads the plain value; null leaves the Opt unset.
func (o *Opt[T]) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = Opt[T]{}
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*o = Set(v)
	return nil
}

// valueType is the type an Opt holds in the file, for the checks that walk
// the Job type beside a YAML document (checkNodes, applyOverride).
func (Opt[T]) valueType() reflect.Type { return reflect.TypeFor[T]() }

// optional is implemented by every Opt.
type optional interface{ valueType() reflect.Type }

// plainType returns the type t stands for in the file: T for an Opt[T].
func plainType(t reflect.Type) reflect.Type {
	if o, ok := reflect.Zero(t).Interface().(optional); ok {
		return o.valueType()
	}
	return t
}

package setting

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// Opt is a setting whose zero value means something (use_summary: false,
// reject_ratio: 0), so "unset" must differ from it: a key absent from the
// file leaves it unset, and an unset setting inherits the job's value or the
// default. In the file it is written as the plain value; the job's
// resolution sets every Opt.
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

// UnmarshalYAML decodes the plain value (the form of the interface that
// needs no import of a YAML package). The decoder does not call it for a
// null value (`use_summary:` or `~`), which leaves the Opt unset.
func (o *Opt[T]) UnmarshalYAML(unmarshal func(any) error) error {
	var v T
	if err := unmarshal(&v); err != nil {
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

// ValueType is the type of the value, for code that walks settings by
// reflection (the job package's checks and merges).
func (Opt[T]) ValueType() reflect.Type { return reflect.TypeFor[T]() }

// Value is the value as an any, for the same code.
func (o Opt[T]) Value() any { return o.v }

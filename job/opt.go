package job

import (
	"reflect"

	"monomer/internal/setting"
)

// Opt is a setting whose zero value means something (see setting.Opt,
// which the libraries declaring settings use).
type Opt[T comparable] = setting.Opt[T]

// Set returns an Opt set to v.
func Set[T comparable](v T) Opt[T] { return setting.Set(v) }

// optional is implemented by every Opt: the type and value it holds, for
// the checks that walk the Job type beside a YAML document (checkNodes,
// applyOverride) and the settings' merge and checks.
type optional interface {
	ValueType() reflect.Type
	Value() any
}

// plainType returns the type t stands for in the file: T for an Opt[T].
func plainType(t reflect.Type) reflect.Type {
	if o, ok := reflect.Zero(t).Interface().(optional); ok {
		return o.ValueType()
	}
	// A section that may be absent (publish:) is a pointer to its struct;
	// --set and MONOMER_ variables reach into it as into any section.
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

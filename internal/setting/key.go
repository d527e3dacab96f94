package setting

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// Key is the JSON of v, a struct of settings, as a cache key: an object of
// its settings in field order, each named by its yaml key, with the fields
// of a struct embedded with `yaml:",inline"` in its place. An Opt is its
// value. A setting whose value is zero (0, -0, false, "", an empty list) is
// left out, so a struct holding only the settings one consumer reads (the
// others zero) keys only those, and a new setting left zero changes no key.
// An unset Opt is null (unset is not its zero value); Settle sets them all
// first, as a keyed value should not depend on where a value came from.
//
// Key writes no json tag's name: the settings structs carry none, as the
// job's JSON (its hash) names their fields by Go name.
func Key(v any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	if err := appendKey(&b, reflect.ValueOf(v)); err != nil {
		return nil, err
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func appendKey(b *bytes.Buffer, v reflect.Value) error {
	if v.Kind() != reflect.Struct {
		return fmt.Errorf("setting: Key of a %s, not a struct of settings", v.Type())
	}
	for i := range v.NumField() {
		sf, f := v.Type().Field(i), v.Field(i)
		name, opts, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if sf.Anonymous && opts == "inline" {
			if err := appendKey(b, f); err != nil {
				return err
			}
			continue
		}
		if name == "" || !sf.IsExported() {
			return fmt.Errorf("setting: Key: %s.%s has no yaml key", v.Type(), sf.Name)
		}
		var value any
		if o, ok := f.Interface().(optional); ok && !o.IsSet() {
			value = nil // null
		} else if ok {
			if value = o.Value(); zero(reflect.ValueOf(value)) {
				continue
			}
		} else if value = f.Interface(); zero(f) {
			continue
		}
		j, err := json.Marshal(value)
		if err != nil {
			return fmt.Errorf("setting: Key: %s.%s: %w", v.Type(), sf.Name, err)
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(name)
		b.Write(k)
		b.WriteByte(':')
		b.Write(j)
	}
	return nil
}

// Settle returns s, a struct of settings, with every Opt of it set (to its
// value: the zero value if unset).
func Settle[S any](s S) S {
	settle(reflect.ValueOf(&s).Elem())
	return s
}

func settle(v reflect.Value) {
	for i := range v.NumField() {
		sf, f := v.Type().Field(i), v.Field(i)
		switch {
		case sf.Anonymous && f.Kind() == reflect.Struct:
			settle(f) // an embedded struct of settings
		case sf.IsExported():
			if o, ok := f.Addr().Interface().(settler); ok {
				o.settle()
			}
		}
	}
}

// optional is an Opt of any type.
type optional interface {
	IsSet() bool
	Value() any
}

type settler interface{ settle() }

func (o *Opt[T]) settle() { o.set = true }

// zero reports whether a setting's value is left out of a key, as
// encoding/json's omitempty would: -0 is zero (IsZero), and so is an empty
// list.
func zero(v reflect.Value) bool {
	if v.Kind() == reflect.Slice {
		return v.Len() == 0
	}
	return v.IsZero()
}

package job

import (
	"reflect"
	"strings"
)

// A SettingDoc is one setting as the settings reference (docs/settings.md,
// printed by cmd/docgen) presents it: what its field's tags declare,
// the bounds in the words of the error a value outside them gets. The
// meaning is the field's doc comment, which the generator reads from the
// source of Owner's package.
type SettingDoc struct {
	Key   string       // the job file's key, under settings:
	Owner reflect.Type // the library's settings struct that declares it
	Field string       // the Go field of Owner
	Type  string       // "integer", "number", "string", "true or false", "list of numbers"
	// Default is written as in a job file, with "," for "_" between
	// digits; empty when the setting has none (its doc comment says what
	// zero means).
	Default string
	Bounds  string   // what a given value must be ("positive", "in (0, 1]"); empty: any
	Cap     string   // the maximum of a resolved value (of a list's length); empty: none
	OneOf   []string // the accepted values of a string
	Unique  bool     // a list's elements must differ
	// ZeroIsValue: the setting is an Opt, so a zero given in the file is a
	// value that overrides, not "unset".
	ZeroIsValue bool
}

// SettingDocs returns every setting of Settings, in the order of the keys.
func SettingDocs() []SettingDoc {
	t := reflect.TypeFor[Settings]()
	var out []SettingDoc
	for _, d := range settingFields() {
		owner := t.Field(d.index[0]).Type
		sf := owner.Field(d.index[1])
		s := SettingDoc{Key: d.key, Owner: owner, Field: sf.Name, Type: typeWords(d.typ),
			OneOf: d.oneof, Unique: d.unique, ZeroIsValue: d.opt}
		if text, ok := sf.Tag.Lookup("default"); ok {
			s.Default = digits(text)
		}
		if d.min.IsValid() || d.max.IsValid() || d.must != "" {
			s.Bounds = d.rangePhrase()
		}
		if text, ok := sf.Tag.Lookup("cap"); ok {
			s.Cap = digits(text)
		}
		out = append(out, s)
	}
	return out
}

// typeWords names a setting's type as the type errors do ("want an
// integer").
func typeWords(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "list of " + map[string]string{"integer": "integers", "number": "numbers", "string": "strings"}[typeWords(t.Elem())]
	}
	return "string"
}

// digits writes a tag's 2_000_000 as 2,000,000.
func digits(text string) string {
	return strings.ReplaceAll(text, "_", ",")
}

package job

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"monomer/amazon"
	"monomer/bow"
	"monomer/graph"
	"monomer/imagefeat/fc7"
	"monomer/models"
)

// Settings are the tunable parameters: the settings each library declares
// for itself, embedded so that their fields read as one (Settings.K,
// Settings.SwapsPerEdge) and their keys sit side by side under settings:.
// A setting is one field of its library's struct, with its doc comment,
// default and bounds (see package monomer/internal/setting for the tags);
// job handles every field alike, by reflection: Defaults, the merge of an
// experiment's settings over the job's, the checks of a given value and
// the caps of a resolved one.
//
// An unset field inherits: the experiment's value wins over the job's, the
// job's over the field's default. A zero field is unset, but for the Opt
// fields, whose zero means something and which are unset only when absent
// from the file. Resolve fills every field.
//
// The order of the embedded structs is the order of the keys and of the
// job's JSON, whose hash the report shows and keys: a struct is added at
// the end, and a setting with `json:",omitzero"` leaves the hash of every
// job that does not set it as it was.
type Settings struct {
	amazon.IngestSettings  `yaml:",inline"`
	fc7.ScaleSettings      `yaml:",inline"`
	bow.VocabSettings      `yaml:",inline"`
	graph.PairSettings     `yaml:",inline"`
	models.TrainSettings   `yaml:",inline"`
	graph.CoReviewSettings `yaml:",inline"`
	OutputSettings         `yaml:",inline"`
}

// OutputSettings are the settings of what the runs make beyond the paper's
// tables: the recommend stage's lists and the report's maps. They are the
// job's own, as neither belongs to a library the job file's package may
// import (the report draws with gonum/plot).
type OutputSettings struct {
	// RecommendQueries is the size of the deterministic sample of query
	// items the recommend stage answers.
	RecommendQueries int `yaml:"recommend_queries" default:"300" min:"0"`
	// RecommendK is the length of each recommendation list (the paper's
	// top-10).
	RecommendK int `yaml:"recommend_k" default:"10" min:"0"`
	// ReportMapItems is the number of items on each of the report's t-SNE
	// maps. Exact t-SNE costs O(n²) per iteration: about 2.5 CPU-s a map
	// at 1000 items, four times that at 2000; at the cap it holds four
	// n×n float64 matrices, 3.2 GB.
	ReportMapItems int `yaml:"report_map_items" default:"1000" min:"0" cap:"10_000"`
}

// Defaults returns every setting's declared default.
func Defaults() Settings {
	var s Settings
	v := reflect.ValueOf(&s).Elem()
	for _, f := range settingFields() {
		if f.def.IsValid() {
			v.FieldByIndex(f.index).Set(clone(f.def))
		}
	}
	return s
}

// over returns s with every set field of o copied over it.
func (s Settings) over(o Settings) Settings {
	dst, src := reflect.ValueOf(&s).Elem(), reflect.ValueOf(o)
	for _, f := range settingFields() {
		if v := src.FieldByIndex(f.index); !unset(v) {
			dst.FieldByIndex(f.index).Set(clone(v))
		}
	}
	return s
}

// validate checks the given (set) settings' ranges; at is their path in
// the file ("settings", "experiments[1].settings").
func (s Settings) validate(at string) error {
	v := reflect.ValueOf(s)
	for _, f := range settingFields() {
		if fv := v.FieldByIndex(f.index); !unset(fv) {
			if err := f.check(plain(fv), at+"."+f.key); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkCaps checks the resolved settings against their caps; at is the
// experiment's settings' path ("experiments[1].settings").
func (s Settings) checkCaps(at string) error {
	v := reflect.ValueOf(s)
	for _, f := range settingFields() {
		if !f.cap.IsValid() {
			continue
		}
		n, name := plain(v.FieldByIndex(f.index)), f.key
		if n.Kind() == reflect.Slice {
			n, name = reflect.ValueOf(n.Len()), name+" (count)"
		}
		if less(f.cap, n) {
			return fmt.Errorf("%s.%s: %s is above the maximum %s", at, name, show(n), show(f.cap))
		}
	}
	return nil
}

// A decl is one setting: a field of a library's settings struct, with its
// tags parsed.
type decl struct {
	index []int         // in Settings
	key   string        // the YAML key
	typ   reflect.Type  // the value's type: T for an Opt[T]
	opt   bool          // an Opt: zero is a value, not "unset"
	def   reflect.Value // of the field's type; invalid: no default
	// min, max and cap hold values of typ (of its element type for a
	// list; cap of a list is an int, its length).
	min, max, cap reflect.Value
	oneof         []string
	unique        bool
	must, why     string
}

// settingTags are the tags a settings field may carry.
var settingTags = []string{"yaml", "json", "default", "min", "max", "cap", "oneof", "unique", "must", "why"}

// settingFields are the settings of Settings, in order.
var settingFields = sync.OnceValue(func() []decl {
	fs, err := declaredSettings(reflect.TypeFor[Settings]())
	if err != nil {
		panic(err) // a library's declaration is wrong; TestSettingsDeclared names it
	}
	return fs
})

// declaredSettings reads the settings declared by the structs that t (a
// struct like Settings) embeds inline, checking each declaration.
func declaredSettings(t reflect.Type) ([]decl, error) {
	var out []decl
	for i := range t.NumField() {
		lib := t.Field(i)
		if !lib.Anonymous || lib.Type.Kind() != reflect.Struct || lib.Tag.Get("yaml") != ",inline" {
			return nil, fmt.Errorf("job: %s.%s: settings come in library structs embedded with `yaml:\",inline\"`", t.Name(), lib.Name)
		}
		for j := range lib.Type.NumField() {
			sf := lib.Type.Field(j)
			s, err := declared(sf)
			if err != nil {
				return nil, fmt.Errorf("job: %s.%s: %v", lib.Type, sf.Name, err)
			}
			s.index = []int{i, j}
			out = append(out, s)
		}
	}
	return out, nil
}

// declared parses one field's tags.
func declared(sf reflect.StructField) (decl, error) {
	s := decl{key: yamlName(sf), typ: plainType(sf.Type)}
	s.opt = s.typ != sf.Type
	if !sf.IsExported() || s.key == "" || s.key != sf.Tag.Get("yaml") {
		return s, fmt.Errorf("want an exported field with its key as the yaml tag")
	}
	for _, k := range tagKeys(sf.Tag) {
		if !slices.Contains(settingTags, k) {
			return s, fmt.Errorf("unknown tag %q (tags: %s)", k, strings.Join(settingTags, ", "))
		}
	}
	elem := s.typ
	if elem.Kind() == reflect.Slice {
		elem = elem.Elem()
	}
	switch elem.Kind() {
	case reflect.Int, reflect.Int64, reflect.Float64, reflect.String, reflect.Bool:
	default:
		return s, fmt.Errorf("type %s is not one a setting may have", sf.Type)
	}
	var err error
	parse := func(tag string, t reflect.Type) reflect.Value {
		text, ok := sf.Tag.Lookup(tag)
		if !ok || err != nil {
			return reflect.Value{}
		}
		var v reflect.Value
		if v, err = parseValue(text, t); err != nil {
			err = fmt.Errorf("%s %q: %v", tag, text, err)
		}
		return v
	}
	s.def = parse("default", sf.Type)
	s.min, s.max = parse("min", elem), parse("max", elem)
	if s.typ.Kind() == reflect.Slice {
		s.cap = parse("cap", reflect.TypeFor[int]())
	} else {
		s.cap = parse("cap", elem)
	}
	if err != nil {
		return s, err
	}
	if (s.min.IsValid() || s.max.IsValid() || s.cap.IsValid()) && !isNumber(elem) {
		return s, fmt.Errorf("min, max and cap bound numbers, not a %s", elem)
	}
	if o, ok := sf.Tag.Lookup("oneof"); ok {
		if s.oneof = strings.Fields(o); elem.Kind() != reflect.String || len(s.oneof) == 0 {
			return s, fmt.Errorf("oneof lists the values of a string")
		}
	}
	if u, ok := sf.Tag.Lookup("unique"); ok {
		if s.unique = u == "true"; !s.unique || s.typ.Kind() != reflect.Slice {
			return s, fmt.Errorf(`unique is "true", on a list`)
		}
	}
	s.must, s.why = sf.Tag.Get("must"), sf.Tag.Get("why")
	if s.opt && !s.def.IsValid() {
		return s, fmt.Errorf("an Opt needs a default, so that a resolved experiment sets it")
	}
	return s, nil
}

// parseValue parses a tag's text as a value of type t would be written in
// a job file, with the same checks (no 10.5 for an integer).
func parseValue(text string, t reflect.Type) (reflect.Value, error) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil {
		return reflect.Value{}, err
	}
	if err := checkNodes(&n, t, "the value"); err != nil {
		return reflect.Value{}, err
	}
	v := reflect.New(t)
	if err := n.Decode(v.Interface()); err != nil {
		return reflect.Value{}, err
	}
	return v.Elem(), nil
}

// tagKeys lists the keys of a struct tag (`key:"value" key:"value"`).
func tagKeys(tag reflect.StructTag) []string {
	var keys []string
	s := strings.TrimSpace(string(tag))
	for s != "" {
		k, rest, ok := strings.Cut(s, ":")
		if !ok {
			break
		}
		keys = append(keys, k)
		v, err := strconv.QuotedPrefix(rest)
		if err != nil {
			break
		}
		s = strings.TrimSpace(rest[len(v):])
	}
	return keys
}

// check checks a given value v (the plain value of an Opt); at is its path
// in the file.
func (s *decl) check(v reflect.Value, at string) error {
	if v.Kind() != reflect.Slice {
		return s.checkOne(v, at)
	}
	for i := range v.Len() {
		e, at := v.Index(i), fmt.Sprintf("%s[%d]", at, i)
		if err := s.checkOne(e, at); err != nil {
			return err
		}
		for j := 0; s.unique && j < i; j++ {
			if v.Index(j).Equal(e) {
				return fmt.Errorf("%s: %s is listed twice", at, show(e))
			}
		}
	}
	return nil
}

func (s *decl) checkOne(v reflect.Value, at string) error {
	if k := v.Kind(); k == reflect.Float64 && (math.IsNaN(v.Float()) || math.IsInf(v.Float(), 0)) {
		if s.must != "" || s.min.IsValid() || s.max.IsValid() {
			return fmt.Errorf("%s: %s is not a finite number; it must be %s", at, show(v), s.rangePhrase())
		}
		return fmt.Errorf("%s: %s is not a finite number", at, show(v))
	}
	if s.oneof != nil && !slices.Contains(s.oneof, v.String()) {
		return fmt.Errorf("%s: %s is not one of %s", at, show(v), strings.Join(s.oneof, ", "))
	}
	if s.min.IsValid() && less(v, s.min) || s.max.IsValid() && less(s.max, v) {
		return fmt.Errorf("%s: %s must be %s", at, show(v), s.rangePhrase())
	}
	return nil
}

// rangePhrase is what a value out of range must be: "positive",
// "non-negative", "at least 2", "at most 1", "in (0, 1]".
func (s *decl) rangePhrase() string {
	p := s.must
	switch {
	case p != "":
	case s.min.IsValid() && s.max.IsValid():
		lo := "["
		if !s.opt && s.typ.Kind() != reflect.Slice && s.min.IsZero() {
			lo = "(" // a given zero is unset, never a value
		}
		p = fmt.Sprintf("in %s%s, %s]", lo, show(s.min), show(s.max))
	case s.min.IsValid() && s.min.IsZero() && s.opt:
		p = "non-negative" // an Opt's given zero is a value
	case s.min.IsValid() && s.min.IsZero():
		p = "positive"
	case s.min.IsValid():
		p = "at least " + show(s.min)
	default:
		p = "at most " + show(s.max)
	}
	if s.why != "" {
		p += " (" + s.why + ")"
	}
	return p
}

// unset reports whether a settings field inherits: zero (an Opt not given,
// a plain field zero, a list empty).
func unset(v reflect.Value) bool {
	if v.Kind() == reflect.Slice {
		return v.Len() == 0
	}
	return v.Equal(reflect.Zero(v.Type())) // -0.0 is zero, as it was with ==
}

// plain returns the value of an Opt, v itself otherwise.
func plain(v reflect.Value) reflect.Value {
	if o, ok := v.Interface().(optional); ok {
		return reflect.ValueOf(o.Value())
	}
	return v
}

// clone returns v, with a list copied so that settings never share one.
func clone(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Slice && !v.IsNil() {
		return reflect.AppendSlice(reflect.MakeSlice(v.Type(), 0, v.Len()), v)
	}
	return v
}

func isNumber(t reflect.Type) bool {
	return t.Kind() == reflect.Int || t.Kind() == reflect.Int64 || t.Kind() == reflect.Float64
}

// less reports a < b for two numbers of the same kind.
func less(a, b reflect.Value) bool {
	if a.Kind() == reflect.Float64 {
		return a.Float() < b.Float()
	}
	return a.Int() < b.Int()
}

// show formats a value as the error messages do: %g for a float, quoted
// for a string.
func show(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Float64:
		return fmt.Sprintf("%g", v.Float())
	case reflect.String:
		return strconv.Quote(v.String())
	}
	return fmt.Sprint(v.Interface())
}

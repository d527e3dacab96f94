package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"monomer/bow"
	"monomer/graph"
	"monomer/imagefeat"
	"monomer/imagefeat/fc7"
	"monomer/models"
)

// TestSettingsDeclared holds every library's declaration to the rules of
// package setting: unique keys and Go names (a name two embedded structs
// share would silently leave the JSON and the promoted fields), a default
// for every setting but those whose zero is read as a computed value, and
// every default within its own bounds.
func TestSettingsDeclared(t *testing.T) {
	fs, err := declaredSettings(reflect.TypeFor[Settings]())
	must(t, err)
	noDefault := []string{"lda_passes"} // 0: max(1, ⌈20 / chunks⌉)
	keys, names := map[string]bool{}, map[string]bool{}
	d := reflect.ValueOf(Defaults())
	for _, f := range fs {
		sf := reflect.TypeFor[Settings]().FieldByIndex(f.index)
		if keys[f.key] || names[sf.Name] {
			t.Errorf("%s (%s) is declared twice", f.key, sf.Name)
		}
		keys[f.key], names[sf.Name] = true, true
		if f.def.IsValid() == slices.Contains(noDefault, f.key) {
			t.Errorf("%s: default %v; only %v have none", f.key, f.def, noDefault)
		}
		v := d.FieldByIndex(f.index)
		if f.def.IsValid() && unset(v) && !f.opt {
			t.Errorf("%s: the default %v reads as unset", f.key, v)
		}
		if err := f.check(plain(v), "default"); err != nil {
			t.Errorf("%s: the default is out of bounds: %v", f.key, err)
		}
		if f.opt && !v.Interface().(interface{ IsSet() bool }).IsSet() {
			t.Errorf("%s: Defaults leaves the Opt unset", f.key)
		}
	}
	if err := Defaults().checkCaps("default"); err != nil {
		t.Errorf("a default above its cap: %v", err)
	}
	var m map[string]any
	b, err := json.Marshal(Defaults())
	must(t, err)
	must(t, json.Unmarshal(b, &m))
	if len(m) != len(fs) || len(fs) != len(yamlKeys(reflect.TypeFor[Settings]())) {
		t.Errorf("%d settings declared, %d in the JSON, %d YAML keys", len(fs), len(m), len(yamlKeys(reflect.TypeFor[Settings]())))
	}
}

// TestBadDeclarations: a library's mistake is caught when the settings are
// gathered, naming the field.
func TestBadDeclarations(t *testing.T) {
	type (
		typo struct {
			N int `yaml:"n" defualt:"1"`
		}
		fraction struct {
			N int `yaml:"n" default:"10.5"`
		}
		optNoDefault struct {
			O Opt[bool] `yaml:"o"`
		}
		oneofInt struct {
			N int `yaml:"n" oneof:"1 2"`
		}
		noKey struct {
			N int
		}
		uint8s struct {
			N uint8 `yaml:"n"`
		}
		good struct {
			N int `yaml:"n"`
		}
	)
	for _, tt := range []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[struct {
			typo `yaml:",inline"`
		}](), `job: job.typo.N: unknown tag "defualt"`},
		{reflect.TypeFor[struct {
			fraction `yaml:",inline"`
		}](), `job: job.fraction.N: default "10.5": line 1: the value: 10.5 is not an integer`},
		{reflect.TypeFor[struct {
			optNoDefault `yaml:",inline"`
		}](), "job: job.optNoDefault.O: an Opt needs a default"},
		{reflect.TypeFor[struct {
			oneofInt `yaml:",inline"`
		}](), "job: job.oneofInt.N: oneof lists the values of a string"},
		{reflect.TypeFor[struct {
			noKey `yaml:",inline"`
		}](), "job: job.noKey.N: want an exported field with its key as the yaml tag"},
		{reflect.TypeFor[struct {
			uint8s `yaml:",inline"`
		}](), "job: job.uint8s.N: type uint8 is not one a setting may have"},
		{reflect.TypeFor[struct{ good }](), "settings come in library structs embedded with `yaml:\",inline\"`"},
	} {
		_, err := declaredSettings(tt.typ)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: got %v, want %q", tt.typ, err, tt.want)
		}
	}
}

// TestEverySetting runs every declared setting, found by reflection so that
// a new one is covered without a line here, through the file, the
// experiment-over-job merge, --set, the type check and its bounds.
func TestEverySetting(t *testing.T) {
	const head = "name: j\ndata: {meta: m, image_features: i, reviews: r}\n"
	// wnn alone, so that the feature dimension bounds no size and a cap
	// is what a huge value meets.
	const exp = "experiments:\n  - {name: e, category: A, graph: also_bought, features: bow, models: [wnn]%s}\n"
	parse := func(t *testing.T, src string, sets ...string) (*Job, error) {
		t.Helper()
		o, err := ParseSets(sets)
		must(t, err)
		return ParseWith("/jobs/j.yaml", []byte(src), o)
	}
	get := func(j *Job, f decl) any {
		return plain(reflect.ValueOf(j.Resolve(0).Settings).FieldByIndex(f.index)).Interface()
	}
	for _, f := range settingFields() {
		t.Run(f.key, func(t *testing.T) {
			def := plain(reflect.ValueOf(Defaults()).FieldByIndex(f.index))
			a, b := otherValues(f, def)
			// The default, then the job's value, then the experiment's.
			j, err := parse(t, head+fmt.Sprintf(exp, ""))
			must(t, err)
			if got := get(j, f); !reflect.DeepEqual(got, def.Interface()) {
				t.Errorf("default: %v, want %v", got, def)
			}
			j, err = parse(t, head+"settings: {"+f.key+": "+yamlText(a)+"}\n"+fmt.Sprintf(exp, ""))
			must(t, err)
			if got := get(j, f); !reflect.DeepEqual(got, a.Interface()) {
				t.Errorf("job's value: %v, want %v", got, a)
			}
			if !reflect.DeepEqual(othersOf(j.Resolve(0).Settings, f), othersOf(Defaults(), f)) {
				t.Errorf("setting %s changed another setting", f.key)
			}
			j, err = parse(t, head+"settings: {"+f.key+": "+yamlText(a)+"}\n"+fmt.Sprintf(exp, ", settings: {"+f.key+": "+yamlText(b)+"}"))
			must(t, err)
			if got := get(j, f); !reflect.DeepEqual(got, b.Interface()) {
				t.Errorf("experiment's value over the job's: %v, want %v", got, b)
			}
			// --set, for the job and for the experiment.
			j, err = parse(t, head+fmt.Sprintf(exp, ""), "settings."+f.key+"="+yamlText(a), "experiments.e.settings."+f.key+"="+yamlText(b))
			must(t, err)
			if got := get(j, f); !reflect.DeepEqual(got, b.Interface()) || !reflect.DeepEqual(plain(reflect.ValueOf(j.Settings).FieldByIndex(f.index)).Interface(), a.Interface()) {
				t.Errorf("--set: %v (job %v), want %v (job %v)", got, plain(reflect.ValueOf(j.Settings).FieldByIndex(f.index)), b, a)
			}
			// A value of the wrong type names the key and the type wanted.
			wrong, want := wrongType(f)
			_, err = parse(t, head+fmt.Sprintf(exp, ""), "settings."+f.key+"="+wrong)
			if msg := fmt.Sprintf("invalid job: /jobs/j.yaml: --set settings.%s=%s: settings.%s: want %s", f.key, wrong, f.key, want); err == nil || !errors.Is(err, ErrConfig) || !strings.HasPrefix(err.Error(), msg) {
				t.Errorf("wrong type: %v, want %s...", err, msg)
			}
			// Every bound, in the file and in --set alike.
			for _, bad := range outOfBounds(f) {
				for _, src := range []string{
					head + "settings: {" + f.key + ": " + bad.value + "}\n" + fmt.Sprintf(exp, ""),
					head + fmt.Sprintf(exp, ", settings: {"+f.key+": "+bad.value+"}"),
				} {
					_, err := parse(t, src)
					if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "settings."+f.key) || !strings.Contains(err.Error(), bad.want) {
						t.Errorf("%s = %s: %v, want an error on settings.%s with %q", f.key, bad.value, err, f.key, bad.want)
					}
				}
			}
		})
	}
}

// othersOf is s without setting f, for comparing the rest.
func othersOf(s Settings, f decl) Settings {
	v := reflect.ValueOf(&s).Elem().FieldByIndex(f.index)
	v.Set(reflect.Zero(v.Type()))
	return s
}

// otherValues returns two values of f's type within its bounds, not zero
// (but for an Opt's b): a differs from the default, b from a.
func otherValues(f decl, def reflect.Value) (a, b reflect.Value) {
	switch f.typ.Kind() {
	case reflect.Bool:
		return reflect.ValueOf(!def.Bool()), def // an explicit false beats the job's true
	case reflect.String:
		var vs []reflect.Value
		for _, o := range f.oneof {
			if o != def.String() {
				vs = append(vs, reflect.ValueOf(o))
			}
		}
		switch {
		case len(vs) == 1: // two values: the default given beats the job's other, as a bool's
			vs = append(vs, def)
		case len(vs) < 2:
			vs = []reflect.Value{reflect.ValueOf("x"), reflect.ValueOf("y")}
		}
		return vs[0], vs[1]
	case reflect.Slice:
		return reflect.ValueOf([]float64{0.5}), reflect.ValueOf([]float64{0.25, 0.75})
	case reflect.Float64:
		x := def.Float()
		if x == 0 {
			x = 1
		}
		if f.max.IsValid() && 3*x > f.max.Float() {
			return reflect.ValueOf(x / 2), reflect.ValueOf(x / 4)
		}
		return reflect.ValueOf(2 * x), reflect.ValueOf(3 * x)
	}
	n := def.Int()
	return reflect.ValueOf(n + 1).Convert(f.typ), reflect.ValueOf(n + 2).Convert(f.typ)
}

// yamlText writes v as a flow YAML value.
func yamlText(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Slice:
		var parts []string
		for i := range v.Len() {
			parts = append(parts, yamlText(v.Index(i)))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	}
	return fmt.Sprint(v.Interface())
}

// wrongType is a value f cannot take, and the type its message wants.
func wrongType(f decl) (value, want string) {
	switch f.typ.Kind() {
	case reflect.Bool:
		return "maybe", "true or false"
	case reflect.String:
		return "[a]", "a string"
	case reflect.Slice:
		return "few", "a list"
	case reflect.Float64:
		return "much", "a number"
	}
	return "forty", "an integer"
}

type badValue struct{ value, want string }

// outOfBounds lists values breaking each of f's bounds, with a part of the
// message each must give.
func outOfBounds(f decl) []badValue {
	var out []badValue
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	wrap := func(s string) string { return s }
	if f.typ.Kind() == reflect.Slice {
		wrap = func(s string) string { return "[" + s + "]" }
	}
	if f.min.IsValid() {
		below := toFloat(f.min) - 1
		if below == 0 && !f.opt {
			below = -1 // zero is unset
		}
		out = append(out, badValue{wrap(num(below)), "must be " + f.rangePhrase()})
	}
	if f.max.IsValid() {
		out = append(out, badValue{wrap(num(toFloat(f.max) + 1)), "must be " + f.rangePhrase()})
	}
	if f.typ.Kind() == reflect.Float64 {
		// Issue 37: NaN and ±Inf are named as what they are, then the range.
		want := "is not a finite number"
		if f.must != "" || f.min.IsValid() || f.max.IsValid() {
			want += "; it must be " + f.rangePhrase()
		}
		out = append(out, badValue{wrap(".nan"), want}, badValue{wrap("-.inf"), want})
	}
	if f.cap.IsValid() {
		v := num(toFloat(f.cap) * 2)
		if f.typ.Kind() == reflect.Slice {
			var xs []string
			for i := range f.cap.Int() + 1 {
				xs = append(xs, strconv.FormatInt(i, 10))
			}
			v = "[" + strings.Join(xs, ", ") + "]"
		}
		out = append(out, badValue{v, "is above the maximum " + show(f.cap)})
	}
	if f.oneof != nil {
		out = append(out, badValue{"nonesuch", `"nonesuch" is not one of ` + strings.Join(f.oneof, ", ")})
	}
	if f.unique {
		out = append(out, badValue{"[1, 1]", "[1]: 1 is listed twice"})
	}
	return out
}

func toFloat(v reflect.Value) float64 {
	if v.Kind() == reflect.Float64 {
		return v.Float()
	}
	return float64(v.Int())
}

// TestLibraryDefaultsAgree: where a library's own API also defaults a zero
// option (bow.Options.VocabSize, models.Spec.K, ...), its constant is the
// declared default.
func TestLibraryDefaultsAgree(t *testing.T) {
	d := Defaults()
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"vocab_size", d.VocabSize, bow.DefaultVocabSize},
		{"vocab_sample_tokens", d.VocabSampleTokens, int64(bow.DefaultSampleTokens)},
		{"swaps_per_edge", d.SwapsPerEdge, graph.DefaultSwapsPerEdge},
		{"train_cap", d.TrainCap, graph.DefaultTrainCap},
		{"co_review_window", d.CoReviewWindow.Get(), graph.DefaultCoReviewWindowDays},
		{"co_review_min_users", d.CoReviewMinUsers.Get(), graph.DefaultCoReviewMinUsers},
		{"co_review_max_user_items", d.CoReviewMaxUserItems.Get(), graph.DefaultCoReviewMaxUserItems},
		{"k", d.K, models.DefaultLMTK},
		{"monomer_k", d.MonomerK, models.DefaultMonomerK},
		{"n", d.N, models.DefaultMonomerN},
		{"gate_penalty", d.GatePenalty, models.DefaultGatePenalty},
		{"gate_init", d.GateInit, models.DefaultGateInit},
		{"topics", d.Topics, models.DefaultTopics},
		{"lambdas", d.Lambdas, models.DefaultLambdas()},
		{"max_iter", d.MaxIter, models.DefaultMaxIter},
		{"valid_every", d.ValidEvery, models.DefaultValidEvery},
		{"ct_top", d.CTTop, models.DefaultCTTop},
		{"image_scale", d.ImageScale, imagefeat.DefaultScale},
		{"feature dimension", (&Resolved{Experiment: Experiment{Features: "image"}}).FeatureDim(), fc7.Dim},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: declared %v, library %v", c.name, c.got, c.want)
		}
	}
}

// TestJobImports: the job file's package links the libraries whose
// settings it gathers, never the runner, the stages, the report, Parquet
// or Arrow.
func TestJobImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, bad := range []string{"monomer/pipeline", "monomer/stages", "monomer/report", "monomer/schema", "github.com/apache/arrow-go"} {
			if p == bad || strings.HasPrefix(p, bad+"/") {
				t.Errorf("job imports %s", p)
			}
		}
	}
}

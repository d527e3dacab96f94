package job

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"monomer/internal/nearest"
)

// Override is one change to a job file, from --set or the environment.
//
// Key is a dotted path of the job file's YAML keys: "seed", "data_dir",
// "data.meta", "settings.k", "settings.lambdas", and, for one experiment,
// "experiments.<name>.settings.k" or "experiments.<name>.depth" (the name
// may itself contain dots). Value is YAML: 50, 1e-4, [0, 1e-4], true,
// "quoted text". Overrides apply in order, later ones winning; the result
// is validated exactly like a file.
type Override struct {
	Key, Value string
	// Source names the override in errors: "--set settings.k=50" or
	// "MONOMER_SETTINGS__K".
	Source string
}

// EnvPrefix starts the environment variables that override job settings.
const EnvPrefix = "MONOMER_"

// ParseSets parses --set key=value arguments.
func ParseSets(sets []string) ([]Override, error) {
	var out []Override
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%w: --set %q: want key=value, e.g. settings.k=50", ErrUsage, s)
		}
		out = append(out, Override{Key: strings.TrimSpace(k), Value: v, Source: "--set " + s})
	}
	return out, nil
}

// EnvOverrides turns environment variables (as os.Environ gives them) into
// overrides. The variable's name after MONOMER_ is the key with "." written
// "__", case-insensitive except for the experiment name:
//
//	MONOMER_SEED=2                        seed
//	MONOMER_DATA_DIR=/data/amazon         data_dir
//	MONOMER_SETTINGS__MONOMER_K=10        settings.monomer_k
//	MONOMER_EXPERIMENTS__men-bought__SETTINGS__K=50
//
// Only variables whose first part is a top-level job key (name, seed,
// data_dir, data, settings, experiments) are overrides; other MONOMER_
// variables are left alone. The result is sorted by variable name.
func EnvOverrides(environ []string) []Override {
	top := yamlKeys(reflect.TypeFor[Job]())
	var out []Override
	for _, kv := range environ {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		segs := strings.Split(name[len(EnvPrefix):], "__")
		if !slices.Contains(top, strings.ToLower(segs[0])) {
			continue
		}
		for i := range segs {
			if i > 0 && strings.EqualFold(segs[i-1], "experiments") {
				continue // an experiment name keeps its case
			}
			segs[i] = strings.ToLower(segs[i])
		}
		out = append(out, Override{Key: strings.Join(segs, "."), Value: v, Source: name})
	}
	slices.SortStableFunc(out, func(a, b Override) int { return strings.Compare(a.Source, b.Source) })
	return out
}

// EnvNearMisses names the MONOMER_ variables in environ that are neither
// overrides (EnvOverrides) nor one of others (variables read elsewhere,
// such as "MONOMER_RUN_DIR") but are one slip from one of them: a
// misspelt MONOMER_SEDD would otherwise leave the seed at its default
// without a word. A slip is one edit (nearest.Slip) or a moved underscore
// in the first part (MONOMER_RUNDIR); "_" or "." written for a section's
// "__" before one of the section's keys (MONOMER_SETTINGS_REJECT_RATIO, the
// commonest slip of all, since the keys themselves hold single
// underscores); or the prefix in another case or with an underscore too
// many (monomer_SEED, MONOMER__SEED). The map goes from each such variable
// to the name meant, its parts after the first kept as written. Other
// MONOMER_ variables (a scheduler's own, say) are no concern of monomer's
// and are not reported.
func EnvNearMisses(environ []string, others ...string) map[string]string {
	var known []string
	for _, k := range yamlKeys(reflect.TypeFor[Job]()) {
		known = append(known, strings.ToUpper(k))
	}
	for _, o := range others {
		known = append(known, strings.TrimPrefix(o, EnvPrefix))
	}
	out := map[string]string{}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		rest, ok := cutPrefixFold(name, EnvPrefix)
		if !ok {
			continue
		}
		fixed := strings.TrimLeft(rest, "_")
		if fixed == "" {
			continue
		}
		meant, right := envMeant(fixed, known)
		if right && (fixed != rest || !strings.HasPrefix(name, EnvPrefix)) {
			meant = fixed // only the prefix slipped
		}
		if meant != "" {
			out[name] = EnvPrefix + meant
		}
	}
	return out
}

// envMeant is the name after MONOMER_ that rest is one slip of, or "";
// right reports that rest needs none (an override or a name of known).
func envMeant(rest string, known []string) (meant string, right bool) {
	first, tail, deep := strings.Cut(rest, "__")
	up := strings.ToUpper(first)
	if slices.Contains(known, up) || slices.Contains(known, strings.ToUpper(rest)) {
		return "", true
	}
	if meant := envSlip(up, known); meant != "" {
		if deep {
			meant += "__" + tail
		}
		return meant, false
	}
	return sectionSlip(rest), false
}

// envSlip is the name of known (upper case) that up is one slip from, or
// "". Names under four letters are too short for a slip to be told from
// another program's name.
func envSlip(up string, known []string) string {
	var long []string
	for _, k := range known {
		if len(k) >= 4 {
			long = append(long, k)
		}
	}
	if k, ok := nearest.Slip(up, long); ok {
		return k
	}
	bare := strings.ReplaceAll(up, "_", "")
	for _, k := range long {
		if bare == strings.ReplaceAll(k, "_", "") {
			return k
		}
	}
	return ""
}

// sectionSlip is rest (a variable's name after MONOMER_) with the "_" or
// "." after a section's name made "__" (every "." after it, if a "."),
// when what follows names one of the section's keys, or is one slip from
// one (any name for experiments, whose next part is an experiment's):
// SETTINGS_K for SETTINGS__K. Otherwise "".
func sectionSlip(rest string) string {
	for _, f := range yamlFields(reflect.TypeFor[Job]()) {
		sec := strings.ToUpper(yamlName(f))
		after, ok := cutPrefixFold(rest, sec+"_")
		if dotted, dot := cutPrefixFold(rest, sec+"."); dot {
			after, ok = strings.ReplaceAll(dotted, ".", "__"), true
		}
		if !ok || after == "" || strings.HasPrefix(after, "_") {
			continue
		}
		switch t := plainType(f.Type); {
		case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		case t.Kind() == reflect.Struct:
			key, _, _ := strings.Cut(strings.ToLower(after), "__")
			if _, ok := fieldByYAML(t, key); !ok {
				if _, ok := nearest.Slip(key, yamlKeys(t)); !ok {
					continue
				}
			}
		default:
			continue
		}
		return sec + "__" + after
	}
	return ""
}

// cutPrefixFold is strings.CutPrefix ignoring ASCII case.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// pathKeys are the override keys whose values are paths on this machine,
// not names inside the data set (data.meta is relative to data_dir
// wherever it is given).
var pathKeys = []string{"data_dir", "warm_from", "vocabulary_from"}

// ResolvePaths makes the relative paths among overrides absolute against
// dir, the working directory: a path given on the command line or in the
// environment means there what it means to every other program, while a
// path written in the job file stays relative to the job file's folder.
func ResolvePaths(overrides []Override, dir string) []Override {
	out := slices.Clone(overrides)
	for i, o := range out {
		var p string
		if !slices.Contains(pathKeys, o.Key) || yaml.Unmarshal([]byte(o.Value), &p) != nil || p == "" || filepath.IsAbs(p) || p == ReservedName {
			continue
		}
		b, err := yaml.Marshal(filepath.Join(dir, p))
		if err != nil {
			continue // a string always marshals
		}
		out[i].Value = strings.TrimSuffix(string(b), "\n")
	}
	return out
}

// LoadWith reads a job file, applies the overrides in order and
// validates the result. Nothing but the job file is read.
func LoadWith(path string, overrides []Override) (*Job, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return ParseWith(path, b, overrides)
}

// ParseWith is LoadWith on the file's bytes.
func ParseWith(path string, b []byte, overrides []Override) (*Job, error) {
	if len(overrides) == 0 {
		return Parse(path, b)
	}
	base := path
	// Decode the file alone first, so its own errors carry its line numbers.
	if _, err := decodeJob(base, b); err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrConfig, base, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	var j *Job
	for _, o := range overrides {
		if err := applyOverride(doc.Content[0], o); err != nil {
			return nil, fmt.Errorf("%w: %s: %s: %v", ErrConfig, base, o.Source, err)
		}
		out, err := yaml.Marshal(&doc)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %s: %v", ErrConfig, base, o.Source, err)
		}
		if j, err = decodeJob(base, out); err != nil {
			return nil, fmt.Errorf("%w: %s: %s: %s", ErrConfig, base, o.Source, yamlMessage(err))
		}
	}
	return finishJob(path, j, nil)
}

var yamlLine = regexp.MustCompile(`(?s)^.*?line \d+: `)

// yamlMessage strips the decoder's preamble and line number, which refer
// to the re-encoded document rather than to anything the user wrote.
func yamlMessage(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "yaml: "); i >= 0 {
		msg = msg[i:]
	}
	return yamlLine.ReplaceAllString(msg, "")
}

// applyOverride sets o.Key in the mapping root, checking each key against
// the Job struct's YAML keys.
func applyOverride(root *yaml.Node, o Override) error {
	segs, err := splitKey(root, o.Key)
	if err != nil {
		return err
	}
	var val yaml.Node
	if err := yaml.Unmarshal([]byte(o.Value), &val); err != nil {
		return fmt.Errorf("value %q is not YAML: %v", o.Value, err)
	}
	v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ""}
	if val.Kind == yaml.DocumentNode && len(val.Content) > 0 {
		v = val.Content[0]
	}
	t := reflect.TypeFor[Job]()
	node := root
	path := ""
	for i := 0; i < len(segs); i++ {
		seg := segs[i]
		f, ok := fieldByYAML(t, seg)
		if !ok {
			return unknownKey(seg, path, t)
		}
		path = joinPath(path, seg)
		if i == len(segs)-1 {
			setKey(node, seg, v)
			return nil
		}
		ft := plainType(f.Type)
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
			// experiments.<name>...: find the experiment by name.
			i++
			name := segs[i]
			seq := getKey(node, seg)
			var item *yaml.Node
			if seq != nil && seq.Kind == yaml.SequenceNode {
				for _, it := range seq.Content {
					if n := getKey(it, "name"); n != nil && n.Value == name {
						item = it
					}
				}
			}
			if item == nil {
				return fmt.Errorf("no experiment named %q", name)
			}
			if i == len(segs)-1 {
				return fmt.Errorf("%s.%s: name a field, e.g. %s.%s.settings.k", path, name, path, name)
			}
			node, t, path = item, ft.Elem(), path+"."+name
			continue
		}
		if ft.Kind() != reflect.Struct {
			return fmt.Errorf("%s is a value, not a section", path)
		}
		child := getKey(node, seg)
		if child == nil || child.Kind != yaml.MappingNode {
			child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			setKey(node, seg, child)
		}
		node, t = child, ft
	}
	return nil
}

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// splitKey splits a dotted key, keeping an experiment name that contains
// dots whole (the longest name of the file that fits).
func splitKey(root *yaml.Node, key string) ([]string, error) {
	for _, s := range strings.Split(key, ".") {
		if s == "" {
			return nil, fmt.Errorf("key %q has an empty part", key)
		}
	}
	const exps = "experiments."
	if !strings.HasPrefix(key, exps) {
		return strings.Split(key, "."), nil
	}
	rest := key[len(exps):]
	best := ""
	if seq := getKey(root, "experiments"); seq != nil {
		for _, it := range seq.Content {
			n := getKey(it, "name")
			if n == nil {
				continue
			}
			if (rest == n.Value || strings.HasPrefix(rest, n.Value+".")) && len(n.Value) > len(best) {
				best = n.Value
			}
		}
	}
	if best == "" {
		best, _, _ = strings.Cut(rest, ".")
	}
	segs := []string{"experiments", best}
	if tail := strings.TrimPrefix(rest[len(best):], "."); tail != "" {
		segs = append(segs, strings.Split(tail, ".")...)
	}
	return segs, nil
}

func getKey(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func setKey(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

// yamlKeys lists the YAML keys of struct type t, in field order.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for _, f := range yamlFields(t) {
		keys = append(keys, yamlName(f))
	}
	return keys
}

// yamlFields lists the fields of struct type t that have a YAML key, the
// fields of an inline struct (Settings' library structs) in its place.
func yamlFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if _, opts, _ := strings.Cut(f.Tag.Get("yaml"), ","); opts == "inline" {
			out = append(out, yamlFields(f.Type)...)
		} else if yamlName(f) != "" {
			out = append(out, f)
		}
	}
	return out
}

func yamlName(f reflect.StructField) string {
	tag := f.Tag.Get("yaml")
	name, _, _ := strings.Cut(tag, ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

func fieldByYAML(t reflect.Type, key string) (reflect.StructField, bool) {
	for _, f := range yamlFields(t) {
		if yamlName(f) == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// unknownKey is the error for key, not a key of struct t, the section at
// path ("" for the top level): the nearest key if it is a slip away, and
// all of them.
func unknownKey(key, path string, t reflect.Type) error {
	where, keys := "the job", yamlKeys(t)
	if path != "" {
		where = path
	}
	hint := ""
	if near, ok := nearest.Slip(key, keys); ok {
		hint = fmt.Sprintf("; did you mean %s?", near)
	}
	return fmt.Errorf("unknown key %q in %s%s (keys: %s)", key, where, hint, strings.Join(keys, ", "))
}

// decodeJob decodes job-file bytes strictly (unknown keys are errors)
// without validating.
func decodeJob(base string, b []byte) (*Job, error) {
	// The checks first: they name the field of a type error.
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err == nil {
		if err := checkNodes(&doc, reflect.TypeFor[Job](), ""); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrConfig, base, err)
		}
	}
	var j Job
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&j); err != nil {
		if errors.Is(err, io.EOF) {
			return &j, nil
		}
		msg := yamlPlaces.Replace(err.Error())
		if strings.Contains(msg, "cannot start any token") && tabIndented(b, msg) {
			msg += " (a tab: YAML indents with spaces only)"
		}
		return nil, fmt.Errorf("%w: %s: %s", ErrConfig, base, msg)
	}
	// A second document (after a "---") would be ignored: a job pasted
	// twice, or one meant to replace the first, runs as something else.
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) && !emptyDocument(&more, err) {
		at := ""
		if err == nil {
			at = fmt.Sprintf("line %d: ", more.Content[0].Line)
		}
		return nil, fmt.Errorf("%w: %s: %sa second YAML document; a job file holds one (remove the \"---\" and what follows, or merge it into the first)", ErrConfig, base, at)
	}
	return &j, nil
}

var errLine = regexp.MustCompile(`\bline (\d+):`)

// tabIndented reports whether the line of b the decoder's message msg
// names is indented with a tab, the cause of "cannot start any token" a
// hint should name; a tab elsewhere (inside a quoted title, say) is not.
func tabIndented(b []byte, msg string) bool {
	m := errLine.FindStringSubmatch(msg)
	if m == nil {
		return false
	}
	n, _ := strconv.Atoi(m[1])
	lines := bytes.Split(b, []byte("\n"))
	if n < 1 || n > len(lines) {
		return false
	}
	line := lines[n-1]
	indent := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
	return bytes.IndexByte(indent, '\t') >= 0
}

// emptyDocument reports whether a decoded document holds nothing (a
// trailing "---", perhaps with comments).
func emptyDocument(n *yaml.Node, err error) bool {
	if err != nil {
		return false
	}
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode || c.ShortTag() != "!!null" || c.Value != "" {
			return false
		}
	}
	return true
}

// yamlPlaces names the job file's sections instead of the Go types behind
// them in the decoder's messages.
var yamlPlaces = strings.NewReplacer(
	"yaml: unmarshal errors:\n  ", "",
	"in type job.Job", "at the top level",
	"in type job.Settings", "in settings",
	"in type job.Experiment", "in an experiment",
	"in type job.Data", "in data",
)

package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"monomer/job"
	"monomer/pipeline"
	"monomer/pipeline/cache"
)

// keyText is what the runner hashes of parameters p, as text: p's JSON and
// the raw files it names (whose content is hashed; another path is another
// file).
func keyText(t *testing.T, p any) string {
	t.Helper()
	params, files := keyOf(p)
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s\x00%q", b, files) // quoted: no file list reads as another
}

// leaves calls visit with every settable leaf of v (a bool, number or
// string; a nil pointer, slice or map counts as a leaf too), in a fixed
// order; visit returns false to stop. Unexported fields are visited too:
// a field the JSON leaves out is exactly what the test must find.
func leaves(v reflect.Value, path string, visit func(path string, leaf reflect.Value) bool) bool {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Field(i)
			if !f.CanSet() {
				f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
			}
			if !leaves(f, path+"."+v.Type().Field(i).Name, visit) {
				return false
			}
		}
		return true
	case reflect.Pointer:
		if v.IsNil() {
			return visit(path, v)
		}
		return leaves(v.Elem(), path, visit)
	case reflect.Slice:
		if !visit(path+"[len]", v) {
			return false
		}
		for i := range v.Len() {
			if !leaves(v.Index(i), fmt.Sprintf("%s[%d]", path, i), visit) {
				return false
			}
		}
		return true
	}
	return visit(path, v)
}

// perturb changes leaf v to another value.
func perturb(v reflect.Value) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float()*2 + 1)
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Slice: // one more element
		v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
	default:
		panic("perturb: " + v.Kind().String())
	}
}

// deepCopy copies v (structs, pointers, slices and plain values) into a
// new addressable value, so perturbing the copy leaves v alone.
func deepCopy(v reflect.Value) reflect.Value {
	out := reflect.New(v.Type()).Elem()
	var cp func(dst, src reflect.Value)
	cp = func(dst, src reflect.Value) {
		switch src.Kind() {
		case reflect.Struct:
			for i := range src.NumField() {
				d, s := dst.Field(i), src.Field(i)
				d = reflect.NewAt(d.Type(), unsafe.Pointer(d.UnsafeAddr())).Elem()
				s = reflect.NewAt(s.Type(), unsafe.Pointer(s.UnsafeAddr())).Elem()
				cp(d, s)
			}
		case reflect.Pointer:
			if !src.IsNil() {
				dst.Set(reflect.New(src.Type().Elem()))
				cp(dst.Elem(), src.Elem())
			}
		case reflect.Slice:
			if !src.IsNil() {
				dst.Set(reflect.MakeSlice(src.Type(), src.Len(), src.Len()))
				for i := range src.Len() {
					cp(dst.Index(i), src.Index(i))
				}
			}
		default:
			dst.Set(src)
		}
	}
	src := reflect.New(v.Type()).Elem()
	src.Set(v)
	cp(out, src)
	return out
}

// TestParamsAreTheKey: for every stage (each node of a job where every
// stage has one: bow-shard, the parts of train, report), changing any
// field of its parameters, at any depth, changes what the runner hashes
// into its key. With Run seeing nothing but those parameters
// (TestRunSeesOnlyItsParams) and receiving the hashed value
// (TestRunGetsTheKeyedParams), a setting Run reads cannot be missing from
// the key: the bug of recommend's key holding a literal 10 for
// recommend_k cannot recur.
func TestParamsAreTheKey(t *testing.T) {
	g := everyStageGraph(t)
	seen := map[string]int{}
	for _, n := range g.Nodes {
		params, _ := n.Work.Key()
		base := keyText(t, params)
		v := reflect.ValueOf(params)
		var paths []string
		leaves(deepCopy(v), "", func(path string, _ reflect.Value) bool { paths = append(paths, path); return true })
		if len(paths) == 0 {
			t.Errorf("%s: parameters %T have no field", n.ID, params)
		}
		for i, path := range paths {
			c := deepCopy(v)
			k := 0
			leaves(c, "", func(_ string, leaf reflect.Value) bool {
				if k == i {
					perturb(leaf)
					return false
				}
				k++
				return true
			})
			if keyText(t, c.Interface()) == base {
				t.Errorf("%s: changing %T%s leaves the key unchanged: the runner would reuse outputs computed with the old value", n.ID, params, path)
			}
			if reflect.DeepEqual(c.Interface(), params) {
				t.Fatalf("%s: %s not perturbed", n.ID, path)
			}
		}
		seen[n.Stage] += len(paths)
	}
	for _, s := range append(Experiment(), Job()...) {
		if seen[s.Name()] == 0 {
			t.Errorf("stage %s: no parameter checked", s.Name())
		}
	}
}

// The spies run in place of the stages, recording the parameters Run gets
// by node and writing nothing.
type spies map[string]any

func (s spies) run(env *pipeline.Env, p any) (*pipeline.Result, error) {
	id := env.Stage
	if env.Experiment != "" {
		id = env.Experiment + "/" + id
	}
	s[id] = p
	return &pipeline.Result{}, nil
}

type (
	spyExp[P any] struct {
		ExpStage[P]
		s spies
	}
	spySharded[P any] struct {
		ShardedStage[P]
		s spies
	}
	spyParted[P any] struct {
		PartedStage[P]
		s spies
	}
	spyJob[P any] struct {
		JobStage[P]
		s spies
	}
)

func (s spyExp[P]) Run(_ context.Context, env *pipeline.Env, p P) (*pipeline.Result, error) {
	return s.s.run(env, p)
}

// active leaves out of the spied graph what the stage leaves out (publish
// without a publish: block); the spy has no After, as it writes nothing.
func (s spyExp[P]) active(e *job.Resolved) bool {
	o, ok := s.ExpStage.(optionalStage)
	return !ok || o.active(e)
}
func (s spySharded[P]) Run(_ context.Context, env *pipeline.Env, p P) (*pipeline.Result, error) {
	return s.s.run(env, p)
}
func (s spyParted[P]) Run(_ context.Context, env *pipeline.Env, p P) (*pipeline.Result, error) {
	return s.s.run(env, p)
}
func (s spyJob[P]) Publish() []string { return nil } // the spy writes nothing to publish
func (s spyJob[P]) Run(_ context.Context, env *pipeline.Env, p P) (*pipeline.Result, error) {
	return s.s.run(env, p)
}

// TestRunGetsTheKeyedParams runs the DAG of every stage with each stage's
// Run replaced by a spy: every node's Run gets a value equal to the one
// its manifest records as hashed into its key (the parameters, and the
// raw files they name).
func TestRunGetsTheKeyedParams(t *testing.T) {
	g := everyStageGraph(t)
	s := spies{}
	exp := []Stage{
		Each[ingestParams](spyExp[ingestParams]{Ingest{}, s}),
		Sharded[bowShardParams](spySharded[bowShardParams]{BowShard{}, s}),
		Each[featuresParams](spyExp[featuresParams]{Features{}, s}),
		Each[negativesParams](spyExp[negativesParams]{Negatives{}, s}),
		Each[splitParams](spyExp[splitParams]{Split{}, s}),
		Parted[trainParams](spyParted[trainParams]{Train{}, s}),
		Each[evaluateParams](spyExp[evaluateParams]{Evaluate{}, s}),
		Each[recommendParams](spyExp[recommendParams]{Recommend{}, s}),
		Each[publishParams](spyExp[publishParams]{Publish{}, s}),
		Each[sectionParams](spyExp[sectionParams]{ReportSection{}, s}),
	}
	jobSt := []Stage{JobLevel[reportParams](spyJob[reportParams]{Report{}, s})}
	names := func(st []Stage) (out []string) {
		for _, x := range st {
			out = append(out, x.Name())
		}
		return out
	}
	if !slices.Equal(names(append(exp, jobSt...)), names(append(Experiment(), Job()...))) {
		t.Fatalf("spied stages %v, want those of Experiment and Job", names(append(exp, jobSt...)))
	}
	j := loadTestJob(t)
	sharded := j.Experiments[1]
	sharded.Name += "-sharded"
	sharded.Settings.VocabShards = job.Set(2)
	sharded.Publish = &job.Publish{Model: "monomer"} // as everyStageGraph
	j.Experiments = append(j.Experiments, sharded)
	spied, err := Graph(j, exp, jobSt)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := pipeline.Run(t.Context(), spied, pipeline.Options{RunDir: dir}); err != nil {
		t.Fatal(err)
	}
	if len(s) != len(g.Nodes) {
		t.Fatalf("%d nodes ran, want %d", len(s), len(g.Nodes))
	}
	for _, n := range spied.Nodes {
		got, ok := s[n.ID]
		if !ok {
			t.Errorf("%s did not run", n.ID)
			continue
		}
		m, err := cache.ReadManifest(n.Dir(dir))
		if err != nil {
			t.Fatal(err)
		}
		params, files := keyOf(got)
		b, err := json.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		var want, have any
		if err := json.Unmarshal(m.Inputs.Params, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &have); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(have, want) {
			t.Errorf("%s: Run got %s, the key hashed %s", n.ID, b, m.Inputs.Params)
		}
		var hashed []string
		for _, f := range m.Inputs.Files {
			hashed = append(hashed, f.Path)
		}
		if !slices.Equal(files, hashed) {
			t.Errorf("%s: Run got files %v, the key hashed %v", n.ID, files, hashed)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "report", cache.ManifestName)); err != nil {
		t.Error(err)
	}
}

// TestRunSeesOnlyItsParams: a stage's Run has its parameters and the
// runner's Env, and nothing else of the job: the stage types have no
// fields, Run's parameters are (context, *pipeline.Env, P) with P the type
// Params returns, and Env holds no setting, only what the runner keys
// itself (experiment, seed, shard, part, replica) and where to read and
// write.
func TestRunSeesOnlyItsParams(t *testing.T) {
	envFields := []string{"Experiment", "Seed", "OutDir", "Stage", "Part", "Replica", "Shard", "Shards", "Tracker"}
	et := reflect.TypeFor[pipeline.Env]()
	for i := range et.NumField() {
		f := et.Field(i)
		if f.IsExported() && !slices.Contains(envFields, f.Name) {
			t.Errorf("pipeline.Env.%s (%s): a stage's Run must see the job only through its keyed parameters", f.Name, f.Type)
		}
		if strings.Contains(f.Type.String(), "job.") {
			t.Errorf("pipeline.Env.%s is of the job's type %s", f.Name, f.Type)
		}
	}
	for _, s := range []any{Ingest{}, BowShard{}, Features{}, Negatives{}, Split{}, Train{}, Evaluate{}, Recommend{}, Report{}} {
		st := reflect.TypeOf(s)
		if st.NumField() != 0 {
			t.Errorf("%s has fields: Run could read them unkeyed", st)
		}
		params, ok := st.MethodByName("Params")
		if !ok {
			params, ok = st.MethodByName("PartParams")
		}
		run, _ := st.MethodByName("Run")
		if !ok || run.Type == nil {
			t.Errorf("%s: no Params or Run", st)
			continue
		}
		p := params.Type.Out(0)
		in := run.Type // the receiver first
		if in.NumIn() != 4 || in.In(1) != reflect.TypeFor[context.Context]() || in.In(2) != reflect.TypeFor[*pipeline.Env]() || in.In(3) != p {
			t.Errorf("%s.Run is %s, want func(context.Context, *pipeline.Env, %s)", st, in, p)
		}
	}
}

// TestRecommendKIsKeyed: recommend_k is read through the parameters it is
// keyed by (its key once held a literal 10 while Run read the setting).
func TestRecommendKIsKeyed(t *testing.T) {
	j := loadTestJob(t)
	r := j.Resolve(0)
	r.Settings.RecommendK = 10
	ten := Recommend{}.Params(&r)
	r.Settings.RecommendK = 7
	seven := Recommend{}.Params(&r)
	if seven.K != 7 || keyText(t, ten) == keyText(t, seven) {
		t.Errorf("recommend_k 7: Run gets k %d, key %s (with 10: %s)", seven.K, keyText(t, seven), keyText(t, ten))
	}
}

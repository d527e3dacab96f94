package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ManifestName is the file, in every stage directory, that records how the
// outputs beside it were made.
const ManifestName = "manifest.json"

// ManifestFormat versions the manifest and the key derivation; bumping it
// makes every stage stale once.
const ManifestFormat = 1

// Warning is one warning of a finished stage: a message and the attributes that place
// it (e.g. model and lambda), logged in key order.
type Warning struct {
	Msg   string         `json:"msg"`
	Attrs map[string]any `json:"attrs,omitempty"`
}

// Manifest records one finished stage. It is written last, into the
// temporary directory, so a stage directory with a manifest is complete.
type Manifest struct {
	Format int `json:"format"`
	// Key is the cache key: the hex sha256 of the canonical JSON of Inputs
	// with file paths left out (content decides, not location).
	Key string `json:"key"`
	// Inputs is everything the key was computed from, kept so that a later
	// run can say which parameter or input changed.
	Inputs KeyInputs `json:"inputs"`
	// Outputs are every file the stage wrote, sorted by name.
	Outputs []Output `json:"outputs"`
	// Stats are the stage's Result.Stats.
	Stats map[string]any `json:"stats,omitempty"`
	// Warnings are the stage's Result.Warnings.
	Warnings []Warning `json:"warnings,omitempty"`
	Seed     uint64    `json:"seed"`
	// Config is the fully resolved experiment (every setting filled in), or
	// the job for a job-level stage.
	Config any   `json:"config"`
	Tools  Tools `json:"tools"`
	// RunID is the run that computed the outputs (Options.RunID): a stage
	// restored from the store keeps the computing run's.
	RunID    string    `json:"run_id,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Seconds  float64   `json:"seconds"`
}

// KeyInputs is the complete description of a stage's computation, in the
// manner of Go's build-cache ActionID.
type KeyInputs struct {
	Stage      string `json:"stage"`
	Experiment string `json:"experiment,omitempty"`
	// Shard is "i/n" for shard i of n of a Sharded stage.
	Shard string `json:"shard,omitempty"`
	// Part is the part's name for a node of a Parted stage.
	Part string `json:"part,omitempty"`
	// Replica names a node run once more under another of the job's
	// seeds ("s2"); "" for the first seed, whose keys are those of a job
	// of one seed.
	Replica string `json:"replica,omitempty"`
	// Code identifies the stage's code; see CodeVersion.
	Code   string          `json:"code"`
	Seed   uint64          `json:"seed"`
	Params json.RawMessage `json:"params"`
	// Files are the raw inputs named by Key, in its order.
	Files []FileHash `json:"files"`
	// Upstream are the output hashes recorded by the stages named in Deps:
	// an upstream stage that reran but wrote the same bytes leaves this
	// stage's key unchanged.
	Upstream []UpstreamHash `json:"upstream"`
}

// FileHash is a raw input file and its content hash.
type FileHash struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// UpstreamHash is one upstream stage's outputs, name -> sha256.
type UpstreamHash struct {
	Experiment string            `json:"experiment,omitempty"`
	Stage      string            `json:"stage"`
	Outputs    map[string]string `json:"outputs"`
}

// Output is one file a stage wrote.
type Output struct {
	Name   string `json:"name"` // path relative to the stage directory, '/'-separated
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	// Rows is the stage's Result.Rows for the file's stem, when given.
	Rows *int64 `json:"rows,omitempty"`
}

// Tools are the versions of what built the outputs.
type Tools struct {
	Go      string            `json:"go"`
	Module  string            `json:"module"`
	VCS     string            `json:"vcs,omitempty"`
	Modules map[string]string `json:"modules,omitempty"`
	// BLAS is the BLAS that computed the matrix products, e.g. "openblas
	// 0.3.21 Cooperlake" or "gonum go" (Options.BLAS).
	BLAS string `json:"blas,omitempty"`
}

// key returns the cache key of in.
// Key is the cache key of in: the hex sha256 of its canonical JSON, raw
// files by content (not path).
func (in KeyInputs) Key() string {
	c := in
	c.Files = make([]FileHash, len(in.Files))
	for i, f := range in.Files {
		c.Files[i] = FileHash{SHA256: f.SHA256, Bytes: f.Bytes}
	}
	b, err := json.Marshal(struct {
		Format int `json:"format"`
		KeyInputs
	}{ManifestFormat, c})
	if err != nil {
		panic(err) // only strings, numbers and validated raw JSON
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// NormalizeParams returns the canonical JSON of params: object keys sorted,
// numbers as written, no insignificant space.
func NormalizeParams(params any) (json.RawMessage, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// OutputMap returns the manifest's outputs as name -> sha256.
func (m *Manifest) OutputMap() map[string]string {
	out := make(map[string]string, len(m.Outputs))
	for _, o := range m.Outputs {
		out[o.Name] = o.SHA256
	}
	return out
}

// ReadManifest reads dir/manifest.json. A missing manifest gives an error
// satisfying errors.Is(err, fs.ErrNotExist).
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("pipeline: %s: %w", filepath.Join(dir, ManifestName), err)
	}
	return &m, nil
}

// WriteManifest writes m as dir/manifest.json, which must not exist, and
// fsyncs it.
func WriteManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("pipeline: manifest of %s: %w", dir, err)
	}
	b = append(b, '\n')
	f, err := os.OpenFile(filepath.Join(dir, ManifestName), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// StaleReasons explains why a stage with inputs now is not up to date
// relative to its manifest old: the parameters, files, upstream outputs or
// code that changed.
func StaleReasons(old, now KeyInputs) []string {
	var r []string
	if old.Code != now.Code {
		r = append(r, fmt.Sprintf("code version changed (%s -> %s)", shortCode(old.Code), shortCode(now.Code)))
	}
	if old.Seed != now.Seed {
		r = append(r, fmt.Sprintf("seed changed (%d -> %d)", old.Seed, now.Seed))
	}
	// The manifest stores params indented; compare them compacted.
	if !bytes.Equal(compactJSON(old.Params), compactJSON(now.Params)) {
		r = append(r, paramChanges(old.Params, now.Params)...)
	}
	for i, f := range now.Files {
		name := filepath.Base(f.Path)
		switch {
		case i >= len(old.Files):
			r = append(r, fmt.Sprintf("new input %s", name))
		case old.Files[i].SHA256 != f.SHA256:
			r = append(r, fmt.Sprintf("input %s changed (content %s -> %s)", name, Short(old.Files[i].SHA256), Short(f.SHA256)))
		}
	}
	for i := len(now.Files); i < len(old.Files); i++ {
		r = append(r, fmt.Sprintf("input %s no longer read", filepath.Base(old.Files[i].Path)))
	}
	prev := map[string]map[string]string{}
	for _, u := range old.Upstream {
		prev[u.Experiment+"/"+u.Stage] = u.Outputs
	}
	for _, u := range now.Upstream {
		o, ok := prev[u.Experiment+"/"+u.Stage]
		name := u.Stage
		if u.Experiment != "" && now.Experiment == "" {
			name = u.Experiment + "/" + u.Stage
		}
		switch {
		case !ok:
			r = append(r, fmt.Sprintf("new upstream %s", name))
		case !maps.Equal(o, u.Outputs):
			r = append(r, fmt.Sprintf("upstream %s outputs changed (%s)", name, ChangedNames(o, u.Outputs)))
		}
	}
	if len(r) == 0 && old.Key() != now.Key() {
		r = append(r, "cache key format changed")
	}
	return r
}

// shortCode shortens an executable hash; a declared version is shown whole.
func shortCode(s string) string {
	if strings.HasPrefix(s, "exe:") {
		return Short(s)
	}
	return strconv.Quote(s)
}

// Short is a hash shortened for a message.
func Short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	if s == "" {
		return `""`
	}
	return s
}

// ChangedNames lists the names whose hashes differ between a and b.
func ChangedNames(a, b map[string]string) string {
	var names []string
	for k, v := range b {
		if a[k] != v {
			names = append(names, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// paramChanges lists "param a.b: old -> new" for every leaf that differs.
func compactJSON(b json.RawMessage) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}

func paramChanges(oldRaw, nowRaw json.RawMessage) []string {
	var o, n any
	dec := func(b json.RawMessage, v *any) {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if d.Decode(v) != nil {
			*v = nil
		}
	}
	dec(oldRaw, &o)
	dec(nowRaw, &n)
	fo, fn := map[string]string{}, map[string]string{}
	flatten("", o, fo)
	flatten("", n, fn)
	var r []string
	for _, k := range UnionKeys(fo, fn) {
		a, aok := fo[k]
		b, bok := fn[k]
		if a == b && aok == bok {
			continue
		}
		if !aok {
			a = "(unset)"
		}
		if !bok {
			b = "(unset)"
		}
		name := "param " + k
		if k == "" {
			name = "params"
		}
		r = append(r, fmt.Sprintf("%s changed (%s -> %s)", name, a, b))
	}
	if len(r) == 0 {
		r = append(r, "params changed")
	}
	return r
}

// flatten maps every leaf of a decoded JSON value to its dotted path.
// Arrays are leaves: "lambdas: [0,1e-6] -> [0]" reads better than indices.
func flatten(prefix string, v any, out map[string]string) {
	if m, ok := v.(map[string]any); ok && len(m) > 0 {
		for k, x := range m {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, x, out)
		}
		return
	}
	b, _ := json.Marshal(v)
	out[prefix] = string(b)
}

var (
	toolsOnce sync.Once
	tools     Tools
)

// ToolVersions reads the build information of the running binary once.
func ToolVersions() Tools {
	toolsOnce.Do(func() {
		bi, ok := debug.ReadBuildInfo()
		if !ok {
			return
		}
		tools.Go = bi.GoVersion
		tools.Module = bi.Main.Path + "@" + bi.Main.Version
		var rev, mod string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				mod = s.Value
			}
		}
		if rev != "" {
			tools.VCS = rev
			if mod == "true" {
				tools.VCS += "+modified"
			}
		}
		tools.Modules = map[string]string{}
		for _, d := range bi.Deps {
			v := d.Version
			if d.Replace != nil {
				v = d.Replace.Path + "@" + d.Replace.Version
			}
			tools.Modules[d.Path] = v
		}
	})
	return tools
}

// Version is the running build's version in one line: the main module's
// version, which the go command stamps from the VCS for a build in a
// checkout (v0.0.0-<date>-<commit>[+dirty]), else the VCS commit, else
// "(devel)"; then the Go version and platform. The run log, the manifests'
// tools and the report carry the same build information.
func Version() string {
	t := ToolVersions()
	v := "(devel)"
	if _, mv, ok := strings.Cut(t.Module, "@"); ok && mv != "" && mv != "(devel)" {
		v = mv
	} else if t.VCS != "" {
		v = "commit " + t.VCS
	}
	return v + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}

// Code is a stage's code version, the code part of its nodes' keys (like
// Dagster's code_version): the version goes into the key in place of the
// executable's hash, so a rebuild that does not change the stage's
// behaviour reruns nothing.
//
// The rule: bump the version in the same commit as any change that can
// change the stage's outputs for the same inputs (a new column, another
// rounding, another order, a dependency upgrade that writes other bytes);
// a refactoring that writes the same bytes keeps it. The guard test
// (stages TestStageVersions) fails when outputs changed under an unchanged
// version. Versions are compared as strings; use semantic versions
// ("1.2.0") without spaces.
type Code struct {
	// Version is the stage's version; "" keys the node by the running
	// executable's hash instead.
	Version string
	// GoDependent: the outputs depend on the Go toolchain (floating point
	// of package math or of the fused multiply-adds the compiler emits on
	// some GOARCHes, or the algorithms of math/rand/v2, which carry no
	// stability promise), so the Go version and GOARCH join the version and
	// a new toolchain reruns the stage. Stages that only parse, count and
	// sort leave it false and survive toolchain upgrades.
	GoDependent bool
	// NumericEnv names what of the machine or the build decides the
	// outputs beyond the version and the toolchain, such as the BLAS
	// implementation and CPU kernel of its matrix products ("openblas
	// 0.3.21 Haswell"; "" when nothing applies): it joins the version, so
	// outputs of one kernel are never reused by a process running another,
	// and the guard test keeps golden outputs per string.
	NumericEnv string
}

// CodeVersion returns the code part of a stage's cache key, readable
// because status prints it when it changes: "v<Version>", then, if the
// stage is GoDependent, the Go version and GOARCH ("go1.26.8/amd64"), then
// its NumericEnv in brackets ("[openblas 0.3.21 Haswell]") when not empty.
//
// Nothing else of the build enters: a rebuild (another commit stamped by
// -buildvcs, a README edit, a change to another stage) leaves the key
// alone. Dependency modules do not enter either: they change only through a
// commit to go.mod, which must pass the guard test (stages
// TestStageVersions) like any other change to a stage's behaviour. The
// toolchain does enter where it matters, since it changes without a commit.
//
// A stage without a Version gets "exe:<sha256 of the running
// executable>": never stale by mistake, but every rebuild reruns it, and
// hashing the executable costs a second per process.
func CodeVersion(stage string, c Code) (string, error) {
	if c.Version == "" {
		return exeVersion()
	}
	if strings.ContainsAny(c.Version, " []") {
		return "", fmt.Errorf("pipeline: stage %s: code version %q: want a version without spaces or brackets", stage, c.Version)
	}
	code := "v" + c.Version
	if c.GoDependent {
		code += " " + runtime.Version() + "/" + runtime.GOARCH
	}
	if c.NumericEnv != "" {
		code += " [" + c.NumericEnv + "]"
	}
	return code, nil
}

var (
	exeOnce sync.Once
	exeSum  string
	exeErr  error
)

func exeVersion() (string, error) {
	exeOnce.Do(func() {
		p, err := os.Executable()
		if err == nil {
			exeSum, err = HashFile(p)
		}
		if err != nil {
			exeErr = fmt.Errorf("pipeline: hashing the executable for the code version: %w", err)
			return
		}
		exeSum = "exe:" + exeSum
	})
	return exeSum, exeErr
}

// notExist reports whether err means a missing file.
func notExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// UnionKeys returns the keys of a and b, sorted, each once.
func UnionKeys[V any](a, b map[string]V) []string {
	keys := slices.AppendSeq(slices.Collect(maps.Keys(a)), maps.Keys(b))
	slices.Sort(keys)
	return slices.Compact(keys)
}

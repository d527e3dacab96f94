package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// A manifest written is read back field for field; a second write into the
// same directory fails instead of replacing the record of a finished stage.
func TestManifestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rows := int64(2)
	m := &Manifest{
		Format: ManifestFormat,
		Inputs: KeyInputs{Stage: "train", Experiment: "a", Code: "v1", Seed: 7, Params: json.RawMessage(`{"k":10}`),
			Files:    []FileHash{{Path: "/raw/meta.txt", SHA256: "ab", Bytes: 3}},
			Upstream: []UpstreamHash{{Stage: "split", Outputs: map[string]string{"train.parquet": "cd"}}}},
		Outputs:  []Output{{Name: "fits.parquet", SHA256: "ef", Bytes: 9, Rows: &rows}, {Name: "sub/x.txt", SHA256: "01", Bytes: 1}},
		Stats:    map[string]any{"auc": 0.75},
		Warnings: []Warning{{Msg: "slow", Attrs: map[string]any{"model": "wnn"}}},
		Seed:     7,
		Config:   map[string]any{"name": "a"},
		Tools:    Tools{Go: "go1", Module: "monomer@(devel)", BLAS: "gonum go"},
		RunID:    "r1",
		Started:  time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		Finished: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC),
		Seconds:  1,
	}
	m.Key = m.Inputs.Key()
	must(t, WriteManifest(dir, m))
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	must(t, err)
	if !strings.HasSuffix(string(b), "}\n") {
		t.Errorf("manifest does not end with one newline: %q", b[max(0, len(b)-8):])
	}
	got, err := ReadManifest(dir)
	must(t, err)
	// JSON gives params back indented; compare them compacted.
	got.Inputs.Params = compactJSON(got.Inputs.Params)
	if !reflect.DeepEqual(got, m) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, m)
	}
	if err := WriteManifest(dir, m); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second write into %s: %v, want it refused", dir, err)
	}
	if _, err := ReadManifest(t.TempDir()); !notExist(err) {
		t.Errorf("missing manifest: %v, want fs.ErrNotExist", err)
	}
	bad := t.TempDir()
	must(t, os.WriteFile(filepath.Join(bad, ManifestName), []byte("{\"format\": 1,"), 0o644))
	if _, err := ReadManifest(bad); err == nil || !strings.Contains(err.Error(), filepath.Join(bad, ManifestName)) {
		t.Errorf("truncated manifest: %v, want an error naming the file", err)
	}
	if got := m.OutputMap(); !reflect.DeepEqual(got, map[string]string{"fits.parquet": "ef", "sub/x.txt": "01"}) {
		t.Errorf("OutputMap %v", got)
	}
	if err := WriteManifest(dir, &Manifest{Config: make(chan int)}); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("unencodable manifest: %v", err)
	}
}

// The key is the sha256 of the canonical JSON of the inputs, raw files by
// content, not location: a raw file moved keeps the key, every other field
// changes it. The JSON is written out: a new derivation reruns every stage
// of every run directory, so it comes with a ManifestFormat bump.
func TestKey(t *testing.T) {
	base := KeyInputs{Stage: "train", Experiment: "a", Code: "v1", Seed: 1, Params: json.RawMessage(`{"k":10}`),
		Files:    []FileHash{{Path: "/data/meta.txt", SHA256: "ab", Bytes: 3}},
		Upstream: []UpstreamHash{{Stage: "split", Outputs: map[string]string{"t.parquet": "cd"}}}}
	canonical := `{"format":1,"stage":"train","experiment":"a","code":"v1","seed":1,"params":{"k":10},` +
		`"files":[{"path":"","sha256":"ab","bytes":3}],"upstream":[{"stage":"split","outputs":{"t.parquet":"cd"}}]}`
	if sum := sha256.Sum256([]byte(canonical)); base.Key() != hex.EncodeToString(sum[:]) {
		t.Errorf("key %s is not the sha256 of %s: a new key derivation needs a ManifestFormat bump", base.Key(), canonical)
	}
	moved := base
	moved.Files = []FileHash{{Path: "/elsewhere/meta.txt", SHA256: "ab", Bytes: 3}}
	if moved.Key() != base.Key() {
		t.Error("moving a raw file changed the key")
	}
	if base.Files[0].Path != "/data/meta.txt" {
		t.Error("Key changed its receiver's files")
	}
	for name, change := range map[string]func(*KeyInputs){
		"stage":      func(k *KeyInputs) { k.Stage = "evaluate" },
		"experiment": func(k *KeyInputs) { k.Experiment = "b" },
		"shard":      func(k *KeyInputs) { k.Shard = "0/2" },
		"part":       func(k *KeyInputs) { k.Part = "p" },
		"code":       func(k *KeyInputs) { k.Code = "v2" },
		"seed":       func(k *KeyInputs) { k.Seed = 2 },
		"params":     func(k *KeyInputs) { k.Params = json.RawMessage(`{"k":11}`) },
		"content":    func(k *KeyInputs) { k.Files = []FileHash{{Path: "/data/meta.txt", SHA256: "ac", Bytes: 3}} },
		"size":       func(k *KeyInputs) { k.Files = []FileHash{{Path: "/data/meta.txt", SHA256: "ab", Bytes: 4}} },
		"upstream": func(k *KeyInputs) {
			k.Upstream = []UpstreamHash{{Stage: "split", Outputs: map[string]string{"t.parquet": "ce"}}}
		},
	} {
		k := base
		change(&k)
		if k.Key() == base.Key() {
			t.Errorf("another %s, same key", name)
		}
	}
}

func TestNormalizeParams(t *testing.T) {
	type inner struct {
		D int     `json:"d"`
		C []int   `json:"c"`
		L float64 `json:"l"`
	}
	got, err := NormalizeParams(map[string]any{"b": 1, "a": inner{D: 2, C: []int{3, 1}, L: 1e-6}})
	must(t, err)
	if want := `{"a":{"c":[3,1],"d":2,"l":0.000001},"b":1}`; string(got) != want {
		t.Errorf("NormalizeParams %s, want %s", got, want)
	}
	if _, err := NormalizeParams(make(chan int)); err == nil {
		t.Error("a channel normalised")
	}
}

// Each reason names what changed, with the old and new value, so that
// status can say why a stage reruns.
func TestStaleReasons(t *testing.T) {
	exe := "exe:" + strings.Repeat("a", 64)
	old := KeyInputs{Stage: "train", Code: exe, Seed: 1,
		Params: json.RawMessage(`{"k":10,"opt":{"lr":0.1,"gone":true},"lambdas":[0]}`),
		Files: []FileHash{{Path: "/d/meta.txt", SHA256: strings.Repeat("1", 64)},
			{Path: "/d/reviews.txt", SHA256: "r"}, {Path: "/d/old.txt", SHA256: "o"}},
		Upstream: []UpstreamHash{{Experiment: "a", Stage: "split", Outputs: map[string]string{"t": "1", "v": "2", "w": "3"}},
			{Experiment: "a", Stage: "negatives", Outputs: map[string]string{"n": "1"}}}}
	now := old
	now.Code = "v1.2.0"
	now.Seed = 2
	now.Params = json.RawMessage(`{"k":20,"opt":{"lr":0.1,"new":1},"lambdas":[0,1]}`)
	now.Files = []FileHash{{Path: "/d/meta.txt", SHA256: strings.Repeat("2", 64)}, {Path: "/d/reviews.txt", SHA256: "r"}}
	now.Upstream = []UpstreamHash{{Experiment: "a", Stage: "split", Outputs: map[string]string{"t": "9", "v": "2", "x": "3"}},
		{Experiment: "a", Stage: "negatives", Outputs: map[string]string{"n": "1"}},
		{Experiment: "b", Stage: "split", Outputs: map[string]string{"t": "1"}}}
	want := []string{
		`code version changed (exe:aaaaaaaa -> "v1.2.0")`,
		"seed changed (1 -> 2)",
		"param k changed (10 -> 20)",
		"param lambdas changed ([0] -> [0,1])",
		"param opt.gone changed (true -> (unset))",
		"param opt.new changed ((unset) -> 1)",
		"input meta.txt changed (content 111111111111 -> 222222222222)",
		"input old.txt no longer read",
		"upstream a/split outputs changed (t, w, x)",
		"new upstream b/split",
	}
	if got := StaleReasons(old, now); !slices.Equal(got, want) {
		t.Errorf("reasons\n%q\nwant\n%q", got, want)
	}
	// Within an experiment, upstream stages go by their name alone; a new
	// input file is named.
	old.Experiment, now.Experiment = "a", "a"
	now.Code, now.Seed, now.Params, now.Upstream = old.Code, old.Seed, old.Params, old.Upstream[:1]
	now.Upstream = append(slices.Clone(now.Upstream), UpstreamHash{Experiment: "a", Stage: "train", Outputs: map[string]string{"f": "1"}})
	now.Files = append(slices.Clone(old.Files), FileHash{Path: "/d/extra.txt", SHA256: "e"})
	want = []string{"new input extra.txt", "new upstream train"}
	if got := StaleReasons(old, now); !slices.Equal(got, want) {
		t.Errorf("reasons %q, want %q", got, want)
	}
	// Params that are not an object, or that differ only in form.
	if got := StaleReasons(KeyInputs{Params: json.RawMessage(`3`)}, KeyInputs{Params: json.RawMessage(`4`)}); !slices.Equal(got, []string{"params changed (3 -> 4)"}) {
		t.Errorf("scalar params: %q", got)
	}
	if got := StaleReasons(KeyInputs{Params: json.RawMessage(`{"a":1,"b":2}`)}, KeyInputs{Params: json.RawMessage(`{"b":2,"a":1}`)}); !slices.Equal(got, []string{"params changed"}) {
		t.Errorf("params in another key order: %q", got)
	}
	// An empty object is a value of its own, not an absent one.
	if got := StaleReasons(KeyInputs{Params: json.RawMessage(`{"o":{}}`)}, KeyInputs{Params: json.RawMessage(`{"o":1}`)}); !slices.Equal(got, []string{"param o changed ({} -> 1)"}) {
		t.Errorf("empty object param: %q", got)
	}
	// Nothing the reasons look at changed, but the key did.
	if got := StaleReasons(KeyInputs{Shard: "0/2"}, KeyInputs{Shard: "1/2"}); !slices.Equal(got, []string{"cache key format changed"}) {
		t.Errorf("shard only: %q", got)
	}
	if got := StaleReasons(old, old); len(got) != 0 {
		t.Errorf("unchanged inputs: %q", got)
	}
}

func TestShortAndNames(t *testing.T) {
	for in, want := range map[string]string{"": `""`, "abc": "abc", "123456789012": "123456789012", "1234567890123": "123456789012"} {
		if got := Short(in); got != want {
			t.Errorf("Short(%q) = %q, want %q", in, got, want)
		}
	}
	a := map[string]string{"same": "1", "changed": "1", "gone": "1"}
	b := map[string]string{"same": "1", "changed": "2", "added": "1"}
	if got := ChangedNames(a, b); got != "added, changed, gone" {
		t.Errorf("ChangedNames %q", got)
	}
	if got := UnionKeys(a, b); !slices.Equal(got, []string{"added", "changed", "gone", "same"}) {
		t.Errorf("UnionKeys %q", got)
	}
}

// The toolchain and a numeric environment join the code version only of
// the stages that declare they depend on them.
func TestCodeVersionParts(t *testing.T) {
	goVer := runtime.Version() + "/" + runtime.GOARCH
	tests := []struct {
		name string
		code Code
		want string
	}{
		{"version only", Code{Version: "1.2.0"}, "v1.2.0"},
		{"go dependent", Code{Version: "1.2.0", GoDependent: true}, "v1.2.0 " + goVer},
		{"numeric", Code{Version: "1.2.0", GoDependent: true, NumericEnv: "openblas 0.3.21 Haswell"}, "v1.2.0 " + goVer + " [openblas 0.3.21 Haswell]"},
		{"numeric, go independent", Code{Version: "1.2.0", NumericEnv: "openblas 0.3.21 Haswell"}, "v1.2.0 [openblas 0.3.21 Haswell]"},
	}
	for _, tc := range tests {
		got, err := CodeVersion("train", tc.code)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	for _, bad := range []string{"1.0 beta", "[1]", "1]"} {
		if _, err := CodeVersion("x", Code{Version: bad}); err == nil {
			t.Errorf("version %q accepted", bad)
		}
	}
	// No version: the executable's hash, so a rebuild reruns the stage.
	exe, err := os.Executable()
	must(t, err)
	sum, err := HashFile(exe)
	must(t, err)
	if got, err := CodeVersion("x", Code{GoDependent: true}); err != nil || got != "exe:"+sum {
		t.Errorf("unversioned: %q, %v; want exe:%s", got, err, sum)
	}
}

func TestVersion(t *testing.T) {
	v := Version()
	if !strings.HasSuffix(v, " "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH) || strings.HasPrefix(v, " ") {
		t.Errorf("Version %q", v)
	}
	if tv := ToolVersions(); tv.Go != runtime.Version() || !strings.HasPrefix(tv.Module, "monomer@") {
		t.Errorf("ToolVersions %+v", tv)
	}
}

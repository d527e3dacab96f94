package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"monomer/schema"
	"monomer/stages"
)

// servingVenv is the environment of the serving round trip (make
// serving-venv), MONOMER_SERVING_VENV if set.
func servingVenv() string {
	if v := os.Getenv("MONOMER_SERVING_VENV"); v != "" {
		return v
	}
	v, _ := filepath.Abs("../../.venv-serving")
	return v
}

// TestExport exports LMT and Monomer from a demo run (both experiments,
// with publish blocks so that every item has a published list), and the
// image experiment's WNN, and checks:
// the refusals; model.json; that the run is only read; that the exported
// vectors give the recommend table's distances; and, in the serving
// environment (tests/serving), that FAISS's exact inner-product search of
// the vectors returns monomer's published and recommended lists
// (tests/serving/roundtrip.py). Without that environment the FAISS part
// prints a skip line, unless MONOMER_SERVING_REQUIRED=1 (make
// test-serving) makes it a failure.
func TestExport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo job")
	}
	dir, args := demo(t)
	const img, bow = "men-also_bought-image", "men-also_bought-bow"
	args = append(args, "--run-dir", "run",
		"--set", "experiments."+img+".publish.model=monomer", "--set", "experiments."+bow+".publish.model=lmt")
	realRun(t, dir, nil, args...)
	run := filepath.Join(dir, "run")
	before := tree(t, run)

	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"wnn", []string{"--experiment", img, "--model", "wnn", "--out", "x"}, exitUsage, "its item side is the features themselves (feature dimension + 1 floats an item, 4,097 for image features); export writes them with --wnn-features"},
		{"lda", []string{"--experiment", bow, "--model", "lda", "--out", "x"}, exitUsage, "topic proportions"},
		{"ct", []string{"--experiment", img, "--model", "ct", "--out", "x"}, exitUsage, "export writes lmt or monomer"},
		{"no out", []string{"--experiment", img}, exitUsage, "export needs --out"},
		{"unknown experiment", []string{"--experiment", "nope", "--out", "x"}, exitUsage, `unknown experiment "nope"`},
		{"not empty", []string{"--experiment", img, "--out", "."}, exitUsage, "is not empty"},
	} {
		r := monomer(t, dir, "real", nil, append([]string{"export", "run"}, tc.args...)...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and one line with %q", tc.name, r.code, r.stderr, tc.code, tc.msg)
		}
	}
	if fileExists(filepath.Join(dir, "x")) {
		t.Error("a refused export created its directory")
	}

	type exp struct{ exp, model, kind string }
	exports := []exp{{img, "monomer", "image"}, {img, "lmt", "image"}, {bow, "lmt", "bow"}, {bow, "monomer", "bow"}, {img, "wnn", "image"}}
	out := func(e exp) string { return filepath.Join(dir, "export-"+e.exp+"-"+e.model) }
	for _, e := range exports {
		a := []string{"export", "run", "--experiment", e.exp, "--model", e.model, "--out", out(e)}
		if e.model == "wnn" {
			a = append(a, "--wnn-features")
		}
		if e.exp == img && e.model == "lmt" {
			// An empty directory is filled (renamed over).
			if err := os.Mkdir(out(e), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		r := monomer(t, dir, "real", nil, a...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "exported "+e.model+" of "+e.exp) {
			t.Fatalf("export %s %s: exit %d\n%s%s", e.exp, e.model, r.code, r.stdout, r.stderr)
		}
		var m stages.ExportModel
		b, err := os.ReadFile(filepath.Join(out(e), stages.ExportModelFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		dim := max(m.N, 1) * (m.K + 1)
		if e.model == "wnn" {
			dim = m.FeatureDimension + 1
		}
		if m.Model != e.model || m.Experiment != e.exp || m.Features != e.kind || m.Metric != "inner_product" ||
			m.Dimension != dim || (e.model == "monomer") != (m.N == 4) || m.K != map[string]int{"lmt": 40, "monomer": 8}[e.model] ||
			m.TrainCodeVersion != (stages.Train{}).Version() || m.FeaturesCodeVersion != (stages.Features{}).Version() ||
			!strings.HasPrefix(m.TrainCode, "v"+m.TrainCodeVersion+" ") || m.MonomerVersion != versionLine() ||
			(e.kind == "bow") != (m.Vocabulary != "") || math.IsNaN(m.C) || m.C == 0 {
			t.Errorf("%s %s: model.json %s", e.exp, e.model, b)
		}
		// The vectors give the recommend stage's distances: d = c_x − q·v.
		v, err := schema.ReadAll[schema.ExportVectorsCols](t.Context(), filepath.Join(out(e), stages.ExportVectorsFile))
		if err != nil {
			t.Fatal(err)
		}
		if len(v.ID) != m.Items || len(v.QueryVector[0]) != m.Dimension {
			t.Fatalf("%s %s: %d rows of %d, model.json: %d of %d", e.exp, e.model, len(v.ID), len(v.QueryVector[0]), m.Items, m.Dimension)
		}
		row := map[string]int{}
		for i, id := range v.ID {
			row[id] = i
		}
		rec, err := schema.ReadAll[schema.RecommendationsCols](t.Context(), filepath.Join(run, e.exp, "recommend", "recommendations.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for i, model := range rec.Model {
			if model != e.model {
				continue
			}
			x, y := row[rec.Query[i]], row[rec.Item[i]]
			var ip, mag float64
			for j, q := range v.QueryVector[x] {
				ip += float64(q) * float64(v.ItemVector[y][j])
				mag += math.Abs(float64(q) * float64(v.ItemVector[y][j]))
			}
			// float32 rounding of q and v: 2u a term (tests/serving, NEAR_TIE).
			got, tol := v.QueryOffset[x]-ip, 4*math.Pow(2, -24)*(mag+v.QueryOffset[x])
			if math.Abs(got-rec.Distance[i]) > tol {
				t.Fatalf("%s %s: %s → %s: c_x − q·v = %.9g, recommend's distance %.9g (tolerance %.2g)", e.exp, e.model, rec.Query[i], rec.Item[i], got, rec.Distance[i], tol)
			}
			checked++
		}
		if checked < 1000 {
			t.Errorf("%s %s: %d recommendations checked", e.exp, e.model, checked)
		}
	}
	if after := tree(t, run); after != before {
		t.Error("export changed the run directory")
	}

	t.Run("score_model_dir", func(t *testing.T) {
		// The demo's items scored from each export and from the run: the
		// same recommendations.parquet, byte for byte.
		data := filepath.Join(dir, "amazon")
		for i, e := range exports[:4] {
			feat := []string{"--text", filepath.Join(data, "reviews_Demo.json.gz")}
			if e.kind == "image" {
				feat = []string{"--image-features", filepath.Join(data, "image_features_Demo.b")}
			}
			common := append([]string{"--items", filepath.Join(data, "meta_Demo.json.gz")}, feat...)
			a, b := fmt.Sprintf("scored-run-%d", i), fmt.Sprintf("scored-export-%d", i)
			r := monomer(t, dir, "real", nil, append([]string{"score", "run", "--experiment", e.exp, "--model", e.model, "--out", a}, common...)...)
			if r.code != 0 {
				t.Fatalf("score run %s %s: exit %d\n%s", e.exp, e.model, r.code, r.stderr)
			}
			r = monomer(t, dir, "real", nil, append([]string{"score", "--model-dir", out(e), "--out", b}, common...)...)
			if r.code != 0 || !strings.HasPrefix(r.stdout, e.model+": ") {
				t.Fatalf("score --model-dir %s: exit %d\n%s%s", out(e), r.code, r.stdout, r.stderr)
			}
			want, err := os.ReadFile(filepath.Join(dir, a, "recommendations.parquet"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, b, "recommendations.parquet"))
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 || string(got) != string(want) {
				t.Errorf("%s %s: recommendations.parquet from the export (%d bytes) is not the run's (%d bytes)", e.exp, e.model, len(got), len(want))
			}
		}
		// A file changed after the export is refused with one line, exit 3.
		e := exports[0]
		m := filepath.Join(out(e), "score", "features", "feature_items.parquet")
		orig, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		bad := append([]byte{}, orig...)
		bad[len(bad)/2] ^= 0xff
		write(t, m, string(bad))
		defer write(t, m, string(orig))
		r := monomer(t, dir, "real", nil, "score", "--model-dir", out(e), "--items", filepath.Join(data, "meta_Demo.json.gz"),
			"--image-features", filepath.Join(data, "image_features_Demo.b"), "--out", "scored-bad")
		if r.code != 3 || !strings.Contains(r.stderr, "feature_items.parquet: sha256 ") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("tampered export: exit %d, stderr %q; want 3 and one line naming the file", r.code, r.stderr)
		}
		if fileExists(filepath.Join(dir, "scored-bad")) {
			t.Error("a refused score created its directory")
		}
	})

	t.Run("faiss", func(t *testing.T) {
		py := filepath.Join(servingVenv(), "bin", "python")
		if err := exec.Command(py, "-c", "import faiss, pyarrow, numpy").Run(); err != nil {
			msg := fmt.Sprintf("SKIP: the FAISS round trip (tests/serving) needs faiss-cpu, pyarrow and numpy in %s (%v); make serving-venv creates it", servingVenv(), err)
			if os.Getenv("MONOMER_SERVING_REQUIRED") == "1" {
				t.Fatalf("%s (MONOMER_SERVING_REQUIRED=1: not skipping)", msg)
			}
			fmt.Println(msg)
			t.Skip(msg)
		}
		script, _ := filepath.Abs("../../tests/serving/roundtrip.py")
		cases := []string{
			out(exports[0]) + "=" + filepath.Join(run, img, "publish", "recommendations.parquet"),
			out(exports[2]) + "=" + filepath.Join(run, bow, "publish", "recommendations.parquet"),
		}
		for _, e := range exports {
			cases = append(cases, out(e)+"="+filepath.Join(run, e.exp, "recommend", "recommendations.parquet")+":"+e.model)
		}
		cmd := exec.Command(py, append([]string{script}, cases...)...)
		b, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("roundtrip.py: %v\n%s%s", err, b, stderr)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != len(cases) {
			t.Fatalf("roundtrip.py: %d lines for %d cases:\n%s", len(lines), len(cases), b)
		}
		for i, l := range lines {
			var f map[string]any
			if err := json.Unmarshal([]byte(l), &f); err != nil {
				t.Fatal(err)
			}
			// The publish tables list every item with features.
			if i < 2 && f["queries"] != f["items"] {
				t.Errorf("case %s: %v queries of %v items", cases[i], f["queries"], f["items"])
			}
			t.Logf("%s", l)
		}
		// A list that is not the export's model's fails, naming the query.
		wrong := out(exports[2]) + "=" + filepath.Join(run, bow, "recommend", "recommendations.parquet") + ":monomer"
		b, err = exec.Command(py, script, wrong).CombinedOutput()
		if err == nil || !strings.Contains(string(b), "more than the float32 near-tie bound") {
			t.Errorf("roundtrip.py of LMT's vectors against Monomer's lists: %v\n%s", err, b)
		}
	})
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffUnreadable: diff exits 2 and names the file when it cannot read a
// table or manifest (exit 1 would claim the runs differ), 1 when they differ.
func TestDiffUnreadable(t *testing.T) {
	dir := jobDir(t)
	for _, id := range []string{"1", "2"} {
		if r := monomer(t, dir, "fake", nil, "run", "job.yaml", "--run-dir", "out", "--run-id", id); r.code != 0 {
			t.Fatal(r.stderr)
		}
	}
	table := filepath.Join("out", "2", "b", "train", "out.parquet")
	write(t, filepath.Join(dir, table), "PAR1 not a table")
	r := monomer(t, dir, "fake", nil, "diff", "out/1", "out/2")
	if r.code != 2 || !strings.Contains(r.stderr, "monomer: pipeline: diff: cannot read table: ") || !strings.Contains(r.stderr, table) {
		t.Errorf("unreadable table: exit %d, stderr %q", r.code, r.stderr)
	}
	write(t, filepath.Join(dir, table), "")
	// (an empty file is unreadable too, whatever the other side holds)
	if r := monomer(t, dir, "fake", nil, "diff", "out/2", "out/1"); r.code != 2 {
		t.Errorf("empty table: exit %d, stderr %q", r.code, r.stderr)
	}

	// Both tables fine again, a manifest broken.
	if r := monomer(t, dir, "fake", nil, "run", "job.yaml", "--run-dir", "out", "--run-id", "2"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	manifest := filepath.Join("out", "1", "a", "ingest", "manifest.json")
	write(t, filepath.Join(dir, manifest), "{")
	r = monomer(t, dir, "fake", nil, "diff", "out/1", "out/2")
	if r.code != 2 || !strings.Contains(r.stderr, "cannot read manifest: ") || !strings.Contains(r.stderr, manifest) {
		t.Errorf("unreadable manifest: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestStatusCheck: status --check exits 1 while any selected stage is stale
// or missing and 0 once all are up to date; plain status exits 0 always.
// While a run holds the directory, status says who.
func TestStatusCheck(t *testing.T) {
	dir := jobDir(t)
	stale := []string{"--set", "experiments.b.settings.k=7"}
	steps := []struct {
		name  string
		run   bool // run the job (with args) first
		args  []string
		check int // exit of status --check
	}{
		{name: "fresh directory: all missing", check: 1},
		{name: "after a run: up to date", run: true},
		{name: "a changed setting: stale", args: stale, check: 1},
		{name: "after rerunning: up to date", run: true, args: stale},
	}
	for _, s := range steps {
		if s.run {
			if r := monomer(t, dir, "fake", nil, append([]string{"run", "job.yaml"}, s.args...)...); r.code != 0 {
				t.Fatalf("%s: run: %s", s.name, r.stderr)
			}
		}
		plain := monomer(t, dir, "fake", nil, append([]string{"status", "job.yaml"}, s.args...)...)
		check := monomer(t, dir, "fake", nil, append([]string{"status", "job.yaml", "--check"}, s.args...)...)
		if plain.code != 0 || check.code != s.check || check.stdout != plain.stdout {
			t.Errorf("%s: status exit %d, --check exit %d (want %d)\n%s%s", s.name, plain.code, check.code, s.check, check.stdout, check.stderr)
		}
		if s.check == 1 && !strings.Contains(check.stderr, "monomer: stages not up to date: ") {
			t.Errorf("%s: --check stderr %q", s.name, check.stderr)
		}
	}

	cmd := startRun(t, dir, "train", "--force")
	r := monomer(t, dir, "fake", nil, "status", "job.yaml")
	want := fmt.Sprintf("locked: a run holds %s now: pid %d started ", filepath.Join("runs", "cmdtest"), cmd.Process.Pid)
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("status during a run: exit %d\n%s\nwant a line starting %q", r.code, r.stdout, want)
	}
}

// TestStatusRestored: status says which stages a run restored from the
// store (from their manifests) and which a run would restore, as the
// docs/running.md's store section says.
func TestStatusRestored(t *testing.T) {
	dir := jobDir(t)
	for _, id := range []string{"1", "2"} {
		if r := monomer(t, dir, "fake", nil, "run", "job.yaml", "--run-dir", "out", "--run-id", id); r.code != 0 {
			t.Fatal(r.stderr)
		}
	}
	status := func(id string) string {
		r := monomer(t, dir, "fake", nil, "status", "job.yaml", "--run-dir", "out", "--run-id", id)
		if r.code != 0 {
			t.Fatalf("status: %d %s", r.code, r.stderr)
		}
		return r.stdout
	}
	if got := status("1"); strings.Contains(got, "store") {
		t.Errorf("the computing run:\n%s", got)
	}
	want := `a/ingest  up to date (restored from the store)
a/train   up to date (restored from the store)
b/ingest  up to date (restored from the store)
b/train   up to date (restored from the store)
report    up to date (restored from the store)
`
	if got := status("2"); got != want {
		t.Errorf("the restored run:\n%s\nwant\n%s", got, want)
	}
	if got := status("3"); !strings.HasPrefix(got, "a/ingest  missing (a run restores it from the store)\n") {
		t.Errorf("a fresh run id:\n%s", got)
	}
	// What jobs/cron.example says of a per-day --run-id: a new one restores
	// every stage, --force recomputes them.
	for _, tc := range []struct {
		args          []string
		run, restored float64
	}{{nil, 0, 5}, {[]string{"--force"}, 5, 0}} {
		id := fmt.Sprintf("day%d", int(tc.run))
		r := monomer(t, dir, "fake", nil, append([]string{"run", "job.yaml", "--run-dir", "out", "--run-id", id}, tc.args...)...)
		l := logLines(t, r.stderr)
		if last := l[len(l)-1]; r.code != 0 || last["stages_run"] != tc.run || last["stages_restored"] != tc.restored {
			t.Errorf("run %v: exit %d, summary %v, want %v run and %v restored", tc.args, r.code, last, tc.run, tc.restored)
		}
	}
}

// TestDryRunExitsLikeRun: run --dry-run exits with the code run exits with
// for the same invalid job (a scheduler's retry rule reads the code).
func TestDryRunExitsLikeRun(t *testing.T) {
	fakeDir := jobDir(t)
	realDir, realArgs := demo(t)
	tests := []struct {
		name, dir, mode string
		args            []string
	}{
		{"missing input", fakeDir, "fake", []string{"job.yaml", "--set", "data.meta=gone.txt", "--run-id", "x"}},
		{"missing upstream", fakeDir, "fake", []string{"job.yaml", "--only", "train", "--run-id", "fresh"}},
		{"too large to train", realDir, "real", append(realArgs, "--set", "settings.monomer_k=4096", "--set", "settings.n=1000")},
		// A run checks every stage's pre-flight before running any.
		{"too large to train and an input missing", realDir, "real", append(realArgs, "--set", "settings.monomer_k=4096", "--set", "settings.n=1000",
			"--set", "data.meta=gone.json.gz")},
		// Refused before any stage is looked at, by both.
		{"run directory a file", fakeDir, "fake", []string{"job.yaml", "--run-dir", "job.yaml"}},
	}
	for _, tc := range tests {
		dry := monomer(t, tc.dir, tc.mode, nil, append([]string{"run", "--dry-run"}, tc.args...)...)
		run := monomer(t, tc.dir, tc.mode, nil, append([]string{"run"}, tc.args...)...)
		if run.code == 0 || dry.code != run.code || !strings.Contains(dry.stderr, "monomer: ") || strings.Count(dry.stderr, "\n") != 1 {
			t.Errorf("%s: dry run exit %d, run exit %d\ndry run: %s\nrun: %s", tc.name, dry.code, run.code, dry.stderr, run.stderr)
		}
	}
}

// TestCommandLinePaths: a relative data_dir given with --set or
// MONOMER_DATA_DIR, like --run-dir, is relative to the working directory;
// one written in the job file, to the job file's folder.
func TestCommandLinePaths(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "jobs"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, "data"), 0o755))
	write(t, filepath.Join(dir, "jobs", "job.yaml"), cmdJob)
	write(t, filepath.Join(dir, "jobs", "in-file.yaml"), strings.Replace(cmdJob, "name: cmdtest", "name: cmdtest\ndata_dir: ../data", 1))
	write(t, filepath.Join(dir, "data", "meta.txt"), "raw\n")
	tests := []struct {
		name string
		env  []string
		args []string
	}{
		{"--set", nil, []string{"jobs/job.yaml", "--set", "data_dir=data", "--run-dir", "out1"}},
		{"environment", []string{"MONOMER_DATA_DIR=data"}, []string{"jobs/job.yaml", "--run-dir", "out2"}},
		{"job file", nil, []string{"jobs/in-file.yaml", "--run-dir", "out3"}},
	}
	for i, tc := range tests {
		r := monomer(t, dir, "fake", tc.env, append([]string{"run"}, tc.args...)...)
		if r.code != 0 || !fileExists(filepath.Join(dir, fmt.Sprintf("out%d", i+1), "a", "ingest", "manifest.json")) {
			t.Errorf("%s: exit %d\n%s", tc.name, r.code, r.stderr)
		}
	}
}

// TestReportLine: run names the report's page only when the report is
// current after it; after --only or --experiment the page there may be an
// old one. (The fake report writes no page: the test puts one in its
// directory, which a rerun of the report replaces.)
func TestReportLine(t *testing.T) {
	dir := jobDir(t)
	page := filepath.Join(dir, "out", "report", "index.html")
	for i, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"--set", "settings.k=2"}, false}, // no page yet
		{[]string{"--set", "settings.k=3", "--only", "train"}, false},
		{[]string{"--set", "settings.k=3", "--experiment", "a"}, false},
		{[]string{"--set", "settings.k=3"}, false}, // the report reran: no page
		{[]string{"--set", "settings.k=3"}, true},  // up to date, with a page
	} {
		r := monomer(t, dir, "fake", nil, append([]string{"run", "job.yaml", "--run-dir", "out"}, tc.args...)...)
		if r.code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, r.code, r.stderr)
		}
		if got := strings.Contains(r.stdout, "report: "+page); got != tc.want || strings.Contains(r.stdout, "report:") != got {
			t.Errorf("run %d %v: report line %v, want %v: %q", i, tc.args, got, tc.want, r.stdout)
		}
		if _, err := os.Stat(page); err != nil {
			write(t, page, "<html></html>\n")
		}
	}
}

// TestEnvNearMissWarned: a misspelt MONOMER_ variable is named, with the
// one meant, in the dry run's output, the run's log and on the stderr of
// status, verify and plan (which said nothing); the run goes on (other
// tools' MONOMER_ variables share the environment). MONOMER_SETTINGS_K,
// "_" for "__", was not warned of at all (H9).
func TestEnvNearMissWarned(t *testing.T) {
	dir := jobDir(t)
	env := []string{"MONOMER_SEDD=3", "MONOMER_DAG_BIN=/x", "MONOMER_SETTINGS_K=5"}
	const warned = "monomer: warning: MONOMER_SEDD is not read by monomer; did you mean MONOMER_SEED?\n" +
		"monomer: warning: MONOMER_SETTINGS_K is not read by monomer; did you mean MONOMER_SETTINGS__K?\n"
	dry := monomer(t, dir, "fake", env, "run", "job.yaml", "--dry-run")
	if dry.code != 0 || dry.stderr != warned {
		t.Errorf("dry run: exit %d, stderr %q", dry.code, dry.stderr)
	}
	r := monomer(t, dir, "fake", env, "run", "job.yaml")
	if r.code != 0 || !strings.Contains(r.stderr, `"variable":"MONOMER_SEDD","did_you_mean":"MONOMER_SEED"`) ||
		!strings.Contains(r.stderr, `"variable":"MONOMER_SETTINGS_K","did_you_mean":"MONOMER_SETTINGS__K"`) || strings.Contains(r.stderr, "MONOMER_DAG_BIN") {
		t.Errorf("run: exit %d, stderr %s", r.code, r.stderr)
	}
	for _, cmd := range []string{"status", "verify", "plan"} {
		if r := monomer(t, dir, "fake", env, cmd, "job.yaml"); r.code != 0 || !strings.HasPrefix(r.stderr, warned) {
			t.Errorf("%s: exit %d, stderr %q", cmd, r.code, r.stderr)
		}
	}
}

// TestMissingInputNearFile: a missing data file whose folder holds one of
// nearly its name names that file; the exit code stays 5 (the file meant
// may be another, still to arrive).
func TestMissingInputNearFile(t *testing.T) {
	dir := jobDir(t) // holds meta.txt
	for meta, want := range map[string]string{
		"Meta.txt":  "meta.txt",
		"meta.tx":   "meta.txt",
		"meta":      "meta.txt", // the name with a suffix
		"other.csv": "",
	} {
		r := monomer(t, dir, "fake", nil, "run", "job.yaml", "--dry-run", "--set", "data.meta="+meta)
		hint := fmt.Sprintf("%s is missing but %s is there: did you mean it?", filepath.Join(dir, meta), want)
		if r.code != 5 || strings.Contains(r.stderr, hint) != (want != "") || want == "" && strings.Contains(r.stderr, "did you mean") {
			t.Errorf("data.meta=%s: exit %d, stderr %q; want the hint %v", meta, r.code, r.stderr, want != "")
		}
	}
}

// TestMissingTableNearFile: the near-name hint covers a catalogue's tables
// and the embeddings file (it named the release's files only), and two
// edits are not a slip: meta_Women is another category, not meta_Men
// misspelt.
func TestMissingTableNearFile(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"Items.csv", "relations.csv.gz", "txet.csv", "Emb.parquet", "meta_Women.json.gz"} {
		write(t, filepath.Join(dir, f), "x\n")
	}
	write(t, filepath.Join(dir, "shop.yaml"), `name: shop
data: {format: catalogue, items: items.csv, relations: relations.csv, text: text.csv, embeddings: emb.parquet}
experiments:
  - {name: e, category: "Shop", graph: bought_with, features: embeddings}
  - {name: b, category: "Shop", graph: bought_with, features: bow}
`)
	r := monomer(t, dir, "real", nil, "run", "shop.yaml", "--dry-run")
	for missing, there := range map[string]string{"items.csv": "Items.csv", "relations.csv": "relations.csv.gz", "text.csv": "txet.csv", "emb.parquet": "Emb.parquet"} {
		hint := fmt.Sprintf("%s is missing but %s is there: did you mean it?", filepath.Join(dir, missing), there)
		if r.code != exitInputMissing || !strings.Contains(r.stderr, hint) {
			t.Errorf("%s: exit %d, no hint %q in %s", missing, r.code, hint, r.stderr)
		}
	}
	write(t, filepath.Join(dir, "men.yaml"), strings.ReplaceAll(cmdJob, "meta.txt", "meta_Men.json.gz"))
	if r := monomer(t, dir, "fake", nil, "run", "men.yaml", "--dry-run"); r.code != exitInputMissing || strings.Contains(r.stderr, "did you mean") {
		t.Errorf("meta_Men: exit %d, stderr %s", r.code, r.stderr)
	}
}

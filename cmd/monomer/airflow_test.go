package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAirflowDAG runs jobs/airflow/test_monomer_dag.py: the DAG file,
// loaded against stand-in airflow modules with this binary as monomer, has
// the tasks and dependencies of `monomer plan --json` (bag-of-words shards
// included), runs plan once per parse, and fails exits 2 and 3 without
// retrying.
func TestAirflowDAG(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the Airflow DAG (jobs/airflow/test_monomer_dag.py) is not tested")
	}
	dag, _ := filepath.Abs("../../jobs/airflow/monomer_dag.py")
	if out, err := exec.Command(py, "-m", "py_compile", dag).CombinedOutput(); err != nil {
		t.Fatalf("py_compile: %v\n%s", err, out)
	}
	demoJob, err := os.ReadFile("../../jobs/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := filepath.Abs("../../testdata/amazon")
	src := strings.Replace(string(demoJob), "data_dir: ../testdata/amazon", "data_dir: "+data, 1)
	src = strings.Replace(src, "models: [wnn, ct, lda, lmt, monomer]", "models: [wnn, ct, lda, lmt, monomer]\n    settings: {vocab_shards: 2}", 1)
	if !strings.Contains(src, "vocab_shards: 2") {
		t.Fatal("jobs/demo.yaml changed shape: no bag-of-words experiment to shard")
	}
	dir := t.TempDir()
	jobFile := filepath.Join(dir, "job.yaml")
	write(t, jobFile, src)
	bin := filepath.Join(dir, "monomer")
	write(t, bin, fmt.Sprintf("#!/bin/sh\nGO_MONOMER_MAIN=real exec %q \"$@\"\n", os.Args[0]))
	os.Chmod(bin, 0o755)
	test, _ := filepath.Abs("../../jobs/airflow/test_monomer_dag.py")
	cmd := exec.Command(py, test, "-v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MONOMER_DAG_BIN="+bin, "MONOMER_DAG_JOB="+jobFile, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Ran 4 tests") {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
}

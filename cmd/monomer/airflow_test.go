package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// airflowVenv is the virtual environment of the Airflow tests: the one
// `make test-airflow` creates, or MONOMER_AIRFLOW_VENV.
func airflowVenv() string {
	if v := os.Getenv("MONOMER_AIRFLOW_VENV"); v != "" {
		return v
	}
	v, _ := filepath.Abs("../../.venv-airflow")
	return v
}

// TestAirflowDAG runs the Airflow tests (jobs/airflow: pytest under real
// Apache Airflow 3) with MONOMER_DAG_BIN as monomer, or this test binary
// when unset. Without their virtual environment it prints a skip line and
// skips, unless MONOMER_AIRFLOW_REQUIRED=1 (make test-airflow, .ci/run)
// makes that a failure.
func TestAirflowDAG(t *testing.T) {
	py := filepath.Join(airflowVenv(), "bin", "python")
	if _, err := os.Stat(py); err != nil {
		msg := fmt.Sprintf("SKIP: the Airflow tests (jobs/airflow) need %s; make test-airflow creates it", airflowVenv())
		if os.Getenv("MONOMER_AIRFLOW_REQUIRED") == "1" {
			t.Fatalf("%s (MONOMER_AIRFLOW_REQUIRED=1: not skipping)", msg)
		}
		fmt.Println(msg)
		t.Skip(msg)
	}
	bin := os.Getenv("MONOMER_DAG_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "monomer")
		write(t, bin, fmt.Sprintf("#!/bin/sh\nGO_MONOMER_MAIN=real exec %q \"$@\"\n", os.Args[0]))
		if err := os.Chmod(bin, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir, _ := filepath.Abs("../../jobs/airflow")
	cmd := exec.Command(py, "-m", "pytest", "-p", "no:cacheprovider", "-q", dir)
	cmd.Env = append(os.Environ(), "MONOMER_DAG_BIN="+bin, "PYTHONDONTWRITEBYTECODE=1")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pytest %s: %v", dir, err)
	}
}

// TestAirflowSkipLine: without the virtual environment TestAirflowDAG says
// plainly that it skipped, and fails when MONOMER_AIRFLOW_REQUIRED=1.
func TestAirflowSkipLine(t *testing.T) {
	if os.Getenv("MONOMER_AIRFLOW_VENV") != "" {
		t.Skip("run by TestAirflowSkipLine itself")
	}
	run := func(env ...string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestAirflowDAG$", "-test.v")
		cmd.Env = append(os.Environ(), append([]string{"MONOMER_AIRFLOW_VENV=" + filepath.Join(t.TempDir(), "none")}, env...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("MONOMER_AIRFLOW_REQUIRED=")
	if err != nil || !strings.Contains(out, "SKIP: the Airflow tests (jobs/airflow) need") || !strings.Contains(out, "--- SKIP: TestAirflowDAG") {
		t.Errorf("without the venv: %v\n%s", err, out)
	}
	out, err = run("MONOMER_AIRFLOW_REQUIRED=1")
	if err == nil || !strings.Contains(out, "--- FAIL: TestAirflowDAG") {
		t.Errorf("without the venv, MONOMER_AIRFLOW_REQUIRED=1: want a failure, got %v\n%s", err, out)
	}
}

package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// withoutRun drops the job and run ID every JSON log line carries, for
// tests matching the attributes after them.
func withoutRun(log string) string {
	return regexp.MustCompile(`"job":"[^"]*","run_id":"[^"]*",`).ReplaceAllString(log, "")
}

// Every JSON log line names the job and the run: the run ID given, or one
// generated; the summary counts stages under names that say so.
func TestLogLinesNameJobAndRun(t *testing.T) {
	f := newFixture(t)
	for _, id := range []string{"2026-11-24", ""} {
		var logs bytes.Buffer
		sum, _, err := f.run(t, Options{Logger: NewLogger(&logs, false), RunID: id, Force: true})
		must(t, err)
		if id == "" && !regexp.MustCompile(`^\d{8}T\d{6}Z-\d+$`).MatchString(sum.RunID) {
			t.Errorf("generated run ID %q", sum.RunID)
		}
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		for _, l := range lines {
			var rec map[string]any
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Fatalf("%v: %s", err, l)
			}
			if rec["job"] != "fake" || rec["run_id"] != sum.RunID || (id != "" && sum.RunID != id) {
				t.Errorf("run %q: line without the job and run ID %q: %s", id, sum.RunID, l)
			}
		}
		if !strings.Contains(lines[len(lines)-1], `"msg":"run summary","job":"fake","run_id":"`+sum.RunID+`","stages_run":13,`) {
			t.Errorf("summary: %s", lines[len(lines)-1])
		}
	}
	// A terminal shows one run: the text lines leave both out.
	var text bytes.Buffer
	_, _, err := f.run(t, Options{Logger: NewLogger(&text, true), RunID: "x"})
	must(t, err)
	if strings.Contains(text.String(), "run_id") || strings.Contains(text.String(), "job=") {
		t.Errorf("text log names the run:\n%s", text.String())
	}
}

// Each run appends a start and an end record to the run log: the end says
// what the run did and how it ended.
func TestRunLogRecordsRuns(t *testing.T) {
	f := newFixture(t)
	cmd := []string{"monomer", "run", "job.yaml"}
	_, _, err := f.run(t, Options{RunID: "first", Command: cmd})
	must(t, err)
	f.exp[1].(*fakeStage).fail = func(env *tEnv) error {
		if env.Exp.Name == "a" {
			return ErrBadInput
		}
		return nil
	}
	_, _, err = f.run(t, Options{RunID: "second", Force: true, ExitCode: func(error) int { return 3 }}, "seed=2")
	if !errors.Is(err, ErrBadInput) {
		t.Fatal(err)
	}
	recs, skipped, err := ReadRunLog(f.runDir)
	must(t, err)
	if len(recs) != 4 || skipped != 0 {
		t.Fatalf("%d records (%d skipped), want 4: %+v", len(recs), skipped, recs)
	}
	for i, want := range []struct{ event, id string }{{"start", "first"}, {"end", "first"}, {"start", "second"}, {"end", "second"}} {
		r := recs[i]
		if r.Event != want.event || r.RunID != want.id || r.Job != "fake" || r.Version == "" || r.PID != os.Getpid() {
			t.Errorf("record %d: %+v, want %s of %s", i, r, want.event, want.id)
		}
	}
	// One record a line, none blank: a file that ends in a newline gets
	// no second one before the next record.
	raw, err := os.ReadFile(filepath.Join(f.runDir, RunLogName))
	must(t, err)
	if lines := strings.Split(string(raw), "\n"); len(lines) != 5 || lines[4] != "" || slices.Contains(lines[:4], "") {
		t.Errorf("run log: %d lines, want 4 records and the final newline: %q", len(lines)-1, raw)
	}
	first, second := recs[1], recs[3]
	if !slices.Equal(recs[0].Command, cmd) || first.ExitCode == nil || *first.ExitCode != 0 || first.Error != "" ||
		len(first.Stages.Run) != 13 || !slices.Contains(first.Stages.Run, "a/evaluate") {
		t.Errorf("first run's end: %+v %+v", first, first.Stages)
	}
	if second.ExitCode == nil || *second.ExitCode != 3 || !strings.Contains(second.Error, "a/features") ||
		!slices.Equal(second.Stages.Failed, []string{"a/features"}) || !slices.Contains(second.Stages.Blocked, "a/negatives") {
		t.Errorf("second run's end: %+v %+v", second, second.Stages)
	}
}

// A run killed with SIGKILL leaves its start record whole and no end; the
// next run appends after it, and a torn last line (a machine crash
// mid-write) is skipped by the reader and does not swallow the next
// record.
func TestRunLogSurvivesKill(t *testing.T) {
	f := newFixture(t)
	cmd := helper(f, "GO_PIPELINE_KILL=run:b/split")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper was not killed: %v\n%s", err, stderr.String())
	}
	recs, skipped, err := ReadRunLog(f.runDir)
	must(t, err)
	if len(recs) != 1 || skipped != 0 || recs[0].Event != "start" || recs[0].PID == os.Getpid() {
		t.Fatalf("after the kill: %+v (%d skipped)", recs, skipped)
	}
	// A torn record, as a crash of the machine part-way through a write
	// could leave.
	whole, err := os.ReadFile(filepath.Join(f.runDir, RunLogName))
	must(t, err)
	torn := append(whole, whole[:len(whole)/2]...)
	must(t, os.WriteFile(filepath.Join(f.runDir, RunLogName), torn, 0o644))
	_, _, err = f.run(t, Options{RunID: "after"})
	must(t, err)
	recs, skipped, err = ReadRunLog(f.runDir)
	must(t, err)
	if len(recs) != 3 || skipped != 1 || recs[1].RunID != "after" || recs[2].Event != "end" || recs[2].RunID != "after" {
		t.Fatalf("after the torn line: %+v (%d skipped)", recs, skipped)
	}
}

// Durations in the logs and the run log are seconds to the millisecond.
func TestRound3(t *testing.T) {
	for x, want := range map[float64]float64{0: 0, 1.2344: 1.234, 1.2345001: 1.235, 61.0005: 61.001, 3600: 3600} {
		if got := round3(x); got != want {
			t.Errorf("round3(%v) = %v, want %v", x, got, want)
		}
	}
}

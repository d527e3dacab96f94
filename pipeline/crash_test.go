package pipeline

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"monomer/pipeline/cache"
)

// helper starts the test binary as a fake monomer run on f's job.
func helper(f *fixture, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GO_PIPELINE_HELPER="+f.dir)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// checkVisible asserts that every stage directory in the run directory is
// complete: it has a manifest and its outputs hash to the recorded values.
func checkVisible(t *testing.T, runDir string) {
	t.Helper()
	dirs := []string{filepath.Join(runDir, "report")}
	for _, e := range []string{"a", "b"} {
		entries, _ := os.ReadDir(filepath.Join(runDir, e))
		for _, d := range entries {
			if d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
				dirs = append(dirs, filepath.Join(runDir, e, d.Name()))
			}
		}
	}
	for _, d := range dirs {
		if !fileExists(d) {
			continue
		}
		m, err := cache.ReadManifest(d)
		if err != nil {
			t.Errorf("%s is visible without a manifest: %v", d, err)
			continue
		}
		for _, o := range m.Outputs {
			sum, err := cache.HashFile(filepath.Join(d, o.Name))
			if err != nil || sum != o.SHA256 {
				t.Errorf("%s/%s does not match its manifest", d, o.Name)
			}
		}
	}
}

func TestCrashSafety(t *testing.T) {
	// The uninterrupted reference: seed 8 from scratch.
	ref := newFixture(t)
	if _, _, err := ref.run(t, Options{}, "seed=8"); err != nil {
		t.Fatal(err)
	}
	want := files(t, ref.runDir)
	tests := []struct {
		point, id string
		prior     bool // a complete seed-7 run precedes, so commits replace directories
	}{
		{point: "midwrite", id: "a/features"},
		{point: "run", id: "a/negatives", prior: true},
		{point: "midwrite", id: "b/split", prior: true},
		{point: "sealed", id: "b/train", prior: true},
		{point: "manifest", id: "a/evaluate", prior: true},
		{point: "moved-old", id: "a/negatives", prior: true},
		{point: "renamed", id: "b/ingest", prior: true},
		{point: "renamed", id: "report"},
		{point: "published", id: "report", prior: true},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s:%s/prior=%v", tt.point, tt.id, tt.prior)
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			if tt.prior {
				if _, _, err := f.run(t, Options{}); err != nil {
					t.Fatal(err)
				}
			}
			cmd := helper(f, "GO_PIPELINE_KILL="+tt.point+":"+tt.id, "GO_PIPELINE_SET=seed=8")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("helper was not killed: %v\n%s", err, stderr.String())
			}
			checkVisible(t, f.runDir)
			if _, _, err := f.run(t, Options{}, "seed=8"); err != nil {
				t.Fatal(err)
			}
			if h := hidden(t, f.runDir); len(h) > 0 {
				t.Errorf("left behind: %v", h)
			}
			got := files(t, f.runDir)
			if !maps.Equal(got, want) {
				t.Errorf("outputs differ from the uninterrupted run:\n got %v\nwant %v", got, want)
			}
			d, err := Diff(t.Context(), f.runDir, ref.runDir, DiffOptions{})
			if err != nil || !d.Identical {
				t.Errorf("diff: %v %v", d, err)
			}
		})
	}
}

// blockedHelper is a helper process waiting in a stage.
type blockedHelper struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when stderr reaches EOF: the process exited
	log  strings.Builder
}

// wait waits for the helper to exit and returns its stderr and exit error.
func (h *blockedHelper) wait() (string, error) {
	<-h.done // exec: Wait must not close the pipe before it is read to EOF
	err := h.cmd.Wait()
	return h.log.String(), err
}

// startBlocked starts a helper that blocks in stage id and returns once
// that stage is waiting (its temporary directory exists).
func startBlocked(t *testing.T, f *fixture, id string, env ...string) *blockedHelper {
	t.Helper()
	h := &blockedHelper{cmd: helper(f, append(env, "GO_PIPELINE_BLOCK="+id)...), done: make(chan struct{})}
	stderr, err := h.cmd.StderrPipe()
	must(t, err)
	must(t, h.cmd.Start())
	blocked := make(chan struct{})
	go func() {
		defer close(h.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			h.log.WriteString(sc.Text() + "\n")
			if sc.Text() == blockedLine+id {
				close(blocked)
			}
		}
	}()
	t.Cleanup(func() {
		h.cmd.Process.Kill()
		h.wait()
	})
	select {
	case <-blocked:
	case <-h.done:
		log, err := h.wait()
		t.Fatalf("helper exited (%v) before blocking in %s:\n%s", err, id, log)
	}
	return h
}

func TestLockAcrossProcesses(t *testing.T) {
	f := newFixture(t)
	h := startBlocked(t, f, "a/negatives")
	_, _, err := f.run(t, Options{})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("is held by pid %d started ", h.cmd.Process.Pid)) {
		t.Fatalf("second run: %v", err)
	}
	// kill -9: the lock dies with its holder and the next run takes over,
	// cleaning the dead run's temporary directory.
	must(t, h.cmd.Process.Signal(syscall.SIGKILL))
	h.wait()
	if len(hidden(t, f.runDir)) == 0 {
		out, _ := exec.Command("find", f.runDir).CombinedOutput()
		t.Fatal(string(out), "the killed helper left no temporary directory to clean")
	}
	_, ran, err := f.run(t, Options{})
	must(t, err)
	if len(ran) != 11 { // a/negatives..evaluate, b's six, report: a/ingest and a/features were done
		t.Errorf("resumed %v", ran)
	}
	if h := hidden(t, f.runDir); len(h) > 0 {
		t.Errorf("left behind: %v", h)
	}
}

func TestSIGTERMStopsCleanly(t *testing.T) {
	f := newFixture(t)
	h := startBlocked(t, f, "b/ingest")
	must(t, h.cmd.Process.Signal(syscall.SIGTERM))
	log, err := h.wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v\n%s", err, log)
	}
	if !strings.Contains(log, `"msg":"stage interrupted","job":"fake","run_id":"`) || !strings.Contains(withoutRun(log), `"msg":"stage interrupted","experiment":"b","stage":"ingest"`) {
		t.Errorf("log:\n%s", log)
	}
	if h := hidden(t, f.runDir); len(h) > 0 {
		t.Errorf("left behind: %v", h)
	}
	_, ran, err := f.run(t, Options{})
	must(t, err)
	if len(ran) != 7 {
		t.Errorf("resumed %v", ran)
	}
}

func TestConcurrentExperiments(t *testing.T) {
	f := newFixture(t)
	h := startBlocked(t, f, "a/train", "GO_PIPELINE_EXPERIMENT=a")
	if _, ran, err := f.run(t, Options{Experiments: []string{"b"}}); err != nil || len(ran) != 6 {
		t.Errorf("b beside a: %v %v", ran, err)
	}
	_, _, err := f.run(t, Options{})
	want := fmt.Sprintf("is held by pid %d started", h.cmd.Process.Pid)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "(experiment a)") {
		t.Errorf("whole run beside a: %v", err)
	}
}

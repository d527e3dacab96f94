//go:build openblas

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// blasOut runs `monomer blas args...` with OPENBLAS_CORETYPE set to coretype
// ("" = removed from the environment) and returns its key: value lines.
func blasOut(t *testing.T, dir, coretype string, args ...string) map[string]string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENBLAS_CORETYPE=") && !strings.HasPrefix(kv, reexecGuard+"=") {
			env = append(env, kv)
		}
	}
	if coretype != "" {
		env = append(env, "OPENBLAS_CORETYPE="+coretype)
	}
	r := monomerEnv(t, dir, append(env, "GO_MONOMER_MAIN=fake"), append([]string{"blas"}, args...)...)
	if r.code != 0 {
		t.Fatalf("blas %v: exit %d: %s", args, r.code, r.stderr)
	}
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		out[k] = v
	}
	return out
}

// skipUnlessRuns skips a test that forces kernel on a CPU that cannot run
// it, with the reason `make test-kernels` prints: the CPU played
// (GO_MONOMER_CPUINFO) or, when that one runs it, this machine's own.
func skipUnlessRuns(t *testing.T, kernel string) {
	t.Helper()
	if why := hostCPU().Reason(kernel); why != "" {
		t.Skipf("SKIPPING %s: %s", kernel, why)
	}
	if why := realCPU().Reason(kernel); why != "" {
		t.Skipf("SKIPPING %s: played CPU %s runs it, this machine's (%s) cannot: %s", kernel, hostCPU().Model, realCPU().Model, why)
	}
}

// TestBLASKernelChoice: the kernel that runs and the warning are what the
// docs/install.md's "BLAS" section says, with the environment clean, with
// OPENBLAS_CORETYPE=Haswell (as on machines that set it), and with explicit
// choices in the job and on the command line (the flag wins).
func TestBLASKernelChoice(t *testing.T) {
	best, level := cpuKernel()
	if best == "" {
		t.Skipf("CPU without AVX2: auto keeps OpenBLAS's own pick")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "env.yaml"), strings.Replace(cmdJob, "name: cmdtest", "name: cmdtest\nblas_kernel: env", 1))
	write(t, filepath.Join(dir, "skx.yaml"), strings.Replace(cmdJob, "name: cmdtest", "name: cmdtest\nblas_kernel: SkylakeX", 1))
	narrow := level > levelAVX2 // Haswell is narrower than this CPU
	tests := []struct {
		name, coretype string
		args           []string
		choice, kernel string
		warn           bool
	}{
		{"clean env, auto", "", nil, "auto", best, false},
		{"Haswell env, auto", "Haswell", nil, "auto", best, false},
		{"Haswell env, job env", "Haswell", []string{"env.yaml"}, "env", "Haswell", narrow},
		{"clean env, flag Haswell", "", []string{"--blas-kernel", "Haswell"}, "Haswell", "Haswell", narrow},
		{"job SkylakeX", "Haswell", []string{"skx.yaml"}, "SkylakeX", "SkylakeX", false},
		{"job SkylakeX, flag Haswell wins", "", []string{"skx.yaml", "--blas-kernel", "Haswell"}, "Haswell", "Haswell", narrow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			skipUnlessRuns(t, tc.kernel)
			out := blasOut(t, dir, tc.coretype, tc.args...)
			if out["impl"] != "openblas" || out["kernel"] != tc.kernel || out["blas_kernel"] != tc.choice || out["cpu_kernel"] != best {
				t.Errorf("got %v, want kernel %s, blas_kernel %s, cpu_kernel %s", out, tc.kernel, tc.choice, best)
			}
			if w, ok := out["warning"]; ok != tc.warn || (ok && !strings.Contains(w, tc.kernel+" kernel, narrower")) {
				t.Errorf("warning %q (present %v), want present %v", w, ok, tc.warn)
			}
		})
	}
}

// TestRunRecordsBLAS: run logs the BLAS once, warns about a narrow kernel,
// and every manifest records it.
func TestRunRecordsBLAS(t *testing.T) {
	skipUnlessRuns(t, "Haswell")
	_, level := cpuKernel()
	dir := jobDir(t)
	r := monomer(t, dir, "fake", nil, "run", "job.yaml", "--blas-kernel", "Haswell")
	if r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	var infos, warns int
	for _, l := range logLines(t, r.stderr) {
		switch {
		case l["msg"] == "blas":
			infos++
			if l["kernel"] != "Haswell" || l["impl"] != "openblas" {
				t.Errorf("blas line %v", l)
			}
		case l["level"] == "WARN":
			warns++
		}
	}
	if want := map[bool]int{true: 1, false: 0}[level > levelAVX2]; infos != 1 || warns != want {
		t.Errorf("%d blas lines, %d warnings; want 1, %d", infos, warns, want)
	}
	b, err := os.ReadFile(filepath.Join(dir, "runs", "cmdtest", "a", "train", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Tools struct{ BLAS string }
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Tools.BLAS, "openblas ") || !strings.HasSuffix(m.Tools.BLAS, " Haswell") {
		t.Errorf("manifest tools.blas = %q", m.Tools.BLAS)
	}
}

// TestBLASKernelNotLoaded: a kernel name OpenBLAS does not load here
// (SapphireRapids: unknown to 0.3.21, which would silently run the CPU's
// own pick; in later versions known, but only for CPUs that run it) either
// runs or is an error, never a run on another kernel. On a CPU that lacks
// its instructions (AMX on a Zen 4; AVX-512 and AMX on a Zen 3) the one
// answer is exit 2 before OpenBLAS loads, naming what this CPU lacks.
func TestBLASKernelNotLoaded(t *testing.T) {
	dir := jobDir(t)
	c := hostCPU()
	for _, args := range [][]string{{"blas", "--blas-kernel", "SapphireRapids"}, {"run", "job.yaml", "--blas-kernel", "sapphirerapids"}} {
		r := monomer(t, dir, "fake", nil, args...)
		if why := c.Reason("SapphireRapids"); why != "" {
			lacks := fmt.Sprintf("needs %s, which this CPU (%s) lacks (%s)", c.Lacks("SapphireRapids"), c.Model, why)
			if r.code != 2 || !strings.Contains(r.stderr, lacks) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("%v: exit %d, want 2 and one line with %q; stderr %q", args, r.code, lacks, r.stderr)
			}
			continue
		}
		switch {
		case r.code == 0 && args[0] == "blas":
			if !strings.Contains(r.stdout, "\nkernel: SapphireRapids\n") {
				t.Errorf("%v: exit 0 running another kernel:\n%s", args, r.stdout)
			}
		case r.code == 0:
			if !strings.Contains(r.stderr, `"kernel":"SapphireRapids"`) {
				t.Errorf("%v: exit 0 running another kernel:\n%s", args, r.stderr)
			}
		case r.code != 2 || !strings.Contains(strings.ToLower(r.stderr), "blas_kernel sapphirerapids: openblas ") || !strings.Contains(r.stderr, " instead: it does not know "):
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

// TestBLASKernelFromEnvironment: MONOMER_BLAS_KERNEL chooses the kernel of
// every command alike, with a job file or without, and a flag beats it. On
// a CPU without AVX2 every command refuses it alike, naming what it lacks.
func TestBLASKernelFromEnvironment(t *testing.T) {
	dir := jobDir(t)
	env := []string{"MONOMER_BLAS_KERNEL=Haswell"}
	if c := hostCPU(); c.Reason("Haswell") != "" {
		lacks := fmt.Sprintf("blas_kernel Haswell needs %s, which this CPU (%s) lacks", c.Lacks("Haswell"), c.Model)
		for _, args := range [][]string{{"blas"}, {"blas", "job.yaml"}, {"run", "job.yaml"}} {
			if r := monomer(t, dir, "fake", env, args...); r.code != 2 || !strings.Contains(r.stderr, lacks) {
				t.Errorf("%v: exit %d, want 2 and %q; stderr %q", args, r.code, lacks, r.stderr)
			}
		}
		return
	}
	for _, args := range [][]string{{"blas"}, {"blas", "job.yaml"}} {
		r := monomer(t, dir, "fake", env, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "\nkernel: Haswell\nblas_kernel: Haswell\n") {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if why := hostCPU().Reason("SkylakeX"); why != "" {
		t.Logf("SKIPPING SkylakeX over the environment: %s", why)
	} else if r := monomer(t, dir, "fake", env, "blas", "--blas-kernel", "SkylakeX"); !strings.Contains(r.stdout, "\nkernel: SkylakeX\n") {
		t.Errorf("flag over environment:\n%s%s", r.stdout, r.stderr)
	}
	r := monomer(t, dir, "fake", env, "run", "job.yaml")
	var kernel any
	for _, l := range logLines(t, r.stderr) {
		if l["msg"] == "blas" {
			kernel = l["kernel"]
		}
	}
	if r.code != 0 || kernel != "Haswell" {
		t.Errorf("run: exit %d, kernel %v\n%s", r.code, kernel, r.stderr)
	}
}

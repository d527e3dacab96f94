package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestHalvesAVX512: the slow-kernel warning's cost follows the CPU: AVX2
// costs nothing on AMD Zen 4 (family 25 with AVX-512), 1.6x elsewhere.
func TestHalvesAVX512(t *testing.T) {
	block := func(vendor, family, flags string) string {
		return "processor\t: 0\nvendor_id\t: " + vendor + "\ncpu family\t: " + family +
			"\nmodel\t\t: 17\nflags\t\t: " + flags + "\n\n"
	}
	zen4 := block("AuthenticAMD", "25", "fpu avx2 fma avx512f avx512bw avx512_bf16")
	tests := []struct {
		name, cpuinfo string
		want          bool
	}{
		{"Zen 4", zen4 + zen4, true},
		{"Zen 4, then another CPU: the first block counts", zen4 + block("GenuineIntel", "6", "fpu"), true},
		{"another CPU, then Zen 4", block("GenuineIntel", "6", "fpu") + zen4, false},
		{"Zen 3", block("AuthenticAMD", "25", "fpu avx2 fma"), false},
		{"Zen 5", block("AuthenticAMD", "26", "fpu avx2 fma avx512f avx512_bf16"), false},
		{"Emerald Rapids", block("GenuineIntel", "6", "fpu avx2 fma avx512f avx512_bf16"), false},
		{"no cpuinfo", "", false},
	}
	for _, tc := range tests {
		if got := halvesAVX512(tc.cpuinfo); got != tc.want {
			t.Errorf("%s: halvesAVX512 = %v, want %v", tc.name, got, tc.want)
		}
	}
	if s := slowdown(levelAVX2, true); !strings.Contains(s, "as fast") {
		t.Errorf("slowdown(AVX2, halves) = %q", s)
	}
	if s := slowdown(levelAVX2, false); !strings.Contains(s, "1.6x slower") {
		t.Errorf("slowdown(AVX2) = %q", s)
	}
}

// TestUnknownBLASKernel: a kernel name OpenBLAS does not know exits 2 in
// every place a kernel is chosen, listing the names it knows (OpenBLAS
// would ignore it silently and run another).
func TestUnknownBLASKernel(t *testing.T) {
	dir := jobDir(t)
	write(t, filepath.Join(dir, "pentium.yaml"), strings.Replace(cmdJob, "name: cmdtest", "name: cmdtest\nblas_kernel: Pentium", 1))
	tests := []struct {
		name   string
		env    []string
		args   []string
		stderr string
	}{
		{"blas flag", nil, []string{"blas", "--blas-kernel", "Nonsense"}, `monomer: usage: --blas-kernel: "Nonsense" is not auto, env or a kernel OpenBLAS knows (`},
		{"run flag", nil, []string{"run", "job.yaml", "--blas-kernel", "Nonsense"}, `--blas-kernel: "Nonsense" is not auto`},
		{"dry run flag", nil, []string{"run", "job.yaml", "--dry-run", "--blas-kernel", "Nonsense"}, `--blas-kernel: "Nonsense" is not auto`},
		{"job file, run", nil, []string{"run", "pentium.yaml"}, `monomer: invalid job: pentium.yaml: line 2: blas_kernel: "Pentium" is not auto, env or a kernel OpenBLAS knows (`},
		{"job file, blas", nil, []string{"blas", "pentium.yaml"}, `pentium.yaml: line 2: blas_kernel: "Pentium" is not auto`},
		{"environment, blas", []string{"MONOMER_BLAS_KERNEL=Nonsense"}, []string{"blas"}, `MONOMER_BLAS_KERNEL: "Nonsense" is not auto`},
		{"environment, run", []string{"MONOMER_BLAS_KERNEL=Nonsense"}, []string{"run", "job.yaml"}, `blas_kernel: "Nonsense" is not auto`},
	}
	for _, tc := range tests {
		r := monomer(t, dir, "fake", tc.env, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.stderr) || !strings.Contains(r.stderr, "Haswell, Steamroller, Excavator, Zen, SkylakeX, Cooperlake") {
			t.Errorf("%s: exit %d, want 2 with %q and the kernels; stderr:\n%s", tc.name, r.code, tc.stderr, r.stderr)
		}
	}
	if fileExists(filepath.Join(dir, "runs")) {
		t.Error("a run with an unknown kernel wrote to the run directory")
	}
}

// TestKernelThisCPUCannotRun: on a CPU without AVX-512 (a recorded Zen 3 of
// this machine kind, played through GO_MONOMER_CPUINFO) a forced AVX-512
// kernel exits 2 with one line naming what the CPU lacks, in every build
// and every place a kernel is chosen, before anything is written; instead
// of the SIGILL OpenBLAS would die with. auto picks Haswell there.
func TestKernelThisCPUCannotRun(t *testing.T) {
	dir := jobDir(t)
	abs, err := filepath.Abs(filepath.Join("..", "..", "internal", "cpuflags", "testdata", "zen3-epyc-family25-model1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"GO_MONOMER_CPUINFO=" + abs}
	write(t, filepath.Join(dir, "skx.yaml"), strings.Replace(cmdJob, "name: cmdtest", "name: cmdtest\nblas_kernel: SkylakeX", 1))
	const lacks = "blas_kernel SkylakeX needs AVX-512, which this CPU (AMD EPYC) lacks (this CPU has no avx512f, avx512cd, avx512bw, avx512dq, avx512vl)"
	tests := []struct {
		name   string
		env    []string
		args   []string
		stderr string
	}{
		{"run flag", nil, []string{"run", "job.yaml", "--blas-kernel", "SkylakeX"}, "monomer: usage: " + lacks},
		{"blas flag", nil, []string{"blas", "--blas-kernel", "skylakex"}, "needs AVX-512, which this CPU (AMD EPYC) lacks"},
		{"job file", nil, []string{"run", "skx.yaml"}, lacks},
		{"environment", []string{"MONOMER_BLAS_KERNEL=Cooperlake"}, []string{"run", "job.yaml"}, "blas_kernel Cooperlake needs AVX-512, which"},
		{"env keeps OPENBLAS_CORETYPE", []string{"OPENBLAS_CORETYPE=SkylakeX"}, []string{"run", "job.yaml", "--blas-kernel", "env"},
			"blas_kernel env: OPENBLAS_CORETYPE SkylakeX needs AVX-512"},
		// OpenBLAS ran its own pick for a name it does not know.
		{"env with an unknown OPENBLAS_CORETYPE", []string{"OPENBLAS_CORETYPE=Haswel"}, []string{"run", "job.yaml", "--blas-kernel", "env"},
			"monomer: usage: blas_kernel env: OPENBLAS_CORETYPE=Haswel is not a kernel OpenBLAS knows ("},
	}
	for _, tc := range tests {
		r := monomer(t, dir, "fake", append(env, tc.env...), tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.stderr) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, want 2 and one line with %q; stderr:\n%s", tc.name, r.code, tc.stderr, r.stderr)
		}
	}
	if fileExists(filepath.Join(dir, "runs")) {
		t.Error("a run with a kernel this CPU cannot run wrote to the run directory")
	}
	r := monomer(t, dir, "fake", env, "blas", "--kernels")
	for _, want := range []string{"cpu: AMD EPYC\n", "\nHaswell: runs\n", "\nSkylakeX: this CPU has no avx512f, avx512cd, avx512bw, avx512dq, avx512vl\n"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("blas --kernels: exit %d, no %q in:\n%s", r.code, want, r.stdout)
		}
	}
	if r := monomer(t, dir, "fake", env, "blas"); r.code != 0 || !strings.Contains(r.stdout, "\ncpu_kernel: Haswell\n") {
		t.Errorf("blas on Zen 3: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

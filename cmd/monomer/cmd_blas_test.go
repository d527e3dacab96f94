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
		{"job file, run", nil, []string{"run", "pentium.yaml"}, `monomer: invalid job: pentium.yaml: blas_kernel: "Pentium" is not auto, env or a kernel OpenBLAS knows (`},
		{"job file, blas", nil, []string{"blas", "pentium.yaml"}, `pentium.yaml: blas_kernel: "Pentium" is not auto`},
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

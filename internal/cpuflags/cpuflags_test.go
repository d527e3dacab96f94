package cpuflags

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestKernelsOnRecordedCPUs: which kernels each recorded CPU runs and why
// the others cannot, from its /proc/cpuinfo lines (testdata: a Zen 3 of
// this machine kind, which has no AVX-512, this session's Zen 4, an Intel
// AVX-512 Xeon, and an emulated CPU with SSE only).
func TestKernelsOnRecordedCPUs(t *testing.T) {
	tests := []struct {
		file, model string
		widest      string
		reasons     map[string]string // kernel -> Reason ("" runs)
	}{
		{"zen3-epyc-family25-model1.txt", "AMD EPYC", "Haswell", map[string]string{
			"Haswell": "", "Zen": "",
			"SkylakeX":   "this CPU has no avx512f, avx512cd, avx512bw, avx512dq, avx512vl",
			"Cooperlake": "this CPU has no avx512f, avx512cd, avx512bw, avx512dq, avx512vl, avx512_bf16",
		}},
		{"zen4-epyc-family25-model17.txt", "AMD EPYC", "Cooperlake", map[string]string{
			"Haswell": "", "SkylakeX": "", "Cooperlake": "",
			"SapphireRapids": "this CPU has no amx_bf16",
		}},
		{"intel-xeon-cascadelake.txt", "Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz", "SkylakeX", map[string]string{
			"Haswell": "", "SkylakeX": "",
			"Cooperlake": "this CPU has no avx512_bf16",
			"Bulldozer":  "this CPU has no fma4",
		}},
		{"qemu64-sse-only.txt", "QEMU Virtual CPU version 2.5+", "", map[string]string{
			"Prescott": "", "Opteron": "",
			"Haswell":  "this CPU has no avx, avx2, fma",
			"SkylakeX": "this CPU has no avx, avx2, fma, avx512f, avx512cd, avx512bw, avx512dq, avx512vl",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			c := Parse(string(b))
			if c.Model != tc.model {
				t.Errorf("model %q, want %q", c.Model, tc.model)
			}
			if w := c.Flags.Widest(); w != tc.widest {
				t.Errorf("widest %q, want %q", w, tc.widest)
			}
			for k, want := range tc.reasons {
				if got := c.Reason(k); got != want {
					t.Errorf("Reason(%s) = %q, want %q", k, got, want)
				}
				if (c.Lacks(k) == "") != (want == "") {
					t.Errorf("Lacks(%s) = %q disagrees with Reason %q", k, c.Lacks(k), want)
				}
				if c.Flags.Runs(strings.ToLower(k)) != (want == "") {
					t.Errorf("Runs(%s) disagrees with Reason %q", k, want)
				}
			}
		})
	}
}

// TestEveryKernelKnown: every OpenBLAS kernel name a user may choose has
// requirements here, so none slips past the check unasked. The list is
// models.OpenBLASKernels' (not imported: models needs cgo in one build).
func TestEveryKernelKnown(t *testing.T) {
	for _, k := range []string{
		"Prescott", "Atom", "Core2", "Penryn", "Dunnington", "Nehalem", "Opteron",
		"Opteron_SSE3", "Barcelona", "Nano", "Sandybridge", "Bobcat", "Bulldozer",
		"Piledriver", "Haswell", "Steamroller", "Excavator", "Zen", "SkylakeX",
		"Cooperlake", "SapphireRapids",
	} {
		if !Known(k) {
			t.Errorf("no requirements for %s", k)
		}
	}
	if Known("Pentium4") || (Flags{}).Missing("Pentium4") != nil {
		t.Error("an unknown name has requirements")
	}
}

// TestLacks: the instruction sets a person reads in the error.
func TestLacks(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "qemu64-sse-only.txt"))
	if err != nil {
		t.Fatal(err)
	}
	c := Parse(string(b))
	for k, want := range map[string]string{"SkylakeX": "AVX, AVX2, FMA and AVX-512", "Haswell": "AVX, AVX2 and FMA", "Sandybridge": "AVX", "Nehalem": "SSSE3 and SSE4", "Prescott": ""} {
		if got := c.Lacks(k); got != want {
			t.Errorf("Lacks(%s) = %q, want %q", k, got, want)
		}
	}
}

// TestParseStopsAtFirstProcessor: a later processor's flags (a hybrid CPU's
// smaller cores) do not leak into the first one's.
func TestParseStopsAtFirstProcessor(t *testing.T) {
	c := Parse("processor\t: 0\nmodel name\t: A\nflags\t\t: sse2 avx\n\nprocessor\t: 1\nmodel name\t: B\nflags\t\t: avx2\n")
	if c.Model != "A" || c.Flags["avx2"] || !c.Flags["avx"] {
		t.Errorf("got %+v", c)
	}
}

// TestHost: this machine's CPU parses and runs x86-64's baseline kernel.
func TestHost(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("reads x86-64 Linux's /proc/cpuinfo")
	}
	c := Host()
	if c.Model == "" || !c.Flags["sse2"] {
		t.Errorf("model %q, flags %v", c.Model, c.Flags)
	}
	if w := c.Flags.Widest(); w != "" && !slices.Contains([]string{"Haswell", "SkylakeX", "Cooperlake"}, w) {
		t.Errorf("widest %q", w)
	}
	t.Logf("%s: widest %q", c.Model, c.Flags.Widest())
}

type fakeM struct{ runs int }

func (m *fakeM) Run() int { m.runs++; return 7 }

// TestRunTests: a forced kernel the CPU cannot run skips the package (exit
// 0, no test run); one it runs, or none forced, runs the tests.
func TestRunTests(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "zen3-epyc-family25-model1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer func(h func() CPU) { host = h }(host)
	host = func() CPU { return Parse(string(b)) }
	for _, tc := range []struct {
		coretype string
		runs     int
	}{{"SkylakeX", 0}, {"cooperlake", 0}, {"Haswell", 1}, {"", 1}} {
		t.Setenv("OPENBLAS_CORETYPE", tc.coretype)
		m := &fakeM{}
		code := RunTests(m)
		if m.runs != tc.runs || code != map[int]int{0: 0, 1: 7}[tc.runs] {
			t.Errorf("OPENBLAS_CORETYPE=%q: ran %d times, exit %d", tc.coretype, m.runs, code)
		}
	}
}

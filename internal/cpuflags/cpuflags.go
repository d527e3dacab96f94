package cpuflags

import (
	"os"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sys/cpu"
)

// Flags is a CPU's feature flags by their /proc/cpuinfo names ("avx2",
// "fma", "avx512f", "avx512_bf16", ...).
type Flags map[string]bool

// CPU is the identity and flags of a machine's first processor.
type CPU struct {
	Vendor string // vendor_id: "AuthenticAMD", "GenuineIntel"
	Family string // cpu family, as written: "25" is AMD's Zen 3 and Zen 4
	Model  string // model name
	Flags  Flags
}

// needs lists, for each OpenBLAS kernel (lower case), the flags its code
// uses beyond x86-64's baseline SSE2: the instruction sets of the kernels in
// OpenBLAS's kernel/x86_64 directory and the checks of
// driver/others/dynamic.c. Where a kernel's exact needs are unclear the list
// errs towards more flags, so that a kernel is refused rather than run into
// an illegal instruction. SSE3 is "pni" in /proc/cpuinfo.
var needs = map[string][]string{
	"prescott": {"pni"}, "opteron": nil, "opteron_sse3": {"pni"},
	"atom": {"pni", "ssse3"}, "nano": {"pni", "ssse3"}, "core2": {"pni", "ssse3"},
	"penryn": {"pni", "ssse3", "sse4_1"}, "dunnington": {"pni", "ssse3", "sse4_1"},
	"nehalem":   {"pni", "ssse3", "sse4_1", "sse4_2"},
	"barcelona": {"pni", "sse4a"}, "bobcat": {"pni", "ssse3", "sse4a"},
	"sandybridge": {"avx"},
	"bulldozer":   {"avx", "fma4"},
	"piledriver":  {"avx", "fma", "fma4"}, "steamroller": {"avx", "fma", "fma4"},
	"excavator": {"avx", "avx2", "fma", "fma4"},
	"haswell":   {"avx", "avx2", "fma"}, "zen": {"avx", "avx2", "fma"},
	"skylakex":       avx512,
	"cooperlake":     append(slices.Clip(avx512), "avx512_bf16"),
	"sapphirerapids": append(slices.Clip(avx512), "avx512_bf16", "amx_bf16"),
}

// avx512 is what OpenBLAS's SkylakeX kernels use: the foundation and the
// subsets every AVX-512 CPU since Skylake-SP has.
var avx512 = []string{"avx", "avx2", "fma", "avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}

// Known reports whether kernel is a kernel this package has requirements
// for (case-insensitive).
func Known(kernel string) bool {
	_, ok := needs[strings.ToLower(kernel)]
	return ok
}

// Missing returns the flags kernel needs that f lacks, in a fixed order;
// nil when the CPU runs it. An unknown kernel name misses nothing: OpenBLAS
// ignores such a name and detects the CPU itself.
func (f Flags) Missing(kernel string) []string {
	var miss []string
	for _, n := range needs[strings.ToLower(kernel)] {
		if !f[n] {
			miss = append(miss, n)
		}
	}
	return miss
}

// Runs reports whether a CPU with f executes every instruction of kernel.
func (f Flags) Runs(kernel string) bool { return len(f.Missing(kernel)) == 0 }

// Widest is the widest kernel of the project's choice a CPU with f runs:
// Cooperlake (AVX-512 with BF16), SkylakeX (AVX-512), Haswell (AVX2 and FMA),
// or "" for a CPU with no more than AVX, where OpenBLAS's own pick is kept.
func (f Flags) Widest() string {
	for _, k := range []string{"Cooperlake", "SkylakeX", "Haswell"} {
		if f.Runs(k) {
			return k
		}
	}
	return ""
}

// Parse reads the first processor's block of /proc/cpuinfo's text.
func Parse(cpuinfo string) CPU {
	c := CPU{Flags: Flags{}}
	for _, l := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			if strings.TrimSpace(l) == "" && (c.Model != "" || c.Vendor != "" || len(c.Flags) > 0) {
				break // the first processor's block is enough
			}
			continue
		}
		switch v = strings.TrimSpace(v); strings.TrimSpace(k) {
		case "vendor_id":
			c.Vendor = v
		case "cpu family":
			c.Family = v
		case "model name":
			c.Model = v
		case "flags":
			for _, f := range strings.Fields(v) {
				c.Flags[f] = true
			}
		}
	}
	return c
}

// Host is this machine's CPU: the flags of /proc/cpuinfo where Linux has
// it, less any that Go's own CPUID detection (golang.org/x/sys/cpu, which
// also asks for the operating system's consent to the wide registers) finds
// absent; elsewhere those detected flags alone. Both must agree because an
// emulator (qemu-user) passes the host's /proc/cpuinfo through while its
// CPUID, which OpenBLAS asks, reports the emulated CPU.
func Host() CPU {
	x := cpu.X86
	detected := map[string]bool{
		"pni": x.HasSSE3, "ssse3": x.HasSSSE3, "sse4_1": x.HasSSE41, "sse4_2": x.HasSSE42,
		"avx": x.HasAVX, "avx2": x.HasAVX2, "fma": x.HasFMA,
		"avx512f": x.HasAVX512F, "avx512cd": x.HasAVX512CD, "avx512bw": x.HasAVX512BW,
		"avx512dq": x.HasAVX512DQ, "avx512vl": x.HasAVX512VL, "avx512_bf16": x.HasAVX512BF16,
		"amx_bf16": x.HasAMXBF16,
	}
	b, _ := os.ReadFile("/proc/cpuinfo")
	c := Parse(string(b))
	listed := len(c.Flags) > 0
	if !listed {
		c = CPU{Model: "unknown (no /proc/cpuinfo)", Flags: Flags{"sse2": runtime.GOARCH == "amd64"}}
	}
	for name, has := range detected {
		switch {
		case !has:
			delete(c.Flags, name)
		case !listed:
			c.Flags[name] = true
		}
	}
	return c
}

// Lacks names the instruction sets behind the flags kernel misses on c
// ("AVX-512", "AVX2 and FMA"), for messages to people; "" when it runs.
func (c CPU) Lacks(kernel string) string {
	var sets []string
	for _, f := range c.Flags.Missing(kernel) {
		set := strings.ToUpper(f)
		switch {
		case strings.HasPrefix(f, "avx512"):
			set = "AVX-512"
		case strings.HasPrefix(f, "amx"):
			set = "AMX"
		case f == "pni":
			set = "SSE3"
		case strings.HasPrefix(f, "sse4"):
			set = "SSE4"
		}
		if !slices.Contains(sets, set) {
			sets = append(sets, set)
		}
	}
	switch len(sets) {
	case 0:
		return ""
	case 1:
		return sets[0]
	}
	return strings.Join(sets[:len(sets)-1], ", ") + " and " + sets[len(sets)-1]
}

// Reason is the one-line reason a kernel cannot run on c, as `make
// test-kernels` and the tests print it after "SKIPPING <kernel>: ", or ""
// when it can.
func (c CPU) Reason(kernel string) string {
	miss := c.Flags.Missing(kernel)
	if len(miss) == 0 {
		return ""
	}
	return "this CPU has no " + strings.Join(miss, ", ")
}

package main

import (
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

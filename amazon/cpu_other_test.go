//go:build !unix

package amazon

// cpuSeconds is unavailable here; benchmarks then skip the CPU-time metric.
func cpuSeconds() float64 { return 0 }

//go:build !unix

package bow

func cpuSeconds() float64 { return 0 }

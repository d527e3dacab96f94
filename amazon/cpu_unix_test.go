//go:build unix

package amazon

import "syscall"

// cpuSeconds is the process's user+system CPU time: on a shared machine a
// steadier measure of work than wall time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

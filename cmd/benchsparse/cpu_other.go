//go:build !linux

package main

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time of the whole process where the OS has no
// per-thread figure: the benchmark then counts its other threads too.
func threadCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

//go:build amd64 || arm64

package prefetch

import "unsafe"

// Span asks the processor to load the cache lines of the n bytes (n > 0)
// from addr into all cache levels and returns at once (PREFETCHT0, PRFM
// PLDL1KEEP). Go exposes no prefetch, and a plain load would stall
// retirement until the line arrives.
//
//go:noescape
func Span(addr unsafe.Pointer, n int)

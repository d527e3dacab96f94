package graph

import "unsafe"

// prefetch asks the processor to load the cache line holding addr into all
// cache levels and returns at once (PREFETCHT0). Go exposes no prefetch, and
// a plain load would stall retirement until the line arrives.
//
//go:noescape
func prefetch(addr unsafe.Pointer)

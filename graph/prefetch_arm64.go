package graph

import "unsafe"

// prefetch asks the processor to load the cache line holding addr and
// returns at once (PRFM PLDL1KEEP); see prefetch_amd64.go.
//
//go:noescape
func prefetch(addr unsafe.Pointer)

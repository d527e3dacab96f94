//go:build !amd64 && !arm64

package graph

import "unsafe"

// prefetch does nothing where no assembly version exists: Rewire is then
// only slower.
func prefetch(addr unsafe.Pointer) {}

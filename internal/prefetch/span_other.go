//go:build !amd64 && !arm64

package prefetch

import "unsafe"

// Span does nothing where no assembly version exists: callers are then
// only slower.
func Span(addr unsafe.Pointer, n int) {}

//go:build !linux

package hugemem

import "unsafe"

// advise does nothing where there is no transparent huge page advice.
func advise(unsafe.Pointer, int) {}

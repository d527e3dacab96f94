//go:build linux

package hugemem

import (
	"syscall"
	"unsafe"
)

// advise asks for huge pages over [p, p+n), rounded inward to whole pages,
// and drops the small pages already there (the memory is zero and stays
// so: an anonymous page given back reads as zero). Go's heap may hand out
// memory it had touched before, whose small pages the first advice alone
// would leave in place. An error (THP disabled) leaves small pages:
// nothing else changes, so it is ignored.
func advise(p unsafe.Pointer, n int) {
	lo := (uintptr(p) + page - 1) &^ (page - 1)
	hi := (uintptr(p) + uintptr(n)) &^ (page - 1)
	if hi <= lo {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(p, lo-uintptr(p))), hi-lo)
	if syscall.Madvise(b, syscall.MADV_HUGEPAGE) == nil {
		_ = syscall.Madvise(b, syscall.MADV_DONTNEED)
	}
}

package hugemem

import "unsafe"

// page is the huge page size asked for.
const page = 2 << 20

// Slice returns n zeroed elements of T, an ordinary Go slice (the garbage
// collector frees it), with the whole huge pages inside it marked for
// huge-page backing and given back to the system, so that they fault in
// again, still zero, as huge pages when first written. Where the system
// refuses either advice the memory is the same in small pages.
func Slice[T any](n int) []T {
	s := make([]T, n)
	var zero T
	if size := int(unsafe.Sizeof(zero)); n > 0 && n*size >= 2*page {
		advise(unsafe.Pointer(&s[0]), n*size)
	}
	return s
}

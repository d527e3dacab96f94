package imagefeat

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// nativeLE: the machine stores float32 as the .b format does, so records can
// be copied into []float32 wholesale instead of value by value.
var nativeLE = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// expMask selects a float32's exponent bits; all set means NaN or ±Inf.
const expMask = 0x7f800000

// decodeValues fills dst from the little-endian float32s in src (len
// 4*len(dst)) and returns the index of the first NaN or infinite value, or -1.
func decodeValues(dst []float32, src []byte) int {
	if !nativeLE {
		for j := range dst {
			dst[j] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*j:]))
		}
	} else {
		copy(asBytes(dst), src)
	}
	return firstNonFinite(dst)
}

// firstNonFinite returns the index of the first NaN or infinite value of v,
// or -1.
func firstNonFinite(v []float32) int {
	// Branch-free scan, two values per step: (bits&expMask)+1<<23 carries
	// into bit 31 exactly when the exponent is all ones, and the low half's
	// sum never carries into the high half. Whichever half of the uint64 a
	// value lands in, the test is the same, so byte order does not matter.
	const mask2, one2, sign2 = expMask<<32 | expMask, 1<<55 | 1<<23, 1<<63 | 1<<31
	var acc uint64
	if uintptr(unsafe.Pointer(unsafe.SliceData(v)))%8 == 0 {
		u := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(v))), len(v)/2)
		for _, x := range u {
			acc |= x&mask2 + one2
		}
		if len(v)%2 == 1 {
			acc |= uint64(math.Float32bits(v[len(v)-1])&expMask + 1<<23)
		}
	} else {
		acc = sign2 // unaligned view: take the slow path below
	}
	if acc&sign2 == 0 {
		return -1
	}
	for j, x := range v {
		if math.Float32bits(x)&expMask == expMask {
			return j
		}
	}
	return -1
}

// encodeValues writes vec as little-endian float32s into dst (len
// 4*len(vec)).
func encodeValues(dst []byte, vec []float32) {
	if nativeLE {
		copy(dst, asBytes(vec))
		return
	}
	for j, v := range vec {
		binary.LittleEndian.PutUint32(dst[4*j:], math.Float32bits(v))
	}
}

// asBytes views a float32 slice as its bytes in machine order.
func asBytes(v []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))
}

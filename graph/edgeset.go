package graph

import "math/bits"

// key packs a directed pair into one word: Src in the high half, Dst in the
// low half. Both ends are non-negative int32, so bits 31 and 63 are always
// zero and emptySlot can never be a key.
func key(src, dst int32) uint64 { return uint64(uint32(src))<<32 | uint64(uint32(dst)) }

// edgeOf is the inverse of key.
func edgeOf(k uint64) Edge { return Edge{Src: int32(k >> 32), Dst: int32(uint32(k))} }

const emptySlot = ^uint64(0)

// edgeSet is an open-addressing hash set of pair keys with linear probing and
// backward-shift deletion (no tombstones, so a long run of inserts and
// deletes never degrades it). At Women's size it holds up to 3.8 M keys in
// 64 MiB, and a lookup costs about one cache miss, where a Go map costs
// several and three times the memory.
type edgeSet struct {
	slots []uint64
	mask  uint64
	shift uint8
	n     int
}

// newEdgeSet returns a set that holds up to capacity keys at a load factor of
// at most one half.
func newEdgeSet(capacity int) *edgeSet {
	size := 16
	for size < 2*capacity {
		size <<= 1
	}
	s := &edgeSet{
		slots: make([]uint64, size),
		mask:  uint64(size - 1),
		shift: uint8(64 - bits.TrailingZeros(uint(size))),
	}
	for i := range s.slots {
		s.slots[i] = emptySlot
	}
	return s
}

// home is the slot a key hashes to: a xor-shift then Fibonacci hashing, so
// that both halves of the key reach the top bits that pick the slot.
func (s *edgeSet) home(k uint64) uint64 {
	k ^= k >> 31
	return (k * 0x9e3779b97f4a7c15) >> s.shift
}

func (s *edgeSet) has(k uint64) bool {
	for i := s.home(k); ; i = (i + 1) & s.mask {
		switch s.slots[i] {
		case k:
			return true
		case emptySlot:
			return false
		}
	}
}

// add inserts k and reports whether it was absent.
func (s *edgeSet) add(k uint64) bool {
	for i := s.home(k); ; i = (i + 1) & s.mask {
		switch s.slots[i] {
		case k:
			return false
		case emptySlot:
			s.slots[i] = k
			s.n++
			return true
		}
	}
}

// del removes k and reports whether it was present. The entries after the
// hole move back so that every key stays reachable from its home slot.
func (s *edgeSet) del(k uint64) bool {
	i := s.home(k)
	for ; ; i = (i + 1) & s.mask {
		v := s.slots[i]
		if v == k {
			break
		}
		if v == emptySlot {
			return false
		}
	}
	for j := (i + 1) & s.mask; ; j = (j + 1) & s.mask {
		v := s.slots[j]
		if v == emptySlot {
			break
		}
		// v may fill the hole at i when its home is not cyclically in (i, j].
		h := s.home(v)
		if (j-h)&s.mask >= (j-i)&s.mask {
			s.slots[i] = v
			i = j
		}
	}
	s.slots[i] = emptySlot
	s.n--
	return true
}

func (s *edgeSet) len() int { return s.n }

package dotkern

import "golang.org/x/sys/cpu"

// hasAVX2 selects the assembly kernel; the Go one gives the same bits.
var hasAVX2 = cpu.X86.HasAVX2

// dots2x4 sets the lane sums of q_a · v_b (a < 2, b < 4; rows of length d,
// q's at q and q+d, v's at v, v+d, v+2d, v+3d) over the whole 4-blocks into
// s[a*ls+b]: dot's value before its tail.
//
//go:noescape
func dots2x4(s *float64, ls int, q *float64, d int, v *float64)

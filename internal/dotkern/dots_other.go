//go:build !amd64

package dotkern

const hasAVX2 = false

func dots2x4(s *float64, ls int, q *float64, d int, v *float64) { panic("dotkern: no assembly") }

//go:build !amd64

package dotkern

// Variables, as on amd64, so that the tests can force a path.
var useAVX512, useFMA = false, false

func scores16x16(s *float32, ls int, q *float32, d int, p *float32) { panic("dotkern: no assembly") }
func scores4x16(s *float32, ls int, q *float32, d int, p *float32)  { panic("dotkern: no assembly") }

func screen16(s *float32, vn *float64, n int, eq, thr float64) int { panic("dotkern: no assembly") }
func screen8(s *float32, vn *float64, n int, eq, thr float64) int  { panic("dotkern: no assembly") }

//go:build !amd64

package dotkern

const useAVX512, useFMA = false, false

func scores16x16(s *float32, ls int, q *float32, d int, p *float32) { panic("dotkern: no assembly") }
func scores4x16(s *float32, ls int, q *float32, d int, p *float32)  { panic("dotkern: no assembly") }

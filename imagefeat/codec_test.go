package imagefeat

import (
	"math"
	"testing"
)

func TestFirstNonFinite(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	tests := []struct {
		name string
		v    []float32
		skip int // start the slice here (1: a view not 8-byte aligned)
		want int
	}{
		{name: "empty", v: nil, want: -1},
		{name: "finite extremes", v: []float32{math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Copysign(0, -1)), 0}, want: -1},
		{name: "NaN first", v: []float32{nan, 1, 2, 3}, want: 0},
		{name: "Inf in a high half", v: []float32{1, inf, 2, 3}, want: 1},
		{name: "-Inf last of odd length", v: []float32{1, 2, 3, 4, -inf}, want: 4},
		{name: "two bad, first wins", v: []float32{1, 2, inf, nan}, want: 2},
		{name: "unaligned view", v: []float32{0, 1, 2, nan, 4}, skip: 1, want: 2},
		{name: "unaligned finite", v: []float32{0, 1, 2, 3, 4}, skip: 1, want: -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.v
			if tc.skip > 0 {
				v = v[tc.skip:]
			}
			if got := firstNonFinite(v); got != tc.want {
				t.Fatalf("firstNonFinite = %d, want %d", got, tc.want)
			}
		})
	}
}

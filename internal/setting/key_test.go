package setting

import (
	"math"
	"strings"
	"testing"
)

type keyLib struct {
	Size  int          `yaml:"size" default:"3"`
	Rate  float64      `yaml:"rate"`
	Grid  []float64    `yaml:"grid"`
	Warm  Opt[bool]    `yaml:"warm" default:"false"`
	Ratio Opt[float64] `yaml:"ratio" default:"1"`
}

type noKey struct {
	Size  int `yaml:"size"`
	Ratio float64
}

type keyed struct {
	keyLib `yaml:",inline"`
	Kind   string `yaml:"kind"`
}

// TestKey: a key names the settings by their yaml keys in field order
// (inline structs in place), leaves zero values out (-0 and an empty list
// too, as omitempty does), writes an Opt as its value and an unset one as
// null, and refuses a field with no yaml key.
func TestKey(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{keyed{keyLib{Size: 2, Rate: 0.5, Grid: []float64{0, 1e-6}, Warm: Set(true), Ratio: Set(0.25)}, "bow"},
			`{"size":2,"rate":0.5,"grid":[0,0.000001],"warm":true,"ratio":0.25,"kind":"bow"}`},
		{keyed{keyLib{Rate: math.Copysign(0, -1), Grid: []float64{}, Warm: Set(false), Ratio: Set(0.0)}, ""}, `{}`},
		{keyed{keyLib{Size: 1, Ratio: Set(1.0)}, "x"}, `{"size":1,"warm":null,"ratio":1,"kind":"x"}`},
		{keyLib{Grid: []float64{2}, Warm: Set(false), Ratio: Set(2.0)}, `{"grid":[2],"ratio":2}`},
		{noKey{Size: 1, Ratio: 0.5}, ""},
	} {
		got, err := Key(tc.v)
		if tc.want == "" {
			if err == nil || !strings.Contains(err.Error(), "Ratio has no yaml key") {
				t.Errorf("Key(%+v) = %s, %v, want the error of Ratio's missing key", tc.v, got, err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("Key(%+v) = %s, %v, want %s", tc.v, got, err, tc.want)
		}
	}
	if _, err := Key(3); err == nil {
		t.Error("Key(3): no error")
	}
}

// TestSettle: Settle sets every Opt, in inline structs too, to its value,
// and leaves the rest alone.
func TestSettle(t *testing.T) {
	in := keyed{keyLib{Size: 4, Warm: Opt[bool]{}, Ratio: Set(0.5)}, "k"}
	got := Settle(in)
	if want := (keyed{keyLib{Size: 4, Warm: Set(false), Ratio: Set(0.5)}, "k"}); got.Size != want.Size || got.Kind != want.Kind ||
		got.Warm != want.Warm || got.Ratio != want.Ratio {
		t.Errorf("Settle(%+v) = %+v, want %+v", in, got, want)
	}
	if in.Warm.IsSet() {
		t.Error("Settle changed its argument")
	}
}

package cache

import (
	"encoding/json"
	"slices"
	"testing"
)

// Params read back from a manifest are indented; the same values compact
// must not be reported as a parameter change.
func TestStaleReasonsIgnoreParamLayout(t *testing.T) {
	old := KeyInputs{Code: "c", Seed: 1, Params: json.RawMessage("{\n  \"k\": 10,\n  \"lambdas\": [\n    0\n  ]\n}")}
	now := KeyInputs{Code: "c", Seed: 1, Params: json.RawMessage(`{"k":10,"lambdas":[0]}`)}
	if r := StaleReasons(old, now); len(r) != 0 {
		t.Fatalf("same params, reasons %q", r)
	}
	now.Params = json.RawMessage(`{"k":20,"lambdas":[0]}`)
	if r := StaleReasons(old, now); !slices.Equal(r, []string{"param k changed (10 -> 20)"}) {
		t.Fatalf("reasons %q", r)
	}
}

package pipeline

import (
	"encoding/json"
	"testing"
)

func TestStatsOf(t *testing.T) {
	for in, want := range map[string]string{
		"DuplicateASINs": "duplicate_asins", "NeverSwitched": "never_switched",
		"PerWordBound": "per_word_bound", "Edges": "edges", "Level2Tokens": "level2_tokens",
	} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
	got := statsOf(struct {
		FirstDuplicate string
		Pairs          [3]int
		Inner          struct{ RejectedSelfLoop int64 }
	}{"B0", [3]int{8, 1, 1}, struct{ RejectedSelfLoop int64 }{1 << 53}})
	b, _ := json.Marshal(got)
	if want := `{"first_duplicate":"B0","inner":{"rejected_self_loop":9007199254740992},"pairs":[8,1,1]}`; string(b) != want {
		t.Errorf("statsOf = %s, want %s", b, want)
	}
}

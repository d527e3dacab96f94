package job

import (
	"errors"
	"slices"
	"testing"
)

func TestSeeds(t *testing.T) {
	exp := "\n    category: A > B\n    graph: also_bought\n    features: image\n"
	head := "name: j\ndata: {meta: m, image_features: i}\n"
	tail := "experiments:\n  - name: e" + exp
	tests := []struct {
		name, yaml string
		want       []uint64 // SeedList
		tags       []string // SeedTag of each
		err        string
	}{
		{name: "no seed", yaml: head + tail, want: []uint64{1}, tags: []string{""}},
		{name: "seed", yaml: head + "seed: 7\n" + tail, want: []uint64{7}, tags: []string{""}},
		{name: "seeds", yaml: head + "seeds: [3, 1, 20]\n" + tail, want: []uint64{3, 1, 20}, tags: []string{"", "s1", "s20"}},
		{name: "one of seeds", yaml: head + "seeds: [5]\n" + tail, want: []uint64{5}, tags: []string{""}},
		{name: "both", yaml: head + "seed: 1\nseeds: [1, 2]\n" + tail,
			err: "invalid job: /jobs/j.yaml: line 4: seeds: set either seed or seeds, not both (seeds: [1, 2, 3] runs every seed; the first is the one seed: would be)"},
		{name: "twice", yaml: head + "seeds: [1, 2, 1]\n" + tail, err: "invalid job: /jobs/j.yaml: line 3: seeds[2]: 1 is seeds[0] too"},
		{name: "zero", yaml: head + "seeds: [2, 0]\n" + tail, err: "invalid job: /jobs/j.yaml: line 3: seeds[1]: 0 is not a seed (seed: 0 means seed 1; write 1)"},
		{name: "empty", yaml: head + "seeds: []\n" + tail, err: "invalid job: /jobs/j.yaml: line 3: seeds: an empty list is not allowed; omit the key to inherit the default"},
	}
	for _, tt := range tests {
		j, err := Parse("/jobs/j.yaml", []byte(tt.yaml))
		if tt.err != "" {
			if err == nil || !errors.Is(err, ErrConfig) || err.Error() != tt.err {
				t.Errorf("%s: got %v\nwant %s", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got := j.SeedList(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: seeds %v, want %v", tt.name, got, tt.want)
		}
		for i, s := range tt.want {
			if got := j.SeedTag(s); got != tt.tags[i] {
				t.Errorf("%s: tag of %d is %q, want %q", tt.name, s, got, tt.tags[i])
			}
		}
		if r := j.Resolve(0); r.Seed != tt.want[0] {
			t.Errorf("%s: the experiment resolves to seed %d, want the first, %d", tt.name, r.Seed, tt.want[0])
		}
	}
}

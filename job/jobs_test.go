package job

import (
	"path/filepath"
	"testing"
)

// Every job file shipped in jobs/ parses and validates, so a rename of a
// setting cannot silently break the paper's grids or the benchmarks' jobs.
func TestShippedJobs(t *testing.T) {
	files, err := filepath.Glob("../jobs/*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("job files %v: %v", files, err)
	}
	for _, f := range files {
		j, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for i := range j.Experiments {
			if r := j.Resolve(i); r.Settings.K <= 0 || r.Data.Meta == "" && r.Data.Items == "" {
				t.Errorf("%s: experiment %s resolves to K=%d, meta %q, items %q", f, r.Name, r.Settings.K, r.Data.Meta, r.Data.Items)
			}
		}
	}
}

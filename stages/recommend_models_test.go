package stages

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"monomer/pipeline"
	"monomer/pipeline/cache"
)

// TestFinishedRunModels: the models a run trained, which recommend names
// when asked for another, are its train.<model> nodes without a later
// seed's replicas (train.lmt.s2).
func TestFinishedRunModels(t *testing.T) {
	run := t.TempDir()
	for _, node := range []struct{ dir, part, replica string }{
		{"ingest", "", ""}, {"features", "", ""},
		{"train.ct", "ct", ""}, {"train.ct.s2", "ct", "s2"},
		{"train.lmt", "lmt", ""}, {"train.lmt.s2", "lmt", "s2"}, {"train.lmt.s3", "lmt", "s3"},
	} {
		dir := filepath.Join(run, "men", node.dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		m := &cache.Manifest{Inputs: cache.KeyInputs{Stage: "train", Experiment: "men", Part: node.part, Replica: node.replica}}
		if err := cache.WriteManifest(dir, m); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := finishedRun(run, "men", "lda")
	if !errors.Is(err, pipeline.ErrUsage) || !strings.HasSuffix(fmt.Sprint(err), "has no trained lda (trained: [ct lmt])") {
		t.Errorf("asked for an untrained model: %v", err)
	}
	if _, _, err := finishedRun(run, "men", "lmt"); err != nil {
		t.Errorf("a trained model: %v", err)
	}
}

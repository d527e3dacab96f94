package stages

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"monomer/job"
	"monomer/pipeline"
)

// TestTrainMemoryRefused: settings whose training cannot fit the machine's
// memory fail before any stage runs, with ErrConfig (exit 2) and the
// estimate, instead of dying an hour later out of memory.
func TestTrainMemoryRefused(t *testing.T) {
	defer func(f func() (int64, error)) { machineMemory = f }(machineMemory)
	machineMemory = func() (int64, error) { return 1 << 30, nil }
	jb := loadTestJob(t)
	for _, c := range []struct {
		set  string
		want string // "" = accepted
	}{
		{"settings.k=6", ""},
		{"settings.k=1000", "training lmt needs about 2.5 GiB (4096-dimensional features, k=1000, monomer_k=2, n=2, topics=5), more than the 1.0 GiB this machine has available"},
		{"settings.monomer_k=300", "training monomer needs about 2.2 GiB"},
	} {
		sets, err := job.ParseSets([]string{c.set})
		if err != nil {
			t.Fatal(err)
		}
		j, err := job.ParseWith(jb.Path, []byte(strings.ReplaceAll(testJob, "DATA", jb.DataDir)), sets)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		opts := pipeline.Options{RunDir: dir, Experiments: []string{"men-image"}}
		steps, err := planStages(j, Experiment(), Job(), opts)
		if err != nil {
			t.Fatal(err)
		}
		// Each model node is judged alone: only the one too big fails.
		for _, s := range steps {
			model, ok := strings.CutPrefix(s.ID, "men-image/train.")
			if !ok {
				continue
			}
			want := ""
			if strings.Contains(c.want, "training "+model+" ") {
				want = c.want
			}
			if want == "" && !s.Run || want != "" && (s.Run || !strings.Contains(s.Why, want)) {
				t.Errorf("%s: plan says %s run=%v %q, want the failure %q", c.set, s.ID, s.Run, s.Why, want)
			}
		}
		if c.want == "" {
			continue
		}
		_, err = runStages(context.Background(), j, Experiment(), Job(), opts)
		if !errors.Is(err, job.ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrConfig containing %q", c.set, err, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "men-image")); !os.IsNotExist(err) {
			t.Errorf("%s: the refused run created the experiment directory", c.set)
		}
	}
}

// TestMachineMemoryRefusesHugeMonomer runs against this machine's real
// memory: Monomer at the feature dimension (about 36 TB) fits nowhere.
func TestMachineMemoryRefusesHugeMonomer(t *testing.T) {
	if _, err := pipeline.MachineMemory(); err != nil {
		t.Skip(err)
	}
	j := loadTestJob(t)
	r := j.Resolve(0)
	r.Settings.MonomerK, r.Settings.N = 4096, 4096
	err := Train{}.PreflightPart(&r, "monomer")
	if !errors.Is(err, job.ErrConfig) || !strings.Contains(err.Error(), "training monomer needs about") {
		t.Fatalf("%v", err)
	}
}

// TestTrainMemoryCountsData: with memory for every model's parameters
// (the pre-flight passes) but not for its data, training refuses once it
// has counted the pairs and rows, with ErrConfig naming them.
func TestTrainMemoryCountsData(t *testing.T) {
	defer func(f func() (int64, error)) { machineMemory = f }(machineMemory)
	jb := loadTestJob(t)
	r := jb.Resolve(0)
	var most int64
	for _, m := range []string{"wnn", "lmt", "monomer"} {
		most = max(most, modelMemory(m, r.FeatureDim(), r.Settings.TrainSettings))
	}
	machineMemory = func() (int64, error) { return most + 1024, nil }
	opts := pipeline.Options{RunDir: t.TempDir(), Experiments: []string{"men-image"}}
	steps, err := planStages(jb, Experiment(), Job(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if strings.HasPrefix(s.ID, "men-image/train.") && !s.Run {
			t.Fatalf("the pre-flight refused %s: %s", s.ID, s.Why)
		}
	}
	_, err = runStages(context.Background(), jb, Experiment(), Job(), opts)
	if !errors.Is(err, job.ErrConfig) || !strings.Contains(err.Error(), "validation pairs on 4096-dimensional features, more than the") {
		t.Fatalf("%v, want ErrConfig for the data", err)
	}
}

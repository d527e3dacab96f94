package pipeline

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A stage gets the directories of the stages it declares in Deps and no
// others: reading an undeclared one fails the run, naming both ends.
func TestUndeclaredInput(t *testing.T) {
	tests := []struct {
		name, stage string
		declared    func(env *tEnv) error // must succeed
		read        func(env *tEnv) error // must fail
		want        string
	}{
		{"upstream of upstream", "split",
			func(env *tEnv) error { _, err := env.InDir("negatives"); return err },
			func(env *tEnv) error { _, err := env.InDir("ingest"); return err },
			"a/split reads a/ingest"},
		{"another experiment's", "split",
			func(env *tEnv) error { _, err := env.StageDir(env.Exp.Name, "negatives"); return err },
			func(env *tEnv) error { _, err := env.StageDir("b", "negatives"); return err },
			"a/split reads b/negatives"},
		{"downstream", "negatives",
			func(env *tEnv) error { _, err := env.InDir("features"); return err },
			func(env *tEnv) error { _, err := env.InDir("train"); return err },
			"a/negatives reads a/train"},
		{"job-level", "report",
			func(env *tEnv) error {
				for _, e := range env.Job.Experiments {
					if _, err := env.StageDir(e.Name, "evaluate"); err != nil {
						return err
					}
				}
				return nil
			},
			func(env *tEnv) error { _, err := env.StageDir("a", "train"); return err },
			"report reads a/train"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			var s *fakeStage
			for _, st := range append(f.exp, f.jobSt...) {
				switch v := st.(type) {
				case *fakeStage:
					if v.name == tc.stage {
						s = v
					}
				case *quietStage:
					if v.name == tc.stage {
						s = v.fakeStage
					}
				}
			}
			s.fail = func(env *tEnv) error {
				if err := tc.declared(env); err != nil {
					return fmt.Errorf("declared input refused: %w", err)
				}
				return tc.read(env)
			}
			var opts Options
			if tc.stage != "report" {
				opts.Experiments = []string{"a"} // so the error is a's
			}
			_, _, err := f.run(t, opts)
			if !errors.Is(err, ErrUndeclaredInput) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "declared input refused") {
				t.Fatalf("err = %v, want ErrUndeclaredInput with %q", err, tc.want)
			}
		})
	}
}

// TestRNGSeeds: each seed draws its own stream, seed 0 is seed 1's (the
// default), and a purpose is part of the stream.
func TestRNGSeeds(t *testing.T) {
	draw := func(seed uint64, purpose string) uint64 {
		e := &Env{Experiment: "a", Seed: seed, Stage: "split"}
		return e.RNG(purpose).Uint64()
	}
	if draw(0, "x") != draw(1, "x") {
		t.Error("seed 0 does not draw seed 1's stream")
	}
	if draw(1, "x") == draw(2, "x") || draw(2, "x") == draw(3, "x") {
		t.Error("seeds 1, 2 and 3 do not draw three streams")
	}
	if draw(2, "x") == draw(2, "y") {
		t.Error("two purposes draw the same stream")
	}
}

package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"monomer/job"
	"monomer/pipeline/cache"
)

// Example runs a one-stage job twice: the second run finds the stage up to
// date.
func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "meta.json"), []byte("{}\n"), 0o644)
	j, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(`
name: example
data: {meta: meta.json, reviews: reviews.json}
experiments:
  - {name: elect, category: Electronics, graph: also_bought, features: bow}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	stages := []tStage{countStage{}}
	for range 2 {
		sum, err := runJob(context.Background(), j, stages, nil, Options{RunDir: filepath.Join(dir, "run")})
		fmt.Printf("run %d, skipped %d, err %v\n", sum.Run, sum.Skipped, err)
	}
	m, _ := cache.ReadManifest(filepath.Join(dir, "run", "elect", "count"))
	fmt.Println(m.Outputs[0].Name, *m.Outputs[0].Rows)
	// Output:
	// run 1, skipped 0, err <nil>
	// run 0, skipped 1, err <nil>
	// count.txt 3
}

// countStage writes the vocabulary size it is configured with.
type countStage struct{}

func (countStage) Name() string   { return "count" }
func (countStage) Deps() []string { return nil }
func (countStage) Key(e *job.Resolved) (any, []string) {
	return map[string]int{"vocab": e.Settings.VocabSize}, []string{e.Data.Meta}
}
func (countStage) Run(ctx context.Context, env *tEnv) (*Result, error) {
	s := strings.Repeat(fmt.Sprintln(env.Exp.Settings.VocabSize), 3)
	err := os.WriteFile(filepath.Join(env.OutDir, "count.txt"), []byte(s), 0o644)
	return &Result{Rows: map[string]int64{"count": 3}}, err
}

// BenchmarkSkipCheck measures a run in which every stage is up to date, the
// runner's fixed cost per stage (manifests read, keys and output hashes
// checked), for jobs of increasing size.
func BenchmarkSkipCheck(b *testing.B) {
	for _, n := range []int{2, 16} {
		b.Run(fmt.Sprintf("experiments=%d", n), func(b *testing.B) {
			f := newFixture(b)
			var y strings.Builder
			y.WriteString("name: bench\ndata: {meta: meta.txt, image_features: i.b}\nexperiments:\n")
			for i := range n {
				fmt.Fprintf(&y, "  - {name: e%d, category: A, graph: also_bought, features: image}\n", i)
			}
			must(b, os.WriteFile(f.job, []byte(y.String()), 0o644))
			j := f.load(b)
			opts := Options{RunDir: f.runDir}
			if _, err := runJob(context.Background(), j, f.exp, f.jobSt, opts); err != nil {
				b.Fatal(err)
			}
			stages := n*len(f.exp) + len(f.jobSt)
			for b.Loop() {
				if s, err := runJob(context.Background(), j, f.exp, f.jobSt, opts); err != nil || s.Run != 0 {
					b.Fatal(s, err)
				}
			}
			b.ReportMetric(float64(stages)*float64(b.N)/b.Elapsed().Seconds(), "stages/s")
		})
	}
}

func TestBarTracker(t *testing.T) {
	var buf strings.Builder
	tr := BarTracker(&buf)("reading", 100)
	tr.Add(10) // before the delay: no bar
	if buf.Len() != 0 {
		t.Fatalf("bar drawn at once: %q", buf.String())
	}
	defer func(d time.Duration) { progressDelay = d }(progressDelay)
	progressDelay = 0
	tr = BarTracker(&buf)("reading", 100)
	for range 10 {
		tr.Add(10)
	}
	tr.Done()
	tr.Add(1) // after Done: ignored
	if !strings.Contains(buf.String(), "reading") {
		t.Errorf("no bar: %q", buf.String())
	}
}

package synth_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"monomer/synth"
)

// TestWriteAllOrNothing: a world's files appear together or not at all. A
// write interrupted in the image records (after the metadata and reviews
// are complete), and a 2023 write whose embeddings file cannot be put in
// place (a directory in the way), leave none of the world's files and no
// temporary one; a retry then writes them all.
func TestWriteAllOrNothing(t *testing.T) {
	cfg, err := synth.Scale("tiny")
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = cfg.Shrunk(0.1); err != nil {
		t.Fatal(err)
	}
	w, err := synth.NewWorld(cfg, 1) // 4096-d: several chunks of records
	if err != nil {
		t.Fatal(err)
	}
	names := func(dir string) []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := synth.WriteOptions{Workers: 1, Progress: func(done, _ int64) {
		if done > int64(len(w.Items)) { // in the records, the text files done
			cancel()
		}
	}}
	if _, err := synth.Write(ctx, dir, "Demo", w, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted in the records: %v, want context.Canceled", err)
	}
	if got := names(dir); len(got) != 0 {
		t.Errorf("an interrupted write left %v", got)
	}
	if _, err := synth.Write(context.Background(), dir, "Demo", w, synth.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := names(dir); len(got) != 3 {
		t.Errorf("the retry wrote %v, want the three files", got)
	}

	dir = t.TempDir()
	_, _, emb := synth.Files2023(dir, "Demo")
	if err := os.Mkdir(emb, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := synth.Write2023(context.Background(), dir, "Demo", w, synth.WriteOptions{}); err == nil {
		t.Fatal("Write2023 over a directory in the embeddings' place succeeded")
	}
	if got := names(dir); len(got) != 1 {
		t.Errorf("a failed 2023 write left %v beside the directory", got)
	}
}

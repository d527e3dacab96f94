package schema

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestQueueBytes: tables appended through a Queue, some after Wait, give
// the bytes of Write, and a second Close returns what the first did.
func TestQueueBytes(t *testing.T) {
	const n = 1000
	rows := reviewsCols(n)
	dir := t.TempDir()
	want := filepath.Join(dir, "want.parquet")
	if _, err := Write(want, rows); err != nil {
		t.Fatal(err)
	}
	got := filepath.Join(dir, "got.parquet")
	w, err := NewWriter[ReviewsCols](got, RowGroupRows)
	if err != nil {
		t.Fatal(err)
	}
	q := NewQueue(w, 2)
	for lo := 0; lo < 900; lo += 97 {
		if err := q.Append(slice(rows, lo, min(900, lo+97))); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := q.Append(slice(rows, 900, n)); err != nil { // after Wait: on this goroutine
		t.Fatal(err)
	}
	for range 2 {
		if m, err := q.Close(); m != n || err != nil {
			t.Fatalf("Close = %d, %v", m, err)
		}
	}
	a, _ := os.ReadFile(want)
	b, _ := os.ReadFile(got)
	if !bytes.Equal(a, b) {
		t.Fatal("the queued table differs from Write's")
	}
}

package schema

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadVectors: a table of many row groups comes back row by row in
// file order, each batch's Row the file row of its first row, across
// group and batch boundaries.
func TestReadVectors(t *testing.T) {
	const n = 2*vectorBatchRows + 123
	var c EmbeddingsCols
	for i := range n {
		c.ParentASIN = append(c.ParentASIN, fmt.Sprintf("P%05d", i))
		c.Embedding = append(c.Embedding, []float32{float32(i), -float32(i) / 2})
	}
	path := filepath.Join(t.TempDir(), "emb.parquet")
	if _, err := write(path, c, 1000); err != nil {
		t.Fatal(err)
	}
	var next int64
	info, err := ReadVectors(context.Background(), path, func(b *VectorBatch) error {
		if b.Row != next {
			return fmt.Errorf("batch at row %d, want %d", b.Row, next)
		}
		for i, id := range b.IDs {
			r := b.Row + int64(i)
			v := b.F32[b.Off[i]:b.Off[i+1]]
			if id != c.ParentASIN[r] || b.Null[i] || b.IDNull[i] || !slices.Equal(v, c.Embedding[r]) {
				return fmt.Errorf("row %d: %s %v, want %s %v", r, id, v, c.ParentASIN[r], c.Embedding[r])
			}
		}
		next += int64(len(b.IDs))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if next != n || info.Rows != n || info.IDColumn != "parent_asin" || info.VectorColumn != "embedding" {
		t.Errorf("read %d rows, info %+v", next, info)
	}
}

// TestReadVectorsBothIDs: a table with both asin and parent_asin is
// refused, since either could key the items.
func TestReadVectorsBothIDs(t *testing.T) {
	type both struct {
		_          keyed
		ASIN       []string    `col:"asin"`
		ParentASIN []string    `col:"parent_asin"`
		Embedding  [][]float64 `col:"embedding"`
	}
	path := filepath.Join(t.TempDir(), "both.parquet")
	if _, err := Write(path, both{ASIN: []string{"a"}, ParentASIN: []string{"p"}, Embedding: [][]float64{{1}}}); err != nil {
		t.Fatal(err)
	}
	_, err := ReadVectors(context.Background(), path, func(*VectorBatch) error { return nil })
	if !errors.Is(err, ErrVectors) || !strings.Contains(err.Error(), "both asin and parent_asin") {
		t.Errorf("%v, want ErrVectors naming both columns", err)
	}
}

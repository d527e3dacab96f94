package stages

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"monomer/pipeline"
	"monomer/schema"
)

// checkDeclared checks that every Parquet table under dir has the columns
// (names, order, types) of a table declared in package schema: the stages
// write only declared tables, each through its typed struct.
func checkDeclared(t *testing.T, dir string) {
	t.Helper()
	same := func(a, b *arrow.Schema) bool {
		return slices.EqualFunc(a.Fields(), b.Fields(), func(f, g arrow.Field) bool {
			return f.Name == g.Name && arrow.TypeEqual(f.Type, g.Type)
		})
	}
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		tb, err := schema.Open(p)
		if err != nil {
			return err
		}
		defer tb.Release()
		n++
		if !slices.ContainsFunc(schema.Tables(), func(d schema.NamedSchema) bool { return same(tb.Schema(), d.Schema) }) {
			t.Errorf("%s: columns %v match no declared table", p, tb.Schema())
		}
		return nil
	})
	if err != nil || n < 20 {
		t.Fatalf("%d tables: %v", n, err)
	}
}

// fewerDeps is a real stage declaring fewer inputs than it reads.
type fewerDeps struct {
	pipeline.Stage
	deps []string
}

func (s fewerDeps) Deps() []string { return s.deps }

// The stages read their inputs through what env serves: split declaring
// ingest alone fails on reading negatives' tables, naming them.
func TestStageReadsOnlyDeclaredInputs(t *testing.T) {
	job := loadTestJob(t)
	st := Experiment()[:5]
	if st[4].Name() != "split" {
		t.Fatalf("stage 4 is %s", st[4].Name())
	}
	st[4] = fewerDeps{Split{}, []string{"ingest"}}
	_, err := pipeline.Run(t.Context(), job, st, nil, pipeline.Options{RunDir: t.TempDir(), Experiments: []string{"men-image"}})
	if !errors.Is(err, pipeline.ErrUndeclaredInput) || !strings.Contains(err.Error(), "men-image/split reads men-image/negatives") {
		t.Fatalf("err = %v, want an undeclared input", err)
	}
}

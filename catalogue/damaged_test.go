package catalogue

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"monomer/schema"
)

// A Parquet table with a damaged data page is bad input (ErrTable: exit 3,
// the same file fails the same way on a retry), as ReadVectors classes it.
func TestDamagedParquetPage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "items.parquet")
	if _, err := schema.Write(path, sample.items); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := pf.MetaData().RowGroup(0).ColumnChunk(0) // the ids
	if err != nil {
		t.Fatal(err)
	}
	at := cc.DataPageOffset()
	pf.Close()
	for i := at; i < at+24; i++ {
		b[i] = 0xff // the data page's header
	}
	damaged := filepath.Join(dir, "damaged.parquet")
	if err := os.WriteFile(damaged, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, _, err = readItems(t, damaged)
	if !errors.Is(err, ErrTable) {
		t.Errorf("damaged page: %v, want ErrTable", err)
	}
}

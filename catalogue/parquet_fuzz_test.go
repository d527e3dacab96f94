package catalogue

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"monomer/amazon"
	"monomer/schema"
)

// damageDir holds catalogue tables pyarrow wrote, with and without page
// CRCs (testdata/damage/pyarrow_damage.py).
const damageDir = "../testdata/damage"

// readParquetTables reads the Parquet file at path as each of the three
// tables and returns the first error but a missing column (the file is
// one of the three); it fails t where a table's rows are
// not accounted for (read = handed over + rejected + duplicates) or a
// reject is not on a row of the file.
func readParquetTables(t *testing.T, path string) error {
	base := filepath.Base(path)
	var rej []amazon.Reject
	reject := func(r amazon.Reject) { rej = append(rej, r) }
	check := func(table string, st Stats, handed int64, err error) error {
		rej0 := rej
		rej = nil
		if err != nil && strings.Contains(err.Error(), ": no column ") {
			return nil // the file is another table
		}
		if err != nil {
			return err
		}
		if st.Format != "parquet" {
			t.Fatalf("%s: read as %s", table, st.Format)
		}
		if st.Records != handed || st.Rows != st.Records+st.Rejected+st.Duplicates || int64(len(rej0)) != st.Rejected {
			t.Fatalf("%s: stats %+v, %d handed over, %d rejects", table, st, handed, len(rej0))
		}
		for _, j := range rej0 {
			if j.File != base || j.Line < 1 || j.Line > st.Rows || j.Offset != -1 || j.Err == "" {
				t.Fatalf("%s: reject %+v of %d rows", table, j, st.Rows)
			}
		}
		return nil
	}
	var n int64
	st, err := ReadItems(context.Background(), path, func(it *Item) error {
		n++
		if it.ID == "" || len(it.Categories) == 0 {
			t.Fatalf("item %+v", it)
		}
		return nil
	}, reject)
	if err := check("items", st, n, err); err != nil {
		return err
	}
	n = 0
	st, err = ReadRelations(context.Background(), path, "", func(r *Relation) error {
		n++
		if r.Src == "" || r.Dst == "" || r.Name == "" {
			t.Fatalf("pair %+v", r)
		}
		return nil
	}, reject)
	if err := check("relations", st, n, err); err != nil {
		return err
	}
	n = 0
	st, err = ReadText(context.Background(), path, func(*Doc) error { n++; return nil }, reject)
	return check("text", st, n, err)
}

// tableError reports whether err is a refusal of the file: ErrTable,
// naming it, on one line.
func tableError(err error, name string) bool {
	return errors.Is(err, ErrTable) && strings.Contains(err.Error(), name) && !strings.Contains(err.Error(), "\n")
}

// TestParquetFlipEveryByte flips each byte of pyarrow's items table with
// page CRCs: no panic escapes (on the old code the flip of byte 11, in a
// page header, made ReadItems panic in (*DataPageHeader).GetNumValues,
// which ingest turned into exit 1), every refusal is ErrTable naming the
// file (exit 3), and a flip inside a data page is refused for its CRC.
func TestParquetFlipEveryByte(t *testing.T) {
	clean, err := os.ReadFile(filepath.Join(damageDir, "items-crc.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "items.parquet")
	if err := os.WriteFile(path, clean, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := readParquetTables(t, path); err != nil {
		t.Fatalf("the clean file: %v", err)
	}
	// "Title 17" is a value of a data page, in no statistics (a row
	// group's titles run from "Title 0" to "Title 9").
	title := bytes.Index(clean, []byte("Title 17"))
	if title < 0 {
		t.Fatal("no Title 17 in the file")
	}
	var refused, checksum int
	for at := 4; at < len(clean); at++ { // a file not starting with PAR1 is read as CSV

		b := bytes.Clone(clean)
		b[at] ^= 0xff
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		err := readParquetTables(t, path)
		switch {
		case err == nil && at >= title && at < title+8:
			t.Fatalf("byte %d, in a value of a data page, flipped: read without an error", at)
		case err == nil:
		case !tableError(err, "items.parquet"):
			t.Fatalf("byte %d: %v, want ErrTable naming the file on one line", at, err)
		case errors.Is(err, schema.ErrDamaged) && strings.Contains(err.Error(), "checksum mismatch"):
			checksum++
			fallthrough
		default:
			refused++
		}
	}
	t.Logf("%d bytes: %d refused, %d of them for a page checksum", len(clean), refused, checksum)
	if checksum == 0 {
		t.Error("no flip was refused for its page checksum")
	}
}

// FuzzCatalogueParquet is FuzzCatalogueCSV for Parquet tables: arbitrary
// bytes, seeded with pyarrow's catalogue tables with and without page
// CRCs, read as each of the three tables: no panic, every row accounted
// for, and a failure only ErrTable naming the file.
func FuzzCatalogueParquet(f *testing.F) {
	for _, s := range []string{"items-crc.parquet", "items.parquet", "items-v2-crc.parquet", "relations-crc.parquet"} {
		b, err := os.ReadFile(filepath.Join(damageDir, s))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !bytes.HasPrefix(data, []byte("PAR1")) {
			t.Skip("read as CSV: FuzzCatalogueCSV's")
		}
		path := filepath.Join(t.TempDir(), "t.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := readParquetTables(t, path); err != nil && !tableError(err, "t.parquet") {
			t.Fatalf("%v, want ErrTable naming the file on one line", err)
		}
	})
}

// TestParquetNoColumn: a Parquet table without a required column lists
// the columns it has, as a CSV table's header is listed (the old message
// named the missing column alone).
func TestParquetNoColumn(t *testing.T) {
	_, _, _, err := readItems(t, filepath.Join(damageDir, "relations-crc.parquet"))
	want := "relations-crc.parquet: no column id among its columns (src, dst, relation)"
	if !errors.Is(err, ErrTable) || !strings.Contains(err.Error(), want) {
		t.Errorf("items from a relations table: %v, want ErrTable with %q", err, want)
	}
}

package schema

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// damageDir holds Parquet files pyarrow wrote, with and without page
// CRCs (testdata/damage/pyarrow_damage.py).
const damageDir = "../testdata/damage"

func damageSeed(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(damageDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readEvery reads the file at path as show, diff and the embeddings
// stage do: every row of every column through Head (each cell turned to
// text), the whole table (Compare's ReadTable), and as a vector table.
// It returns the first error, or nil when all three read.
func readEvery(ctx context.Context, path string) error {
	err := Head(ctx, path, -1, func(int64, *arrow.Schema) error { return nil },
		func(rec arrow.RecordBatch) error {
			for c := range int(rec.NumCols()) {
				for r := range int(rec.NumRows()) {
					CellText(rec.Column(c), r)
				}
			}
			return nil
		})
	if err != nil {
		return err
	}
	tbl, err := ReadTable(ctx, path)
	if err != nil {
		return err
	}
	tbl.Release()
	_, err = ReadVectors(ctx, path, func(*VectorBatch) error { return nil })
	if errors.Is(err, ErrVectors) && !errors.Is(err, ErrDamaged) {
		err = nil // not a vector table: a refusal of its columns, not of its bytes
	}
	return err
}

// badData reports whether err is the bad-data class for a damaged file:
// ErrDamaged, naming the file.
func badData(err error, name string) bool {
	return errors.Is(err, ErrDamaged) && strings.Contains(err.Error(), name) && !strings.Contains(err.Error(), "\n")
}

// TestFlipEveryByte flips each byte of small pyarrow files, with and
// without page CRCs, and reads every column: no panic escapes (on the
// old code a flip of the items table's page header made Head panic in
// (*DataPageHeader).GetNumValues), and every failure is ErrDamaged naming
// the file on one line.
func TestFlipEveryByte(t *testing.T) {
	// The v2 and types files are FuzzHead's seeds, not swept here; in
	// short mode only the first file is (the three take half a minute on
	// two shared cores).
	for i, seed := range []string{"items-crc.parquet", "items.parquet", "emb-crc.parquet"} {
		t.Run(seed, func(t *testing.T) {
			if i > 0 && testing.Short() {
				t.Skip("short: the file with CRCs only")
			}
			clean := damageSeed(t, seed)
			path := filepath.Join(t.TempDir(), "flip.parquet")
			counts := map[string]int{}
			for at := range clean {
				b := bytes.Clone(clean)
				b[at] ^= 0xff
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				err := readEvery(t.Context(), path)
				switch {
				case err == nil:
					counts["read"]++
				case !badData(err, "flip.parquet"):
					t.Fatalf("byte %d: %v, want ErrDamaged naming the file on one line", at, err)
				case strings.Contains(err.Error(), "checksum mismatch"):
					counts["checksum"]++
				default:
					counts["refused"]++
				}
			}
			t.Logf("%d bytes: %v", len(clean), counts)
		})
	}
}

// TestPageChecksum: a flip of any byte of a value in a data page of a
// file with page CRCs is refused, naming the file, the column and the
// page's offset. The values are found by their text (plain encoding, no
// compression), not by walking the pages as checkPages does; the
// titles chosen are neither a row group's minimum nor its maximum, so
// they are in no statistics. The same flips of the file without CRCs
// are not refused: the check is the CRC's, not the walk's.
func TestPageChecksum(t *testing.T) {
	for _, tc := range []struct {
		seed    string
		refused bool
	}{
		{"items-crc.parquet", true},
		{"items-v2-crc.parquet", true},
	} {
		clean := damageSeed(t, tc.seed)
		path := filepath.Join(t.TempDir(), "flip.parquet")
		flips := 0
		for _, v := range []string{"Title 13", "Title 17", "Title 22", "Title 31"} {
			at := bytes.Index(clean, []byte(v))
			if at < 0 || bytes.Count(clean, []byte(v)) != 1 {
				t.Fatalf("%s: %q appears %d times", tc.seed, v, bytes.Count(clean, []byte(v)))
			}
			for i := at; i < at+len(v); i++ {
				b := bytes.Clone(clean)
				b[i] ^= 0x01
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				flips++
				err := readEvery(t.Context(), path)
				if !badData(err, "flip.parquet") || !strings.Contains(err.Error(), "checksum mismatch") ||
					!strings.Contains(err.Error(), "column title") || !strings.Contains(err.Error(), "page at byte ") {
					t.Fatalf("%s: byte %d of %q flipped: %v, want a checksum mismatch naming the file, column and page", tc.seed, i, v, err)
				}
			}
		}
		if flips == 0 {
			t.Fatalf("%s: no flip", tc.seed)
		}
	}
	// Without CRCs the same change is read as it is.
	clean := damageSeed(t, "items-plain.parquet")
	at := bytes.Index(clean, []byte("Title 17"))
	if at < 0 {
		t.Fatal("no Title 17 in items-plain.parquet")
	}
	b := bytes.Clone(clean)
	b[at+len("Title 1")] = '8'
	path := filepath.Join(t.TempDir(), "nocrc.parquet")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := readEvery(t.Context(), path); err != nil {
		t.Fatalf("a file without CRCs and a changed value: %v, want it read", err)
	}
}

// TestNotParquet: a file that is not Parquet says so, rather than
// arrow-go's words about its footer (a CSV file was "smaller than
// indicated metadata size").
func TestNotParquet(t *testing.T) {
	dir := t.TempDir()
	clean := damageSeed(t, "emb.parquet")
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"emb.csv", []byte("id,embedding\nI00,\"[1, 2]\"\nI01,\"[3, 4]\"\n"), `not a Parquet file: it begins with "id,e"`},
		{"short", []byte("PAR1"), "not a Parquet file: 4 bytes"},
		{"cut", clean[:len(clean)-1], "not a whole Parquet file"},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadVectors(t.Context(), path, func(*VectorBatch) error { return nil })
		if !badData(err, tc.name) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrDamaged with %q", tc.name, err, tc.want)
		}
	}
}

// FuzzHead reads arbitrary bytes as show, diff and the embeddings stage
// read a table (readEvery): no panic, and any failure ErrDamaged naming
// the file on one line. Seeded with pyarrow's files, with and without
// page CRCs.
func FuzzHead(f *testing.F) {
	for _, s := range []string{"items-crc.parquet", "items.parquet", "items-v2-crc.parquet", "types-crc.parquet"} {
		f.Add(damageSeed(f, s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := readEvery(context.Background(), path); err != nil && !badData(err, "fuzz.parquet") {
			t.Fatalf("%v, want ErrDamaged naming the file on one line", err)
		}
	})
}

// FuzzReadVectors is FuzzHead for the embeddings reader alone: every
// batch's offsets lie within its values, and a failure is ErrVectors
// (ErrDamaged too when the bytes are at fault).
func FuzzReadVectors(f *testing.F) {
	for _, s := range []string{"emb-crc.parquet", "emb.parquet"} {
		f.Add(damageSeed(f, s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "emb.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		info, err := ReadVectors(context.Background(), path, func(b *VectorBatch) error {
			n := max(len(b.F32), len(b.F64))
			if len(b.Off) != len(b.IDs)+1 || len(b.Null) != len(b.IDs) || len(b.IDNull) != len(b.IDs) {
				return fmt.Errorf("batch of %d ids, %d offsets, %d nulls", len(b.IDs), len(b.Off), len(b.Null))
			}
			for i := range b.IDs {
				if b.Off[i] < 0 || b.Off[i] > b.Off[i+1] || b.Off[i+1] > n {
					return fmt.Errorf("row %d: offsets %d..%d of %d values", i, b.Off[i], b.Off[i+1], n)
				}
			}
			return nil
		})
		switch {
		case err == nil:
			if info.Rows < 0 {
				t.Fatalf("info %+v", info)
			}
		case !errors.Is(err, ErrVectors) || !strings.Contains(err.Error(), "emb.parquet") || strings.Contains(err.Error(), "\n"):
			t.Fatalf("%v, want ErrVectors naming the file on one line", err)
		}
	})
}

// TestFlipStoreTable flips each byte of a table monomer writes (every
// column type, row groups of 10) and reads it as a stage does, ReadAll
// and Batches: every failure is ErrDamaged naming the file (or a column
// of another name or type), so a damaged table in a run directory or the
// store is exit 3. The old code returned
// the same failures unclassed (exit 1, retried), some as a recovered
// decoder panic.
func TestFlipStoreTable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.parquet")
	if _, err := write(path, everyTypeRows(30), 10); err != nil {
		t.Fatal(err)
	}
	clean, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Every fifth byte (15th in short mode): a read takes milliseconds.
	step := 5
	if testing.Short() {
		step = 15
	}
	failed := 0
	for at := 0; at < len(clean); at += step {
		b := bytes.Clone(clean)
		b[at] ^= 0xff
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadAll[everyType](t.Context(), path)
		if err == nil {
			for _, err = range Batches[everyType](t.Context(), path) {
				if err != nil {
					break
				}
			}
		}
		if err == nil {
			continue
		}
		failed++
		// A flip in the stored schema can also give a column another
		// name or type: then the file is not the table asked for.
		other := errors.Is(err, ErrNoColumn) || strings.Contains(err.Error(), ", want ")
		if !errors.Is(err, ErrDamaged) && !other || !strings.Contains(err.Error(), path) {
			t.Fatalf("byte %d: %v, want ErrDamaged naming the file", at, err)
		}
	}
	t.Logf("%d of %d bytes flipped refused", failed, (len(clean)+step-1)/step)
}

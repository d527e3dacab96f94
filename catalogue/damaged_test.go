package catalogue

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"monomer/schema"
)

// sampleItemsFile writes the sample's items table and returns its
// directory, path and bytes, for a test to damage.
func sampleItemsFile(t *testing.T) (dir, path string, b []byte) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "items.parquet")
	if _, err := schema.Write(path, sample.items); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return dir, path, b
}

// A Parquet table with a damaged data page is bad input (ErrTable: exit 3,
// the same file fails the same way on a retry), as ReadVectors classes it.
func TestDamagedParquetPage(t *testing.T) {
	dir, path, b := sampleItemsFile(t)
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

// A table whose stored Arrow schema claims 2^30 fields is bad input too,
// refused before arrow-go would allocate for them (the process ended out
// of memory, exit 2).
func TestDamagedStoredSchema(t *testing.T) {
	dir, _, b := sampleItemsFile(t)
	// The footer's value after the key: base64 of an IPC message (8 bytes
	// of framing, then the Message flatbuffer). Same length re-encoded.
	key := bytes.LastIndex(b, []byte("ARROW:schema"))
	loc := regexp.MustCompile(`[A-Za-z0-9+/=]{16,}`).FindIndex(b[key+len("ARROW:schema"):])
	if key < 0 || loc == nil {
		t.Fatal("no stored schema in the file")
	}
	s, e := key+len("ARROW:schema")+loc[0], key+len("ARROW:schema")+loc[1]
	raw, err := base64.StdEncoding.DecodeString(string(b[s:e]))
	if err != nil {
		t.Fatal(err)
	}
	fb := raw[8:]
	u32 := func(at int) int { return int(binary.LittleEndian.Uint32(fb[at:])) }
	slot := func(pos, i int) int { // where field i of the table at pos is
		vt := pos - int(int32(u32(pos)))
		return pos + int(binary.LittleEndian.Uint16(fb[vt+4+2*i:]))
	}
	at := slot(u32(0), 2) // Message.header: the Schema
	sch := at + u32(at)
	at = slot(sch, 1) // Schema.fields
	binary.LittleEndian.PutUint32(fb[at+u32(at):], 1<<30)
	copy(b[s:e], base64.StdEncoding.EncodeToString(raw))
	damaged := filepath.Join(dir, "damaged.parquet")
	if err := os.WriteFile(damaged, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, _, err = readItems(t, damaged)
	if !errors.Is(err, ErrTable) || !strings.Contains(err.Error(), "damaged.parquet") ||
		!strings.Contains(err.Error(), "vector of 1073741824") {
		t.Errorf("damaged stored schema: %v, want ErrTable naming the file and the count", err)
	}
}

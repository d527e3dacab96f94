package schema

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// storedSchemaRecord is a table with the shapes a shop's own files may
// have: field metadata, lists, a struct holding a list, a dictionary.
func storedSchemaRecord(t *testing.T) arrow.RecordBatch {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "asin", Type: arrow.BinaryTypes.String, Metadata: arrow.NewMetadata([]string{"unit"}, []string{"id"})},
		{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "vals", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)},
		{Name: "nest", Type: arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64},
			arrow.Field{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String)},
		)},
		{Name: "kind", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}},
	}, &arrow.Metadata{})
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(`[
		{"asin": "B000000001", "n": 1, "vals": [0.5, 1.5], "nest": {"a": 7, "tags": ["x", "y"]}, "kind": "shoe"},
		{"asin": "B000000002", "n": null, "vals": [], "nest": {"a": 8, "tags": []}, "kind": "hat"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// storedSchema returns the ARROW:schema value pqarrow wrote for rec.
func storedSchema(t *testing.T, dir string, rec arrow.RecordBatch) string {
	t.Helper()
	path := filepath.Join(dir, "stored.parquet")
	writeRecord(t, path, rec)
	rdr, err := openParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	v := rdr.MetaData().KeyValueMetadata().FindValue("ARROW:schema")
	if v == nil {
		t.Fatal("pqarrow stored no ARROW:schema")
	}
	return *v
}

// writeWithSchema writes rec with value as its ARROW:schema.
func writeWithSchema(t *testing.T, path string, rec arrow.RecordBatch, value string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendKeyValueMetadata("ARROW:schema", value); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStoredSchemaDamaged changes each byte of a stored Arrow schema in
// three ways and reads the file: each read returns the table or an error
// naming the file. Without checkStoredSchema some changes end the test
// binary (arrow-go asks for a slice of billions of fields, or recurses
// without end); without newFileReader's recover others panic.
func TestStoredSchemaDamaged(t *testing.T) {
	dir := t.TempDir()
	rec := storedSchemaRecord(t)
	defer rec.Release()
	good := storedSchema(t, dir, rec)
	raw, err := base64.StdEncoding.DecodeString(good)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "damaged.parquet")
	refused, read := 0, 0
	for i := range raw {
		for _, x := range []byte{0x01, 0x80, 0xFF} {
			b := append([]byte(nil), raw...)
			b[i] ^= x
			writeWithSchema(t, path, rec, base64.StdEncoding.EncodeToString(b))
			tbl, err := ReadTable(context.Background(), path)
			if err != nil {
				if !strings.Contains(err.Error(), path) {
					t.Fatalf("byte %d ^ %#x: error without the file's name: %v", i, x, err)
				}
				refused++
				continue
			}
			if tbl.NumRows() != rec.NumRows() {
				t.Fatalf("byte %d ^ %#x: %d rows, want %d", i, x, tbl.NumRows(), rec.NumRows())
			}
			tbl.Release()
			read++
		}
	}
	t.Logf("%d bytes × 3 changes: %d refused, %d read", len(raw), refused, read)
	if refused == 0 || read == 0 {
		t.Fatalf("refused %d, read %d: expected both (changes to names and padding read fine)", refused, read)
	}
}

// TestStoredSchemaCounts plants the two faults that end the process
// without the check: a field claiming 2^31 children, and a message body
// of 2^40 bytes. Both must be refused by the check itself.
func TestStoredSchemaCounts(t *testing.T) {
	dir := t.TempDir()
	rec := storedSchemaRecord(t)
	defer rec.Release()
	raw, err := base64.StdEncoding.DecodeString(storedSchema(t, dir, rec))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSchemaMessage(raw); err != nil {
		t.Fatalf("pqarrow's own schema refused: %v", err)
	}
	at := 8 // after the continuation marker and length
	fb := fbuf{b: raw[at:]}
	msg, _ := fb.root()
	sch, _, _ := fb.child(msg, 2)
	fs, err := fb.tables(sch, 1)
	if err != nil || len(fs) != 5 {
		t.Fatalf("fields %v, %v", fs, err)
	}
	v, ok, err := fb.child(fs[3], 5) // "nest"'s children vector
	if err != nil || !ok {
		t.Fatalf("nest's children: %v %v", ok, err)
	}
	if n, _ := fb.u32(v); n != 2 {
		t.Fatalf("nest has %d children, want 2", n)
	}
	b := append([]byte(nil), raw...)
	binary.LittleEndian.PutUint32(b[at+v:], 1<<31)
	if err := checkSchemaMessage(b); err == nil || !strings.Contains(err.Error(), "vector of 2147483648") {
		t.Fatalf("2^31 children: %v", err)
	}

	// A schema message has no body; the record batch after it in an IPC
	// stream does, and its length is read the same way.
	var stream bytes.Buffer
	w := ipc.NewWriter(&stream, ipc.WithSchema(rec.Schema()))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s := stream.Bytes()
	next := 8 + int(binary.LittleEndian.Uint32(s[4:])) // the second message
	batch := s[next:]
	bfb := fbuf{b: batch[8:]}
	bmsg, _ := bfb.root()
	body := bfb.field(bmsg, 3)
	if body < 0 {
		t.Fatal("the record batch has no body length")
	}
	if err := checkSchemaMessage(batch); err == nil || !strings.Contains(err.Error(), "not a schema") {
		t.Fatalf("record batch as is: %v", err)
	}
	b = append([]byte(nil), batch...)
	binary.LittleEndian.PutUint64(b[8+body:], 1<<40)
	if err := checkSchemaMessage(b); err == nil || !strings.Contains(err.Error(), "body of 1099511627776") {
		t.Fatalf("2^40-byte body: %v", err)
	}
}

// TestStoredSchemaDisagrees reads a file whose stored schema is another
// table's: a list column stored as a string. pqarrow accepts that schema
// and its reader then panics on a nil column reader; ReadTable must give
// an error naming the field instead.
func TestStoredSchemaDisagrees(t *testing.T) {
	dir := t.TempDir()
	rec := storedSchemaRecord(t)
	defer rec.Release()
	other := arrow.NewSchema([]arrow.Field{
		{Name: "asin", Type: arrow.BinaryTypes.String},
		{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "vals", Type: arrow.BinaryTypes.LargeString},
		{Name: "nest", Type: rec.Schema().Field(3).Type},
		{Name: "kind", Type: rec.Schema().Field(4).Type},
	}, nil)
	stored := flight.SerializeSchema(other, memory.DefaultAllocator)
	path := filepath.Join(dir, "disagrees.parquet")
	writeWithSchema(t, path, rec, base64.StdEncoding.EncodeToString(stored))
	_, err := ReadTable(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `field "vals"`) {
		t.Fatalf("got %v, want an error naming %s and field \"vals\"", err, path)
	}
}

// TestStoredSchemaOtherWriters: the schema pyarrow stores for every type
// it writes to Parquet (dictionaries, decimals, time zones, fixed-size,
// large and nested lists, maps, structs, float16, field and table
// metadata; testdata/pyarrow_types.py) passes the check and reads.
func TestStoredSchemaOtherWriters(t *testing.T) {
	path := filepath.Join("testdata", "pyarrow-types.parquet")
	rdr, err := openParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	raw := rdr.MetaData().KeyValueMetadata().FindValue("ARROW:schema")
	if raw == nil {
		t.Fatal("no stored schema: the fixture does not test the check")
	}
	tbl, err := ReadTable(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if tbl.NumRows() != 3 || tbl.NumCols() != 12 {
		t.Fatalf("%d rows × %d columns, want 3 × 12", tbl.NumRows(), tbl.NumCols())
	}
	// The stored schema's types, not the Parquet ones: a dictionary, a
	// time zone, a fixed-size list.
	for name, want := range map[string]string{
		"category": "dictionary<values=utf8, indices=int32, ordered=false>",
		"seen":     "timestamp[ms, tz=UTC]",
		"emb":      "fixed_size_list<element: float32, nullable>[4]",
	} {
		f, ok := tbl.Schema().FieldsByName(name)
		if !ok || f[0].Type.String() != want {
			t.Errorf("%s: %v, want %s", name, f, want)
		}
	}
}

package schema

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// The Arrow schema a Parquet writer stores in the footer (key ARROW:schema,
// base64 of an IPC stream whose first message is a Schema flatbuffer) is
// read by pqarrow before any column. arrow-go sizes its slices from the
// flatbuffer's own counts (fields, children, key-value pairs, the message
// body) and recurses into children by offset, so one changed byte can ask
// for hundreds of GB or loop forever: the runtime then ends the process,
// which no recover stops. checkStoredSchema walks the same structure first
// and refuses any offset, count or nesting that the bytes cannot hold.
// Layouts: Message.fbs and Schema.fbs of the Arrow format
// (https://github.com/apache/arrow/tree/main/format); flatbuffer tables and
// vectors as in https://flatbuffers.dev/internals/.

// maxSchemaDepth bounds the nesting of fields; arrow-go recurses once a
// level. Real schemas nest a few levels (a list of structs of lists).
const maxSchemaDepth = 64

// checkStoredSchema returns an error when the footer's stored Arrow schema
// is present but cannot be read within its own bytes.
func checkStoredSchema(kv metadata.KeyValueMetadata) error {
	s := kv.FindValue("ARROW:schema")
	if s == nil {
		return nil
	}
	// Decoded as pqarrow does: padded base64 when the length allows, else
	// (or when that fails) unpadded.
	var raw []byte
	var err error
	if len(*s)%4 == 0 {
		raw, err = base64.StdEncoding.DecodeString(*s)
	}
	if len(raw) == 0 || err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(*s)
	}
	if err != nil {
		return fmt.Errorf("stored Arrow schema: %w", err)
	}
	if err := checkSchemaMessage(raw); err != nil {
		return fmt.Errorf("stored Arrow schema: %w", err)
	}
	return nil
}

var (
	errSchemaBounds = errors.New("offset or length outside its bytes")
	errTooMany      = errors.New("more fields and key-value pairs than its bytes can hold")
)

// checkSchemaMessage checks the first message of an IPC stream: its
// framing, the Message table, its body length against the bytes left, and
// the Schema it holds.
func checkSchemaMessage(b []byte) error {
	fb, msg, kind, budget, err := message(b, -1)
	if err != nil {
		return err
	}
	if kind != 1 { // MessageHeader.Schema
		return errors.New("first message is not a schema")
	}
	sch, ok, err := fb.child(msg, 2)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("schema message without its schema")
	}
	return fb.schema(sch, &budget)
}

// CheckArrowFile checks the footer of an Arrow IPC file (File.fbs: the
// file ends with the Footer flatbuffer, its length as an int32 and
// "ARROW1") as checkStoredSchema checks a stored schema, and that every
// record batch and dictionary block it lists lies inside data. arrow-go's
// file reader trusts the footer's counts as its IPC reader does (a
// changed byte made it ask for 22 GB): call it before ipc.NewFileReader
// or NewMappedFileReader.
func CheckArrowFile(data []byte) error {
	const tail = 10 // the footer's length and the magic
	if len(data) < tail+8 {
		return fmt.Errorf("Arrow file of %d bytes", len(data))
	}
	n := int64(int32(binary.LittleEndian.Uint32(data[len(data)-tail:])))
	if n < 8 || n > int64(len(data)-tail-8) {
		return fmt.Errorf("Arrow file footer of %d bytes in %d", n, len(data))
	}
	fb := fbuf{b: data[len(data)-tail-int(n) : len(data)-tail]}
	root, err := fb.root()
	if err != nil {
		return err
	}
	if err := fb.table(root); err != nil {
		return err
	}
	budget := len(fb.b) / 4
	sch, ok, err := fb.child(root, 1) // Footer: version, schema, dictionaries, recordBatches, custom_metadata
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("Arrow file footer without a schema")
	}
	if err := fb.schema(sch, &budget); err != nil {
		return err
	}
	for _, slot := range []int{2, 3} {
		// Block: offset int64, metaDataLength int32 (and 4 of padding),
		// bodyLength int64.
		start, nb, err := fb.vector(root, slot, 24)
		if err != nil {
			return err
		}
		for i := range nb {
			b := fb.b[start+24*i:]
			off := int64(binary.LittleEndian.Uint64(b))
			meta := int64(int32(binary.LittleEndian.Uint32(b[8:])))
			body := int64(binary.LittleEndian.Uint64(b[16:]))
			if off < 0 || meta < 0 || body < 0 || off > int64(len(data)) || meta > int64(len(data))-off || body > int64(len(data))-off-meta {
				return fmt.Errorf("block %d (offset %d, %d + %d bytes) outside the file's %d", i, off, meta, body, len(data))
			}
			if err := checkBatchMessage(data[off:off+meta], body, slot == 2); err != nil {
				return fmt.Errorf("block %d at offset %d: %w", i, off, err)
			}
		}
	}
	return fb.keyValues(root, 4, &budget)
}

// checkBatchMessage checks a record batch's (or, with dict, a dictionary
// batch's) message in an Arrow file: its framing, a body length within the
// block's body bytes, and its nodes and buffers. Buffers must lie in the
// body, and a compressed batch is refused: arrow-go allocates each
// buffer's uncompressed size as the body's first 8 bytes give it, which
// nothing bounds (a changed byte that set the compression asked for
// 40 GB), and no monomer file compresses its batches.
func checkBatchMessage(b []byte, body int64, dict bool) error {
	fb, msg, kind, _, err := message(b, body)
	if err != nil {
		return err
	}
	want := byte(3) // MessageHeader.RecordBatch
	if dict {
		want = 2 // MessageHeader.DictionaryBatch
	}
	if kind != want {
		return fmt.Errorf("message of kind %d, want %d", kind, want)
	}
	rb, ok, err := fb.child(msg, 2)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("batch message without its batch")
	}
	if err := fb.table(rb); err != nil {
		return err
	}
	if dict { // DictionaryBatch: id, data (the RecordBatch), isDelta
		if rb, ok, err = fb.child(rb, 1); err != nil {
			return err
		} else if !ok {
			return errors.New("dictionary batch without its data")
		}
		if err := fb.table(rb); err != nil {
			return err
		}
	}
	// RecordBatch: length, nodes, buffers, compression, variadicBufferCounts.
	if _, _, err := fb.vector(rb, 1, 16); err != nil { // FieldNode: length, null_count
		return err
	}
	start, nb, err := fb.vector(rb, 2, 16) // Buffer: offset, length
	if err != nil {
		return err
	}
	for i := range nb {
		o := int64(binary.LittleEndian.Uint64(fb.b[start+16*i:]))
		l := int64(binary.LittleEndian.Uint64(fb.b[start+16*i+8:]))
		if o < 0 || l < 0 || o > body || l > body-o {
			return fmt.Errorf("buffer %d (offset %d, %d bytes) outside the body's %d", i, o, l, body)
		}
	}
	if at := fb.field(rb, 3); at >= 0 {
		return errors.New("a compressed batch (not read: its sizes are unbounded)")
	}
	_, _, err = fb.vector(rb, 4, 8)
	return err
}

// message checks an IPC message: its framing (a continuation marker or
// not, then its length), the Message table, a body length within body
// bytes (within the bytes after the message when body is negative) and
// its key-value pairs. It returns the message's flatbuffer, the table's
// position, the header's kind (0 when absent) and what is left of the
// budget of tables a walk may meet: each takes at least its 4-byte
// offset, so more means offsets that point back at tables already read.
func message(b []byte, body int64) (fb fbuf, msg int, kind byte, budget int, err error) {
	if len(b) < 4 {
		return fb, 0, 0, 0, fmt.Errorf("message of %d bytes", len(b))
	}
	n, at := binary.LittleEndian.Uint32(b), 4
	if n == 0xFFFFFFFF { // continuation marker, then the length
		if len(b) < 8 {
			return fb, 0, 0, 0, fmt.Errorf("message of %d bytes", len(b))
		}
		n, at = binary.LittleEndian.Uint32(b[4:]), 8
	}
	if n < 4 || uint64(n) > uint64(len(b)-at) {
		return fb, 0, 0, 0, fmt.Errorf("message of %d bytes in %d", n, len(b)-at)
	}
	if body < 0 {
		body = int64(len(b) - at - int(n))
	}
	fb = fbuf{b: b[at : at+int(n)]}
	if msg, err = fb.root(); err != nil {
		return fb, 0, 0, 0, err
	}
	if err := fb.table(msg); err != nil {
		return fb, 0, 0, 0, err
	}
	bl, err := fb.scalar(msg, 3, 8)
	if err != nil {
		return fb, 0, 0, 0, err
	}
	if bl != nil {
		if v := int64(binary.LittleEndian.Uint64(bl)); v < 0 || v > body {
			return fb, 0, 0, 0, fmt.Errorf("message body of %d bytes in %d", v, body)
		}
	}
	budget = len(fb.b) / 4
	if err := fb.keyValues(msg, 4, &budget); err != nil {
		return fb, 0, 0, 0, err
	}
	k, err := fb.scalar(msg, 1, 1)
	if err != nil {
		return fb, 0, 0, 0, err
	}
	if k != nil {
		kind = k[0]
	}
	return fb, msg, kind, budget, nil
}

// schema checks the Schema table at sch: its key-value pairs, features
// and fields.
func (f fbuf) schema(sch int, budget *int) error {
	if err := f.table(sch); err != nil {
		return err
	}
	if _, err := f.scalar(sch, 0, 2); err != nil { // endianness
		return err
	}
	if err := f.keyValues(sch, 2, budget); err != nil {
		return err
	}
	if _, _, err := f.vector(sch, 3, 8); err != nil { // features
		return err
	}
	return f.fields(sch, 1, 0, budget)
}

// fbuf reads a flatbuffer with every offset and length checked.
type fbuf struct{ b []byte }

func (f fbuf) u32(at int) (int, error) {
	if at < 0 || at > len(f.b)-4 {
		return 0, errSchemaBounds
	}
	return int(binary.LittleEndian.Uint32(f.b[at:])), nil
}

// root is the position of the root table.
func (f fbuf) root() (int, error) {
	off, err := f.u32(0)
	if err != nil {
		return 0, err
	}
	return off, nil
}

// table checks the table at pos: its vtable and its inline bytes lie in
// the buffer.
func (f fbuf) table(pos int) error {
	so, err := f.u32(pos)
	if err != nil {
		return err
	}
	vt := pos - int(int32(so))
	if vt < 0 || vt > len(f.b)-4 {
		return errSchemaBounds
	}
	vsize := int(binary.LittleEndian.Uint16(f.b[vt:]))
	tsize := int(binary.LittleEndian.Uint16(f.b[vt+2:]))
	if vsize < 4 || vsize%2 != 0 || vt+vsize > len(f.b) || tsize < 4 || pos+tsize > len(f.b) {
		return errSchemaBounds
	}
	for s := 4; s < vsize; s += 2 {
		if int(binary.LittleEndian.Uint16(f.b[vt+s:])) >= tsize {
			return errSchemaBounds
		}
	}
	return nil
}

// field is where slot's value lies in the table at pos (checked by
// table), or -1 when the slot is absent.
func (f fbuf) field(pos, slot int) int {
	vt := pos - int(int32(binary.LittleEndian.Uint32(f.b[pos:])))
	vsize := int(binary.LittleEndian.Uint16(f.b[vt:]))
	if 4+2*slot >= vsize {
		return -1
	}
	o := int(binary.LittleEndian.Uint16(f.b[vt+4+2*slot:]))
	if o == 0 {
		return -1
	}
	return pos + o
}

// scalar returns the size bytes of a scalar slot, or nil when absent.
func (f fbuf) scalar(pos, slot, size int) ([]byte, error) {
	at := f.field(pos, slot)
	if at < 0 {
		return nil, nil
	}
	if at > len(f.b)-size {
		return nil, errSchemaBounds
	}
	return f.b[at : at+size], nil
}

// child follows the offset in slot to the position it names.
func (f fbuf) child(pos, slot int) (int, bool, error) {
	at := f.field(pos, slot)
	if at < 0 {
		return 0, false, nil
	}
	off, err := f.u32(at)
	if err != nil {
		return 0, false, err
	}
	if off == 0 || at+off > len(f.b)-4 {
		return 0, false, errSchemaBounds
	}
	return at + off, true, nil
}

// vector returns where the elements of the vector in slot start and their
// count, checked to fit the buffer at elem bytes each.
func (f fbuf) vector(pos, slot, elem int) (start, n int, err error) {
	v, ok, err := f.child(pos, slot)
	if err != nil || !ok {
		return 0, 0, err
	}
	n, err = f.u32(v)
	if err != nil {
		return 0, 0, err
	}
	if n > (len(f.b)-v-4)/elem {
		return 0, 0, fmt.Errorf("vector of %d in %d bytes", n, len(f.b)-v-4)
	}
	return v + 4, n, nil
}

// str checks the string in slot.
func (f fbuf) str(pos, slot int) error {
	_, _, err := f.vector(pos, slot, 1)
	return err
}

// tables returns the positions of the vector of tables in slot, each
// checked as a table.
func (f fbuf) tables(pos, slot int) ([]int, error) {
	start, n, err := f.vector(pos, slot, 4)
	if err != nil {
		return nil, err
	}
	out := make([]int, n)
	for i := range out {
		at := start + 4*i
		off, _ := f.u32(at) // in range: the vector fits
		if off == 0 || at+off > len(f.b)-4 {
			return nil, errSchemaBounds
		}
		out[i] = at + off
		if err := f.table(out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// keyValues checks a vector of KeyValue tables (key, value strings),
// counting them against budget.
func (f fbuf) keyValues(pos, slot int, budget *int) error {
	kvs, err := f.tables(pos, slot)
	if err != nil {
		return err
	}
	if *budget -= len(kvs); *budget < 0 {
		return errTooMany
	}
	for _, kv := range kvs {
		if err := f.str(kv, 0); err != nil {
			return err
		}
		if err := f.str(kv, 1); err != nil {
			return err
		}
	}
	return nil
}

// fields checks the vector of Field tables in slot and their children,
// depth levels down, counting every field against budget so that offsets
// which point back at a parent or share a subtree cannot make the walk
// (or arrow-go's, which is the same walk) endless or exponential.
func (f fbuf) fields(pos, slot, depth int, budget *int) error {
	if depth > maxSchemaDepth {
		return fmt.Errorf("fields nested over %d deep", maxSchemaDepth)
	}
	fs, err := f.tables(pos, slot)
	if err != nil {
		return err
	}
	if *budget -= len(fs); *budget < 0 {
		return errTooMany
	}
	for _, fd := range fs {
		if err := f.str(fd, 0); err != nil { // name
			return err
		}
		if _, err := f.scalar(fd, 1, 1); err != nil { // nullable
			return err
		}
		tt, err := f.scalar(fd, 2, 1)
		if err != nil {
			return err
		}
		if tt == nil || tt[0] == 0 {
			return errors.New("a field without a type")
		}
		ty, ok, err := f.child(fd, 3)
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("a field without a type")
		}
		if err := f.table(ty); err != nil {
			return err
		}
		switch tt[0] { // the type tables with a vector or string
		case 10: // Type.Timestamp: unit, timezone
			if err := f.str(ty, 1); err != nil {
				return err
			}
		case 14: // Type.Union: mode, typeIds
			if _, _, err := f.vector(ty, 1, 4); err != nil {
				return err
			}
		}
		if d, ok, err := f.child(fd, 4); err != nil { // dictionary
			return err
		} else if ok {
			if err := f.table(d); err != nil {
				return err
			}
			if it, ok, err := f.child(d, 1); err != nil { // its index type
				return err
			} else if ok {
				if err := f.table(it); err != nil {
					return err
				}
			}
		}
		if err := f.keyValues(fd, 6, budget); err != nil {
			return err
		}
		if err := f.fields(fd, 5, depth+1, budget); err != nil {
			return err
		}
	}
	return nil
}

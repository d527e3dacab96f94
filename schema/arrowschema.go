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
	if len(b) < 4 {
		return fmt.Errorf("%d bytes", len(b))
	}
	n, at := binary.LittleEndian.Uint32(b), 4
	if n == 0xFFFFFFFF { // continuation marker, then the length
		if len(b) < 8 {
			return fmt.Errorf("%d bytes", len(b))
		}
		n, at = binary.LittleEndian.Uint32(b[4:]), 8
	}
	if n < 4 || uint64(n) > uint64(len(b)-at) {
		return fmt.Errorf("message of %d bytes in %d", n, len(b)-at)
	}
	fb := fbuf{b: b[at : at+int(n)]}
	msg, err := fb.root()
	if err != nil {
		return err
	}
	if err := fb.table(msg); err != nil {
		return err
	}
	body, err := fb.scalar(msg, 3, 8)
	if err != nil {
		return err
	}
	if body != nil {
		if bl := int64(binary.LittleEndian.Uint64(body)); bl < 0 || bl > int64(len(b)-at-int(n)) {
			return fmt.Errorf("message body of %d bytes in %d", bl, len(b)-at-int(n))
		}
	}
	// Every field and key-value pair the walk meets is counted against the
	// bytes: each takes at least its 4-byte offset, so more means offsets
	// that point back at tables already read.
	budget := len(fb.b) / 4
	if err := fb.keyValues(msg, 4, &budget); err != nil {
		return err
	}
	kind, err := fb.scalar(msg, 1, 1)
	if err != nil {
		return err
	}
	if kind == nil || kind[0] != 1 { // MessageHeader.Schema
		return errors.New("first message is not a schema")
	}
	sch, ok, err := fb.child(msg, 2)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("schema message without its schema")
	}
	if err := fb.table(sch); err != nil {
		return err
	}
	if _, err := fb.scalar(sch, 0, 2); err != nil { // endianness
		return err
	}
	if err := fb.keyValues(sch, 2, &budget); err != nil {
		return err
	}
	if _, _, err := fb.vector(sch, 3, 8); err != nil { // features
		return err
	}
	return fb.fields(sch, 1, 0, &budget)
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

package schema

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"

	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// ErrDamaged marks a Parquet file whose bytes cannot be read as the table
// its footer describes: a page header that does not parse, a page running
// past its column chunk, a page checksum that does not match, or a decoder
// that failed (or panicked) on a page. The same file fails the same way
// again, so it is bad input, not a failure to retry.
var ErrDamaged = errors.New("damaged data")

// arrow-go v18.8.0 neither writes nor checks the optional crc of a page
// header (parquet/file/page_reader.go reads the field and ignores it), and
// its page reader dereferences a page's type-specific header without
// asking whether the file has one. checkPages walks the page headers of
// the column chunks first, as checkStoredSchema walks the stored schema:
// the layout is PageHeader of parquet.thrift in
// https://github.com/apache/parquet-format (src/main/thrift), encoded in
// Thrift's compact protocol
// (https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md).
// Monomer's own tables carry no crc, so for them the walk reads only the
// headers, a few dozen bytes a page.

// maxPageHeader is the largest page header read, arrow-go's own limit
// (defaultMaxPageHeaderSize, parquet/file/column_reader.go): a longer one
// it refuses anyway.
const maxPageHeader = 4 << 20

// Page types (parquet.thrift, PageType).
const (
	pageData       = 0
	pageDictionary = 2
	pageDataV2     = 3
)

// pageHeader is what the walk needs of a PageHeader.
type pageHeader struct {
	typ, uncompressed, compressed int32
	crc                           int32
	hasCRC, hasType, hasSizes     bool
	// subs marks the type-specific headers present (bit 5: data page, 7:
	// dictionary, 8: data page v2), values[id-5] each one's count of
	// values (levels included), levels a v2 page's level bytes before its
	// values (-1 when negative).
	subs   uint16
	values [4]int32
	levels int64
}

// sub is the field of the header of page type typ, 0 for types that have
// none arrow-go reads.
func sub(typ int32) int16 {
	switch typ {
	case pageData:
		return 5
	case pageDictionary:
		return 7
	case pageDataV2:
		return 8
	}
	return 0
}

// checkPages walks every page of the column chunks of row groups groups
// (all of them when groups is nil) of the file f of size bytes, whose
// footer is md, checking each header and, where the header carries one,
// the page's CRC-32. Its errors wrap ErrDamaged and say the column and
// the page's offset (the caller names the file). An encrypted column
// chunk is left to arrow-go.
func checkPages(f io.ReaderAt, size int64, md *metadata.FileMetaData, groups []int) error {
	if groups == nil {
		groups = make([]int, md.NumRowGroups())
		for g := range groups {
			groups[g] = g
		}
	}
	w := pageWalk{f: f}
	for _, g := range groups {
		rg := md.RowGroup(g)
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				return fmt.Errorf("%w: row group %d column %d: %v", ErrDamaged, g, c, err)
			}
			if cc.CryptoMetadata() != nil {
				continue
			}
			// The chunk's bytes as arrow-go finds them
			// (parquet/file/row_group_reader.go, GetColumnPageReader),
			// with its allowance for old parquet-mr files whose sizes
			// leave out the dictionary page's header.
			start := cc.DataPageOffset()
			if d := cc.DictionaryPageOffset(); cc.HasDictionaryPage() && d > 0 && d < start {
				start = d
			}
			n := cc.TotalCompressedSize()
			col := cc.PathInSchema().String()
			if start < 0 || n < 0 || start > size || n > size-start {
				return fmt.Errorf("%w: column %s, row group %d: a column chunk of %d bytes at byte %d in a file of %d", ErrDamaged, col, g, n, start, size)
			}
			if md.WriterVersion().LessThan(metadata.Parquet816FixedVersion) {
				n += min(100, size-start-n)
			}
			if err := w.chunk(start, start+n, cc.NumValues()); err != nil {
				var re *readErr
				if errors.As(err, &re) {
					return fmt.Errorf("schema: %w", re.err)
				}
				return fmt.Errorf("%w: column %s, row group %d, %w", ErrDamaged, col, g, err)
			}
		}
	}
	return nil
}

// pageWalk reads the page headers of column chunks, reusing its buffer.
type pageWalk struct {
	f   io.ReaderAt
	buf []byte
}

// chunk walks the pages in [pos, end) until they hold values values (as
// arrow-go's page reader stops), or the chunk ends.
func (w *pageWalk) chunk(pos, end, values int64) error {
	var seen int64
	for seen < values && pos < end {
		h, hlen, err := w.header(pos, end)
		if err != nil {
			return fmt.Errorf("page at byte %d: %w", pos, err)
		}
		body := pos + int64(hlen)
		switch {
		case !h.hasType || !h.hasSizes:
			return fmt.Errorf("page at byte %d: header without its type or sizes", pos)
		case h.compressed < 0 || h.uncompressed < 0:
			return fmt.Errorf("page at byte %d: negative page size", pos)
		case int64(h.compressed) > end-body:
			return fmt.Errorf("page at byte %d: %d bytes from byte %d run past the column chunk's end at byte %d", pos, h.compressed, body, end)
		}
		if id := sub(h.typ); id != 0 {
			nv := h.values[id-5]
			switch {
			case h.subs&(1<<id) == 0:
				return fmt.Errorf("page at byte %d: a page of type %d without its header of that type", pos, h.typ)
			case nv < 0:
				return fmt.Errorf("page at byte %d: %d values", pos, nv)
			case id == 8 && (h.levels < 0 || h.levels > int64(h.compressed)):
				return fmt.Errorf("page at byte %d: %d bytes of levels in a page of %d bytes", pos, h.levels, h.compressed)
			}
			if id != 7 {
				seen += int64(nv)
			}
		}
		if h.hasCRC {
			sum := crc32.NewIEEE()
			if _, err := io.Copy(sum, io.NewSectionReader(w.f, body, int64(h.compressed))); err != nil {
				return readFail(pos, err)
			}
			if got := sum.Sum32(); got != uint32(h.crc) {
				return fmt.Errorf("page at byte %d: page checksum mismatch: the header's CRC-32 is %08x, the page's %d bytes give %08x", pos, uint32(h.crc), h.compressed, got)
			}
		}
		pos = body + int64(h.compressed)
	}
	if seen < values {
		return fmt.Errorf("the column chunk ends at byte %d after %d of its %d values", end, seen, values)
	}
	return nil
}

// header reads the page header at pos, growing the bytes read until it
// parses or reaches end or maxPageHeader. It returns the header and its
// length.
func (w *pageWalk) header(pos, end int64) (pageHeader, int, error) {
	limit := min(end-pos, maxPageHeader)
	for n := min(limit, 1<<10); ; n = min(limit, n*16) {
		if int64(cap(w.buf)) < n {
			w.buf = make([]byte, n)
		}
		b := w.buf[:n]
		if got, err := w.f.ReadAt(b, pos); int64(got) < n {
			return pageHeader{}, 0, readFail(pos, err)
		}
		d := compact{b: b}
		h, err := d.pageHeader()
		if err == nil {
			return h, d.i, nil
		}
		if !errors.Is(err, errShort) || n == limit {
			return pageHeader{}, 0, err
		}
	}
}

// readFail keeps an I/O error of the system's (which a retry may get
// past) apart from bytes the footer says are there but are not.
func readFail(pos int64, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &readErr{pe}
	}
	return fmt.Errorf("page at byte %d: the file ends inside it", pos)
}

// readErr is an I/O error met during the walk, which checkPages does not
// class as damage.
type readErr struct{ err *fs.PathError }

func (e *readErr) Error() string { return e.err.Error() }
func (e *readErr) Unwrap() error { return e.err }

var errShort = errors.New("page header runs past the bytes read")

// compact decodes Thrift's compact protocol from b, every length checked.
type compact struct {
	b []byte
	i int
}

// maxThriftDepth bounds the nesting of structs, lists and maps skipped;
// a PageHeader nests three deep (its statistics).
const maxThriftDepth = 16

// Compact protocol types.
const (
	tStop   = 0
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
)

func (d *compact) byte() (byte, error) {
	if d.i >= len(d.b) {
		return 0, errShort
	}
	d.i++
	return d.b[d.i-1], nil
}

func (d *compact) uvarint() (uint64, error) {
	var v uint64
	for s := 0; s < 70; s += 7 {
		c, err := d.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << s
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("varint longer than 10 bytes")
}

// i32 reads a zigzag varint that must fit 32 bits.
func (d *compact) i32() (int32, error) {
	u, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	if u > 0xffffffff {
		return 0, fmt.Errorf("a 32-bit integer of %d", u)
	}
	return int32(uint32(u)>>1) ^ -int32(uint32(u)&1), nil
}

// skipN skips n bytes; n beyond what remains is errShort, so that header
// reads more, up to its limit.
func (d *compact) skipN(n uint64) error {
	if n > uint64(len(d.b)-d.i) {
		return errShort
	}
	d.i += int(n)
	return nil
}

// skip skips a value of type t.
func (d *compact) skip(t byte, depth int) error {
	if depth > maxThriftDepth {
		return errors.New("values nested too deep")
	}
	switch t {
	case tTrue, tFalse:
		return nil // a field's boolean is in its type
	case tByte:
		return d.skipN(1)
	case tI16, tI32, tI64:
		_, err := d.uvarint()
		return err
	case tDouble:
		return d.skipN(8)
	case tBinary:
		n, err := d.uvarint()
		if err != nil {
			return err
		}
		return d.skipN(n)
	case tList, tSet:
		h, err := d.byte()
		if err != nil {
			return err
		}
		n, et := uint64(h>>4), h&0x0f
		if n == 15 {
			if n, err = d.uvarint(); err != nil {
				return err
			}
		}
		return d.skipElems(n, et, depth)
	case tMap:
		n, err := d.uvarint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := d.byte()
		if err != nil {
			return err
		}
		for range n {
			if err := d.skipElem(kv>>4, depth); err != nil {
				return err
			}
			if err := d.skipElem(kv&0x0f, depth); err != nil {
				return err
			}
		}
		return nil
	case tStruct:
		return d.fields(depth+1, nil)
	}
	return fmt.Errorf("unknown Thrift type %d", t)
}

// skipElems skips n elements of type t; each takes a byte at least, so a
// count beyond the bytes left is not read one by one.
func (d *compact) skipElems(n uint64, t byte, depth int) error {
	if n > uint64(len(d.b)-d.i) {
		return errShort
	}
	for range n {
		if err := d.skipElem(t, depth); err != nil {
			return err
		}
	}
	return nil
}

// skipElem skips a list, set or map element: there a boolean is a byte.
func (d *compact) skipElem(t byte, depth int) error {
	if t == tTrue || t == tFalse {
		return d.skipN(1)
	}
	return d.skip(t, depth+1)
}

// fields reads a struct's fields up to its stop, handing each to fn (nil:
// skip them all); a field fn does not take (false) is skipped.
func (d *compact) fields(depth int, fn func(id int16, t byte) (bool, error)) error {
	if depth > maxThriftDepth {
		return errors.New("structs nested too deep")
	}
	var id int16
	for {
		h, err := d.byte()
		if err != nil {
			return err
		}
		t := h & 0x0f
		if t == tStop {
			return nil
		}
		if delta := int16(h >> 4); delta != 0 {
			id += delta
		} else {
			v, err := d.i32()
			if err != nil {
				return err
			}
			id = int16(v)
		}
		took := false
		if fn != nil {
			if took, err = fn(id, t); err != nil {
				return err
			}
		}
		if !took {
			if err := d.skip(t, depth); err != nil {
				return err
			}
		}
	}
}

// pageHeader reads a PageHeader. A field of a known id but another type
// is skipped, as Thrift's generated readers do.
func (d *compact) pageHeader() (pageHeader, error) {
	var h pageHeader
	var sizes int
	err := d.fields(0, func(id int16, t byte) (bool, error) {
		var err error
		switch {
		case id >= 1 && id <= 4 && t == tI32:
			var v int32
			if v, err = d.i32(); err != nil {
				return true, err
			}
			switch id {
			case 1:
				h.typ, h.hasType = v, true
			case 2:
				h.uncompressed, sizes = v, sizes|1
			case 3:
				h.compressed, sizes = v, sizes|2
			case 4:
				h.crc, h.hasCRC = v, true
			}
			return true, nil
		case (id == 5 || id == 7 || id == 8) && t == tStruct:
			// DataPageHeader, DictionaryPageHeader and DataPageHeaderV2
			// all hold num_values as field 1; v2's level lengths are
			// fields 5 and 6.
			h.subs |= 1 << id
			var def, rep int32
			err = d.fields(1, func(sid int16, st byte) (bool, error) {
				if st != tI32 || !(sid == 1 || id == 8 && (sid == 5 || sid == 6)) {
					return false, nil
				}
				v, err := d.i32()
				switch sid {
				case 1:
					h.values[id-5] = v
				case 5:
					def = v
				case 6:
					rep = v
				}
				return true, err
			})
			if id == 8 {
				h.levels = int64(def) + int64(rep)
				if def < 0 || rep < 0 {
					h.levels = -1
				}
			}
			return true, err
		}
		return false, nil
	})
	h.hasSizes = sizes == 3
	return h, err
}

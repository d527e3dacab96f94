package imagefeat

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
)

// npyHeader is what a NumPy .npy header says about the matrix after it.
type npyHeader struct {
	Rows, Cols int64
	// Width is 4 for float32, 8 for float64 (little-endian both).
	Width int
	// DataAt is the file offset of the first value.
	DataAt int64
}

// npyMagic opens every .npy file.
const npyMagic = "\x93NUMPY"

// maxNPYHeader bounds the header's dictionary: NumPy writes well under
// 200 bytes for a 2-D matrix, and a huge length is a damaged file.
const maxNPYHeader = 1 << 16

// maxNPYExtent bounds each extent of the shape, so that rows × cols ×
// width stays far inside int64 (a damaged header, not a real matrix).
const maxNPYExtent = 1 << 32

// parseNPYHeader parses the preamble of a .npy file (format versions 1.0,
// 2.0 and 3.0) from the start of b. It accepts exactly what NumPy writes
// for a 2-D C-order float32 or float64 matrix: the magic, the version, the
// header length, and a Python dict literal with the keys 'descr' ('<f4',
// '<f8', or with '=' for native little-endian), 'fortran_order' (False) and
// 'shape' (a pair of non-negative integers), each once, in any order,
// followed by spaces and one newline. Anything else is an error naming the
// byte offset.
func parseNPYHeader(b []byte) (npyHeader, error) {
	var h npyHeader
	if len(b) < len(npyMagic)+2 || string(b[:len(npyMagic)]) != npyMagic {
		return h, fmt.Errorf("byte 0: not a .npy file (no \\x93NUMPY magic)")
	}
	major, minor := b[6], b[7]
	at := 8
	var n int
	switch {
	case major == 1 && minor == 0:
		if len(b) < at+2 {
			return h, fmt.Errorf("byte %d: header length cut short", at)
		}
		n, at = int(binary.LittleEndian.Uint16(b[at:])), at+2
	case (major == 2 || major == 3) && minor == 0:
		if len(b) < at+4 {
			return h, fmt.Errorf("byte %d: header length cut short", at)
		}
		u := binary.LittleEndian.Uint32(b[at:])
		if u > maxNPYHeader {
			return h, fmt.Errorf("byte %d: header length %d above %d", at, u, maxNPYHeader)
		}
		n, at = int(u), at+4
	default:
		return h, fmt.Errorf("byte 6: format version %d.%d, want 1.0, 2.0 or 3.0", major, minor)
	}
	if len(b) < at+n {
		return h, fmt.Errorf("byte %d: header of %d bytes cut short at %d", at, n, len(b)-at)
	}
	p := npyParser{b: b[:at+n], i: at}
	if err := p.dict(&h); err != nil {
		return h, err
	}
	h.DataAt = int64(at + n)
	return h, nil
}

// npyParser reads the header's dict literal; i is an offset into b.
type npyParser struct {
	b []byte
	i int
}

func (p *npyParser) fail(format string, a ...any) error {
	return fmt.Errorf("byte %d: "+format, append([]any{p.i}, a...)...)
}

func (p *npyParser) spaces() {
	for p.i < len(p.b) && p.b[p.i] == ' ' {
		p.i++
	}
}

func (p *npyParser) expect(c byte) error {
	p.spaces()
	if p.i >= len(p.b) || p.b[p.i] != c {
		return p.fail("want %q", c)
	}
	p.i++
	return nil
}

// peek returns the next byte after spaces, or 0 at the end.
func (p *npyParser) peek() byte {
	p.spaces()
	if p.i >= len(p.b) {
		return 0
	}
	return p.b[p.i]
}

func (p *npyParser) dict(h *npyHeader) error {
	if err := p.expect('{'); err != nil {
		return err
	}
	seen := map[string]bool{}
	for p.peek() != '}' {
		at := p.i
		key, err := p.str()
		if err != nil {
			return err
		}
		if seen[key] {
			p.i = at
			return p.fail("key %q repeated", key)
		}
		seen[key] = true
		if err := p.expect(':'); err != nil {
			return err
		}
		p.spaces()
		at = p.i
		switch key {
		case "descr":
			d, err := p.str()
			if err != nil {
				return err
			}
			switch d {
			case "<f4", "=f4":
				h.Width = 4
			case "<f8", "=f8":
				h.Width = 8
			default:
				p.i = at
				return p.fail("dtype %q: want '<f4' (float32) or '<f8' (float64), little-endian", d)
			}
		case "fortran_order":
			switch {
			case bytes.HasPrefix(p.b[p.i:], []byte("False")):
				p.i += len("False")
			case bytes.HasPrefix(p.b[p.i:], []byte("True")):
				return p.fail("fortran_order True: want a C-order matrix (numpy.ascontiguousarray)")
			default:
				return p.fail("fortran_order: want False")
			}
		case "shape":
			if err := p.shape(h); err != nil {
				return err
			}
		default:
			p.i = at
			return p.fail("unknown key %q (want descr, fortran_order, shape)", key)
		}
		if p.peek() != ',' {
			break
		}
		p.i++
	}
	if err := p.expect('}'); err != nil {
		return err
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return p.fail("no %q key", k)
		}
	}
	// Padding: spaces, then the newline that ends the header.
	p.spaces()
	if p.i != len(p.b)-1 || p.b[p.i] != '\n' {
		return p.fail("want spaces and a newline to the end of the header")
	}
	return nil
}

// str reads a Python string literal without escapes, in ' or ".
func (p *npyParser) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", p.fail("want a quoted string")
	}
	p.i++
	end := bytes.IndexByte(p.b[p.i:], q)
	if end < 0 {
		return "", p.fail("unterminated string")
	}
	s := p.b[p.i : p.i+end]
	for _, c := range s {
		if c < ' ' || c > '~' || c == '\\' {
			return "", p.fail("unexpected byte %q in a string", c)
		}
	}
	p.i += end + 1
	return string(s), nil
}

// shape reads "(rows, cols)" with an optional trailing comma.
func (p *npyParser) shape(h *npyHeader) error {
	if err := p.expect('('); err != nil {
		return err
	}
	var dims []int64
	for p.peek() != ')' {
		start := p.i
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
		}
		if p.i == start {
			return p.fail("want a non-negative integer in the shape")
		}
		txt := string(p.b[start:p.i])
		v, err := strconv.ParseInt(txt, 10, 64)
		if err != nil || v > maxNPYExtent {
			p.i = start
			return p.fail("shape %s out of range", txt)
		}
		dims = append(dims, v)
		if p.peek() != ',' {
			break
		}
		p.i++
	}
	if err := p.expect(')'); err != nil {
		return err
	}
	if len(dims) != 2 {
		return p.fail("shape of %d dimensions, want 2 (rows, dimension)", len(dims))
	}
	h.Rows, h.Cols = dims[0], dims[1]
	return nil
}

// appendNPYHeader appends the header NumPy writes for a rows × cols
// matrix of width-byte floats: version 1.0, padded to 64 bytes.
func appendNPYHeader(b []byte, rows, cols int64, width int) []byte {
	d := fmt.Sprintf("{'descr': '<f%d', 'fortran_order': False, 'shape': (%d, %d), }", width, rows, cols)
	n := len(npyMagic) + 4 + len(d) + 1
	pad := (64 - n%64) % 64
	b = append(b, npyMagic...)
	b = append(b, 1, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(d)+pad+1))
	b = append(b, d...)
	b = append(b, bytes.Repeat([]byte{' '}, pad)...)
	return append(b, '\n')
}

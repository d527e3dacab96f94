// Package npy writes NumPy's .npy format, version 1.0
// (numpy.lib.format): a magic string, a header naming the element type and
// shape, then the values in C order. monomer export writes its vectors
// this way so that numpy.load and FAISS read them without a Parquet reader.
package npy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"
	"unicode/utf8"
)

// header is the .npy preamble for element type descr and shape: magic,
// version 1.0, the header's length, then a Python dict literal padded with
// spaces and ended by a newline so that the data starts on a multiple of
// 64 bytes, as numpy.lib.format aligns it.
func header(descr string, shape []int) []byte {
	dims := make([]string, len(shape))
	for i, n := range shape {
		dims[i] = fmt.Sprint(n)
	}
	s := strings.Join(dims, ", ")
	if len(shape) == 1 {
		s += ","
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, s)
	const pre = 10 // magic (6), version (2), header length (2)
	pad := 64 - (pre+len(dict)+1)%64
	if pad == 64 {
		pad = 0
	}
	dict += strings.Repeat(" ", pad) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), 0, 0)
	binary.LittleEndian.PutUint16(b[8:], uint16(len(dict)))
	return append(b, dict...)
}

// write creates path (it must not exist: a .npy beside others is always
// one monomer makes anew) and writes the header and body.
func write(path string, head []byte, body func(w *bufio.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	_, err = w.Write(head)
	if err == nil {
		err = body(w)
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("npy: %s: %w", path, err)
	}
	return nil
}

// WriteFloat32 writes data as a float32 array of rows × cols (cols 0: a
// vector of rows values).
func WriteFloat32(path string, data []float32, rows, cols int) error {
	shape := []int{rows, cols}
	if cols == 0 {
		shape, cols = []int{rows}, 1
	}
	if len(data) != rows*cols {
		return fmt.Errorf("npy: %s: %d values for shape %v", path, len(data), shape)
	}
	return write(path, header("<f4", shape), func(w *bufio.Writer) error {
		var b [4]byte
		for _, x := range data {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			if _, err := w.Write(b[:]); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteFloat64 writes data as a float64 vector.
func WriteFloat64(path string, data []float64) error {
	return write(path, header("<f8", []int{len(data)}), func(w *bufio.Writer) error {
		var b [8]byte
		for _, x := range data {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
			if _, err := w.Write(b[:]); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteStrings writes ss as a vector of NumPy unicode strings ('<U n', n
// the most characters of any, UTF-32 code points padded with zeros).
// Strings that are not valid UTF-8 are an error.
func WriteStrings(path string, ss []string) error {
	n := 1
	for i, s := range ss {
		if !utf8.ValidString(s) {
			return fmt.Errorf("npy: %s: string %d is not UTF-8", path, i)
		}
		n = max(n, utf8.RuneCountInString(s))
	}
	return write(path, header(fmt.Sprintf("<U%d", n), []int{len(ss)}), func(w *bufio.Writer) error {
		b := make([]byte, 4*n)
		for _, s := range ss {
			clear(b)
			j := 0
			for _, r := range s {
				binary.LittleEndian.PutUint32(b[4*j:], uint32(r))
				j++
			}
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
}

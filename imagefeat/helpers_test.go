package imagefeat

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// record is one .b record for tests.
type record struct {
	asin string
	vec  []float32
}

// randomRecords draws n records of dim sparse, non-negative values (like
// ReLU activations) with ASINs A000000000, A000000001, ...
func randomRecords(rng *rand.Rand, n, dim int) []record {
	recs := make([]record, n)
	for i := range recs {
		v := make([]float32, dim)
		for j := range v {
			if rng.IntN(4) == 0 {
				v[j] = float32(rng.Float64() * 60)
			}
		}
		recs[i] = record{asin: asinOf(i), vec: v}
	}
	return recs
}

func asinOf(i int) string {
	const digits = "0123456789"
	b := []byte("A000000000")
	for k := 9; k > 0 && i > 0; k-- {
		b[k] = digits[i%10]
		i /= 10
	}
	return string(b)
}

// encode returns the .b bytes of recs, gzipped if gz.
func encode(t testing.TB, recs []record, dim int, gz bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	var zw *gzip.Writer
	w := NewWriter(&buf, "test.b", dim)
	if gz {
		zw = gzip.NewWriter(&buf)
		w = NewWriter(zw, "test.b", dim)
	}
	for _, r := range recs {
		if err := w.Write(r.asin, r.vec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// rawRecord builds a record byte by byte, so tests can plant what Writer
// refuses to write.
func rawRecord(header string, bits ...uint32) []byte {
	b := make([]byte, ASINLen+4*len(bits))
	copy(b, header)
	for i := len(header); i < ASINLen; i++ {
		b[i] = ' '
	}
	for j, x := range bits {
		binary.LittleEndian.PutUint32(b[ASINLen+4*j:], x)
	}
	return b
}

func floatBits(vs ...float32) []uint32 {
	out := make([]uint32, len(vs))
	for i, v := range vs {
		out[i] = math.Float32bits(v)
	}
	return out
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readAll reads every record of path.
func readAll(path string, dim int) ([]record, error) {
	r, err := Open(path, WithDim(dim))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []record
	for {
		a, v, err := r.Next()
		if err != nil {
			if err.Error() == "EOF" {
				return out, nil
			}
			return out, err
		}
		out = append(out, record{a, append([]float32(nil), v...)})
	}
}

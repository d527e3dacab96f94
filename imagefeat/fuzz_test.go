package imagefeat

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
)

// FuzzReader feeds arbitrary bytes (plain or gzipped, by their magic) to the
// reader at dimension 3. It must never panic, must stop with io.EOF or one of
// the package's errors, and whatever it accepted must survive a write and a
// second read unchanged.
func FuzzReader(f *testing.F) {
	f.Add(rawRecord("B000000001", floatBits(1, 2, 3)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		const dim = 3
		r, err := NewReader(bytes.NewReader(data), "fuzz.b", WithDim(dim))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("NewReader: unexpected error %v", err)
			}
			return
		}
		defer r.Close()
		var recs []record
		for {
			a, v, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrASIN) &&
					!errors.Is(err, ErrNonFinite) && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("unexpected error %v", err)
				}
				if _, _, again := r.Next(); again == nil {
					t.Fatalf("Next succeeded after %v", err)
				}
				return
			}
			if len(v) != dim || a == "" || len(a) > ASINLen {
				t.Fatalf("record %d: asin %q, %d values", len(recs), a, len(v))
			}
			if want := int64(len(recs) * RecordSize(dim)); r.Offset() != want {
				t.Fatalf("record %d at offset %d, want %d", len(recs), r.Offset(), want)
			}
			recs = append(recs, record{a, slices.Clone(v)})
			if len(recs) == 10000 {
				// A small gzip input can inflate to millions of records;
				// the rest would only slow the fuzzer down.
				return
			}
		}
		if !r.gz && len(recs)*RecordSize(dim) != len(data) {
			t.Fatalf("%d records from %d plain bytes", len(recs), len(data))
		}
		var buf bytes.Buffer
		w := NewWriter(&buf, "again.b", dim)
		for _, rec := range recs {
			if err := w.Write(rec.asin, rec.vec); err != nil {
				t.Fatalf("rewrite: %v", err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r2, _ := NewReader(bytes.NewReader(buf.Bytes()), "again.b", WithDim(dim))
		defer r2.Close()
		for i, want := range recs {
			a, v, err := r2.Next()
			if err != nil || a != want.asin || !slices.Equal(v, want.vec) {
				t.Fatalf("reread record %d: %s %v %v, want %s %v", i, a, v, err, want.asin, want.vec)
			}
		}
		if _, _, err := r2.Next(); err != io.EOF {
			t.Fatalf("reread: %v after the last record", err)
		}
	})
}

package imagefeat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		n    int
		dim  int
		gz   bool
	}{
		{name: "empty", n: 0, dim: 4},
		{name: "one", n: 1, dim: 1},
		{name: "small dim", n: 100, dim: 3},
		{name: "FC7 across chunks", n: 130, dim: Dim},
		{name: "gzip small dim", n: 100, dim: 3, gz: true},
		{name: "gzip FC7", n: 70, dim: Dim, gz: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 1))
			recs := randomRecords(rng, tc.n, tc.dim)
			path := writeFile(t, t.TempDir(), "image_features_Men.b", encode(t, recs, tc.dim, tc.gz))

			r, err := Open(path, WithDim(tc.dim))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for i, want := range recs {
				a, v, err := r.Next()
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				if a != want.asin || !slices.Equal(v, want.vec) {
					t.Fatalf("record %d: got %s %v, want %s %v", i, a, v[:1], want.asin, want.vec[:1])
				}
				if got, want := r.Offset(), int64(i*RecordSize(tc.dim)); got != want {
					t.Fatalf("record %d: Offset %d, want %d", i, got, want)
				}
			}
			if _, _, err := r.Next(); err != io.EOF {
				t.Fatalf("after the last record: %v, want io.EOF", err)
			}
			if _, _, err := r.Next(); err != io.EOF {
				t.Fatalf("second call after the end: %v, want io.EOF", err)
			}
			if r.Records() != int64(tc.n) {
				t.Fatalf("Records %d, want %d", r.Records(), tc.n)
			}

			asins, err := ScanASINs(context.Background(), path, WithDim(tc.dim))
			if err != nil {
				t.Fatal(err)
			}
			if len(asins) != tc.n {
				t.Fatalf("ScanASINs: %d ASINs, want %d", len(asins), tc.n)
			}
			for i, a := range asins {
				if a != recs[i].asin {
					t.Fatalf("ScanASINs[%d] = %s, want %s", i, a, recs[i].asin)
				}
			}
		})
	}
}

func TestASINHeader(t *testing.T) {
	tests := []struct {
		name   string
		header string
		want   string
	}{
		{name: "ten bytes", header: "B00ABCDEFG", want: "B00ABCDEFG"},
		{name: "ISBN with X", header: "000100039X", want: "000100039X"},
		{name: "padded", header: "B00A      ", want: "B00A"},
		{name: "cut at first space", header: "AB CD     ", want: "AB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "x.b", rawRecord(tc.header, floatBits(1, 2)...))
			recs, err := readAll(path, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1 || recs[0].asin != tc.want {
				t.Fatalf("got %v, want ASIN %q", recs, tc.want)
			}
			asins, err := ScanASINs(context.Background(), path, WithDim(2))
			if err != nil || len(asins) != 1 || asins[0] != tc.want {
				t.Fatalf("ScanASINs: %v %v, want [%s]", asins, err, tc.want)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	good := rawRecord("B000000001", floatBits(1, 2, 3)...) // 22 bytes at dim 3
	join := func(parts ...[]byte) []byte { return slices.Concat(parts...) }
	nanBits := uint32(0x7fc00001)
	tests := []struct {
		name string
		data func(t *testing.T) []byte
		dim  int
		// scan: whether the cheap ScanASINs of a plain file sees the error
		// too (it reads headers only).
		scan    bool
		wantErr error
		wantMsg string
		// records: whole records Next returns before the error.
		records int
	}{
		{
			name: "truncated FC7 record",
			dim:  Dim,
			data: func(t *testing.T) []byte {
				recs := randomRecords(rand.New(rand.NewPCG(1, 1)), 10, Dim)
				b := encode(t, recs, Dim, false)
				return b[:10*RecordSize(Dim)+2048]
			},
			scan:    true,
			records: 10,
			wantErr: ErrTruncated,
			wantMsg: "imagefeat: image_features_Men.b: truncated record at byte 163940: 2048 of 16394 bytes",
		},
		{
			name:    "header only",
			dim:     3,
			data:    func(*testing.T) []byte { return []byte("B000000001") },
			scan:    true,
			wantErr: ErrTruncated,
			wantMsg: "imagefeat: image_features_Men.b: truncated record at byte 0: 10 of 22 bytes",
		},
		{
			name:    "non-ASCII ASIN",
			dim:     3,
			data:    func(*testing.T) []byte { return join(good, rawRecord("B0\xc3\xa90001", floatBits(1, 2, 3)...)) },
			scan:    true,
			records: 1,
			wantErr: ErrASIN,
			wantMsg: "imagefeat: image_features_Men.b: bad ASIN at byte 22: non-ASCII byte 0xc3 at position 2",
		},
		{
			name:    "NUL in ASIN",
			dim:     3,
			data:    func(*testing.T) []byte { return rawRecord("B00\x00", floatBits(1, 2, 3)...) },
			scan:    true,
			wantErr: ErrASIN,
			wantMsg: "imagefeat: image_features_Men.b: bad ASIN at byte 0: control byte 0x00 at position 3",
		},
		{
			name:    "empty ASIN",
			dim:     3,
			data:    func(*testing.T) []byte { return join(good, good, rawRecord("", floatBits(1, 2, 3)...)) },
			scan:    true,
			records: 2,
			wantErr: ErrASIN,
			wantMsg: "imagefeat: image_features_Men.b: bad ASIN at byte 44: empty",
		},
		{
			name:    "NaN",
			dim:     3,
			data:    func(*testing.T) []byte { return join(good, rawRecord("B000000002", 0, 0, nanBits)) },
			records: 1,
			wantErr: ErrNonFinite,
			wantMsg: "imagefeat: image_features_Men.b: non-finite value: NaN at byte 40 (asin B000000002, dim 2)",
		},
		{
			name:    "+Inf",
			dim:     3,
			data:    func(*testing.T) []byte { return rawRecord("B7", floatBits(float32(math.Inf(1)), 0, 0)...) },
			wantErr: ErrNonFinite,
			wantMsg: "imagefeat: image_features_Men.b: non-finite value: +Inf at byte 10 (asin B7, dim 0)",
		},
		{
			name:    "-Inf",
			dim:     3,
			data:    func(*testing.T) []byte { return rawRecord("B7", floatBits(0, float32(math.Inf(-1)), 0)...) },
			wantErr: ErrNonFinite,
			wantMsg: "imagefeat: image_features_Men.b: non-finite value: -Inf at byte 14 (asin B7, dim 1)",
		},
		{
			name: "gzip truncated stream",
			dim:  3,
			data: func(t *testing.T) []byte {
				recs := randomRecords(rand.New(rand.NewPCG(1, 1)), 200, 3)
				b := encode(t, recs, 3, true)
				return b[:len(b)/2]
			},
			wantErr: ErrCorrupt,
			// The count of complete records depends on where deflate
			// blocks end; the prefix is what matters.
			wantMsg: "imagefeat: image_features_Men.b: corrupt gzip stream after ",
			records: -1,
		},
		{
			name: "gzip bad checksum",
			dim:  3,
			data: func(t *testing.T) []byte {
				b := gzipBytes(t, join(good, good))
				b[len(b)-8] ^= 0xff // CRC-32 in the trailer
				return b
			},
			records: 2,
			wantErr: ErrCorrupt,
			wantMsg: "imagefeat: image_features_Men.b: corrupt gzip stream after 2 complete records (uncompressed byte 44): gzip: invalid checksum",
		},
		{
			name:    "gzip of a truncated record",
			dim:     3,
			data:    func(t *testing.T) []byte { return gzipBytes(t, join(good, good[:7])) },
			records: 1,
			wantErr: ErrTruncated,
			wantMsg: "imagefeat: image_features_Men.b: truncated record at byte 22: 7 of 22 bytes",
		},
		{
			name:    "gzip NaN",
			dim:     3,
			data:    func(t *testing.T) []byte { return gzipBytes(t, rawRecord("B1", 0, nanBits, 0)) },
			wantErr: ErrNonFinite,
			wantMsg: "imagefeat: image_features_Men.b: non-finite value: NaN at byte 14 (asin B1, dim 1)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.data(t)
			path := writeFile(t, t.TempDir(), "image_features_Men.b", data)
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("%s: error %v, want %v", what, err, tc.wantErr)
				}
				if !strings.HasPrefix(err.Error(), tc.wantMsg) || (!strings.HasSuffix(tc.wantMsg, " ") && err.Error() != tc.wantMsg) {
					t.Fatalf("%s: message\n%s\nwant\n%s", what, err, tc.wantMsg)
				}
			}
			recs, err := readAll(path, tc.dim)
			check("Next", err)
			if tc.records >= 0 && len(recs) != tc.records {
				t.Fatalf("%d records before the error, want %d", len(recs), tc.records)
			}
			gz := data[0] == 0x1f
			if gz || tc.scan {
				_, err = ScanASINs(context.Background(), path, WithDim(tc.dim))
				check("ScanASINs", err)
			}
			out := filepath.Join(t.TempDir(), "m.arrow")
			_, err = Extract(context.Background(), path, map[string]int32{"B000000001": 0}, 1, 1, out, WithDim(tc.dim))
			check("Extract", err)
			if _, err := OpenMatrix(out); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Extract left %s behind: %v", out, err)
			}
		})
	}
}

func TestMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "image_features_Nope.b")
	_, err1 := Open(path)
	_, err2 := ScanASINs(context.Background(), path)
	_, err3 := Extract(context.Background(), path, nil, 0, 1, filepath.Join(t.TempDir(), "m.arrow"))
	_, err4 := OpenMatrix(path)
	for i, err := range []error{err1, err2, err3, err4} {
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) || !strings.HasPrefix(err.Error(), "imagefeat: ") {
			t.Errorf("call %d: %v, want a not-exist error naming %s", i, err, path)
		}
	}
}

func TestWriterRefuses(t *testing.T) {
	tests := []struct {
		name    string
		asin    string
		vec     []float32
		wantErr error
		wantMsg string
	}{
		{name: "empty ASIN", asin: "", vec: []float32{1, 2}, wantErr: ErrASIN,
			wantMsg: `imagefeat: w.b: bad ASIN at byte 18: "" is 0 bytes, want 1 to 10`},
		{name: "long ASIN", asin: "B0123456789", vec: []float32{1, 2}, wantErr: ErrASIN,
			wantMsg: `imagefeat: w.b: bad ASIN at byte 18: "B0123456789" is 11 bytes, want 1 to 10`},
		{name: "space in ASIN", asin: "B0 1", vec: []float32{1, 2}, wantErr: ErrASIN,
			wantMsg: `imagefeat: w.b: bad ASIN at byte 18: "B0 1" has byte 0x20 at position 2`},
		{name: "non-ASCII ASIN", asin: "Bé", vec: []float32{1, 2}, wantErr: ErrASIN,
			wantMsg: `imagefeat: w.b: bad ASIN at byte 18: "Bé" has byte 0xc3 at position 1`},
		{name: "wrong length", asin: "B1", vec: []float32{1}, wantErr: ErrDim,
			wantMsg: "imagefeat: w.b: wrong dimension at byte 18 (asin B1): 1 values, want 2"},
		{name: "NaN", asin: "B1", vec: []float32{1, float32(math.NaN())}, wantErr: ErrNonFinite,
			wantMsg: "imagefeat: w.b: non-finite value: NaN at byte 32 (asin B1, dim 1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "w.b")
			w, err := Create(path, 2)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write("B0", []float32{0, 1}); err != nil {
				t.Fatal(err)
			}
			err = w.Write(tc.asin, tc.vec)
			if !errors.Is(err, tc.wantErr) || err.Error() != tc.wantMsg {
				t.Fatalf("got %v, want %s", err, tc.wantMsg)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := w.Write("B2", []float32{0, 1}); err == nil {
				t.Fatal("Write after Close succeeded")
			}
			recs, err := readAll(path, 2)
			if err != nil || len(recs) != 1 {
				t.Fatalf("file after a refused write: %v %v, want the one good record", recs, err)
			}
		})
	}
}

// TestCloseEarly stops reading a gzipped file after one record: Close must
// end the read-ahead goroutine. Counting all goroutines is not a test of
// that (the runtime's finalizer goroutine counts while it runs a file's
// cleanup, which under load lands at any moment); instead no goroutine may
// be left waiting in the read-ahead loop. One that Close has released but
// that has not yet returned shows as running or runnable, never waiting.
func TestCloseEarly(t *testing.T) {
	recs := randomRecords(rand.New(rand.NewPCG(1, 1)), 300, Dim)
	path := writeFile(t, t.TempDir(), "x.b", encode(t, recs, Dim, true))
	for range 5 {
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		if n, _ := goroutinesIn("rawio.(*readAhead).run"); n == 0 {
			t.Fatal("no read-ahead goroutine while reading: the test sees nothing")
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, n := goroutinesIn("rawio.(*readAhead).run"); n > 0 {
		t.Fatalf("%d read-ahead goroutines left waiting after closing five readers", n)
	}
}

// goroutinesIn counts the goroutines with fn on their stack, and those of
// them that are blocked (any state but running or runnable).
func goroutinesIn(fn string) (all, waiting int) {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, fn) {
			continue
		}
		all++
		head, _, _ := strings.Cut(g, "\n")
		if !strings.Contains(head, "[running]") && !strings.Contains(head, "[runnable]") {
			waiting++
		}
	}
	return all, waiting
}

// ScanASINs reads a plain file's headers in spans of 64 on all cores: the
// same ASINs at GOMAXPROCS 1, 2, 3, 7 and 16 over 1,000 records (16 spans,
// the last short), and with two bad headers the error is the first one's
// in file order, wherever the spans ran.
func TestScanASINsSpans(t *testing.T) {
	const dim, n = 4, 1000
	recs := randomRecords(rand.New(rand.NewPCG(3, 3)), n, dim)
	good := encode(t, recs, dim, false)
	path := writeFile(t, t.TempDir(), "x.b", good)
	bad := slices.Clone(good)
	rs := RecordSize(dim)
	bad[700*rs+3] = 0x01 // record 700, span 10
	bad[900*rs+5] = 0xff // record 900, span 14
	badPath := writeFile(t, t.TempDir(), "bad.b", bad)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, p := range []int{1, 2, 3, 7, 16} {
		runtime.GOMAXPROCS(p)
		asins, err := ScanASINs(context.Background(), path, WithDim(dim))
		if err != nil || len(asins) != n {
			t.Fatalf("P=%d: %d ASINs, %v", p, len(asins), err)
		}
		for i, a := range asins {
			if a != recs[i].asin {
				t.Fatalf("P=%d: ASIN %d is %s, want %s", p, i, a, recs[i].asin)
			}
		}
		_, err = ScanASINs(context.Background(), badPath, WithDim(dim))
		if !errors.Is(err, ErrASIN) || !strings.Contains(err.Error(), fmt.Sprintf("at byte %d: control byte 0x01", 700*rs)) {
			t.Fatalf("P=%d: error %v, want record 700's", p, err)
		}
	}
}

package imagefeat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// dense is models.Dense, restated so this package need not import models.
type dense interface {
	Rows() int
	Dim() int
	Row(i int) []float32
}

var _ dense = (*Matrix)(nil)

func TestExtract(t *testing.T) {
	const dim = 5
	const scale = float32(58.388599)
	rng := rand.New(rand.NewPCG(1, 1))
	recs := randomRecords(rng, 30, dim)
	// Plant duplicates: of a wanted ASIN (record 3, later copies differ so
	// first-wins is visible) and of an unwanted one (record 1).
	dupWanted := record{recs[3].asin, []float32{9, 9, 9, 9, 9}}
	recs = append(recs, dupWanted, recs[1], dupWanted)
	// Want every third record but record 1, in a shuffled row order.
	var want []int
	for i := 0; i < 30; i++ {
		if i%3 != 1 {
			want = append(want, i)
		}
	}
	rng.Shuffle(len(want), func(i, j int) { want[i], want[j] = want[j], want[i] })
	rows := map[string]int32{}
	for r, i := range want {
		rows[recs[i].asin] = int32(r)
	}

	tests := []struct {
		name  string
		gz    bool
		batch int
	}{
		{name: "plain, batches of 4", batch: 4},
		{name: "plain, one batch", batch: 0},
		{name: "gzip, batches of 7", gz: true, batch: 7},
		{name: "plain, batch of one row", batch: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := writeFile(t, dir, "image_features_Men.b", encode(t, recs, dim, tc.gz))
			out := filepath.Join(dir, "m.arrow")
			var progress int64
			st, err := Extract(context.Background(), in, rows, len(rows), scale, out, WithBatchRows(tc.batch), WithProgress(func(n int64) { progress += n }), WithDim(dim))
			if err != nil {
				t.Fatal(err)
			}
			wantSt := ExtractStats{
				Records: 33, Bytes: int64(33 * RecordSize(dim)),
				Kept: 20, Unwanted: 10, DuplicateASINs: 3,
				FirstDuplicate: recs[3].asin, FirstDuplicateOffset: int64(30 * RecordSize(dim)),
			}
			if st.Records != wantSt.Records || st.Bytes != wantSt.Bytes || st.Kept != wantSt.Kept ||
				st.Unwanted != wantSt.Unwanted || st.DuplicateASINs != wantSt.DuplicateASINs ||
				st.FirstDuplicate != wantSt.FirstDuplicate || st.FirstDuplicateOffset != wantSt.FirstDuplicateOffset ||
				len(st.Missing) != 0 {
				t.Fatalf("stats %+v, want %+v", st, wantSt)
			}
			if progress != st.Bytes {
				t.Fatalf("progress reported %d bytes, want %d", progress, st.Bytes)
			}

			m, err := OpenMatrix(out)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if m.Rows() != len(want) || m.Dim() != dim || m.Scale() != scale {
				t.Fatalf("matrix %d x %d scale %v, want %d x %d scale %v", m.Rows(), m.Dim(), m.Scale(), len(want), dim, scale)
			}
			lo := uintptr(unsafe.Pointer(unsafe.SliceData(m.data)))
			for r, i := range want {
				row := m.Row(r)
				for j, v := range recs[i].vec {
					if row[j] != v/scale {
						t.Fatalf("row %d dim %d: %v, want %v/%v = %v", r, j, row[j], v, scale, v/scale)
					}
				}
				if m.ASIN(r) != recs[i].asin {
					t.Fatalf("row %d: ASIN %s, want %s", r, m.ASIN(r), recs[i].asin)
				}
				if at := uintptr(unsafe.Pointer(unsafe.SliceData(row))); at < lo || at >= lo+uintptr(len(m.data)) {
					t.Fatalf("row %d is not a view into the mapping", r)
				}
				if cap(row) != dim {
					t.Fatalf("row %d: cap %d, want %d (appending must not reach the next row)", r, cap(row), dim)
				}
			}
			// Block: consecutive rows as one view wherever it returns one;
			// a single row always is.
			for lo := range m.Rows() {
				for hi := lo + 1; hi <= m.Rows(); hi++ {
					b := m.Block(lo, hi)
					if b == nil {
						if hi == lo+1 {
							t.Fatalf("Block(%d, %d) = nil for one row", lo, hi)
						}
						continue
					}
					if len(b) != (hi-lo)*dim || &b[0] != &m.Row(lo)[0] || &b[len(b)-dim] != &m.Row(hi - 1)[0] {
						t.Fatalf("Block(%d, %d) is not rows %d..%d", lo, hi, lo, hi-1)
					}
				}
			}

			// Rerun: byte-identical, also from the other encoding.
			first, _ := os.ReadFile(out)
			in2 := writeFile(t, dir, "again.b", encode(t, recs, dim, !tc.gz))
			out2 := filepath.Join(dir, "m2.arrow")
			if _, err := Extract(context.Background(), in2, rows, len(rows), scale, out2, WithBatchRows(tc.batch), WithDim(dim)); err != nil {
				t.Fatal(err)
			}
			second, _ := os.ReadFile(out2)
			if !bytes.Equal(first, second) {
				t.Fatal("two extractions of the same records differ")
			}
		})
	}
}

// TestMatrixIsPlainArrow reads the file with arrow-go's ordinary (copying)
// IPC reader, as any Arrow tool would.
func TestMatrixIsPlainArrow(t *testing.T) {
	const dim = 4
	recs := randomRecords(rand.New(rand.NewPCG(1, 1)), 10, dim)
	dir := t.TempDir()
	in := writeFile(t, dir, "x.b", encode(t, recs, dim, false))
	rows := map[string]int32{}
	for i, r := range recs {
		rows[r.asin] = int32(len(recs) - 1 - i)
	}
	out := filepath.Join(dir, "m.arrow")
	if _, err := Extract(context.Background(), in, rows, len(rows), 2, out, WithBatchRows(3), WithDim(dim)); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fr, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	if fr.NumRecords() != 4 {
		t.Fatalf("%d batches, want 4", fr.NumRecords())
	}
	if got := fr.Schema().String(); !strings.Contains(got, "features: type=fixed_size_list<item: float32>[4]") {
		t.Fatalf("schema %s", got)
	}
	row := 0
	for b := range fr.NumRecords() {
		rec, err := fr.RecordBatch(b)
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(0).(*array.String)
		vals := rec.Column(1).(*array.FixedSizeList).ListValues().(*array.Float32).Float32Values()
		for k := 0; k < int(rec.NumRows()); k++ {
			src := recs[len(recs)-1-row]
			if ids.Value(k) != src.asin {
				t.Fatalf("row %d: asin %s, want %s", row, ids.Value(k), src.asin)
			}
			for j := range dim {
				if vals[k*dim+j] != src.vec[j]/2 {
					t.Fatalf("row %d dim %d: %v, want %v", row, j, vals[k*dim+j], src.vec[j]/2)
				}
			}
			row++
		}
	}
}

func TestExtractMissingRows(t *testing.T) {
	const dim = 3
	recs := randomRecords(rand.New(rand.NewPCG(1, 1)), 5, dim)
	dir := t.TempDir()
	in := writeFile(t, dir, "image_features_Men.b", encode(t, recs, dim, false))
	rows := map[string]int32{recs[0].asin: 0, "B0NOIMAGE1": 1, recs[4].asin: 2, "B0NOIMAGE2": 3}
	out := filepath.Join(dir, "m.arrow")
	st, err := Extract(context.Background(), in, rows, 4, 1, out, WithDim(dim))
	if !errors.Is(err, ErrMissingRows) {
		t.Fatalf("error %v, want ErrMissingRows", err)
	}
	const msg = "imagefeat: image_features_Men.b: rows without a record: 2 of 4 rows (first: row 1, asin B0NOIMAGE1)"
	if err.Error() != msg {
		t.Fatalf("message\n%s\nwant\n%s", err, msg)
	}
	if !slices.Equal(st.Missing, []int32{1, 3}) || st.Kept != 2 || st.Unwanted != 3 || st.Records != 5 {
		t.Fatalf("stats %+v", st)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("output left behind: %v", err)
	}
}

func TestExtractArguments(t *testing.T) {
	in := writeFile(t, t.TempDir(), "x.b", encode(t, randomRecords(rand.New(rand.NewPCG(1, 1)), 2, 2), 2, false))
	tests := []struct {
		name    string
		rows    map[string]int32
		n       int
		scale   float32
		wantMsg string
	}{
		{name: "zero scale", rows: map[string]int32{"A": 0}, n: 1, scale: 0,
			wantMsg: "imagefeat: extract x.b: scale 0 is not a positive finite number"},
		{name: "n disagrees", rows: map[string]int32{"A": 0}, n: 2, scale: 1,
			wantMsg: "imagefeat: extract x.b: 1 ASINs for 2 rows"},
		{name: "row out of range", rows: map[string]int32{"A": 0, "B": 2}, n: 2, scale: 1,
			wantMsg: "imagefeat: extract x.b: ASIN B has row 2, outside 0..1"},
		{name: "shared row", rows: map[string]int32{"A": 1, "B": 1}, n: 2, scale: 1,
			wantMsg: "imagefeat: extract x.b: ASINs A and B share row 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Extract(context.Background(), in, tc.rows, tc.n, tc.scale, filepath.Join(t.TempDir(), "m.arrow"), WithDim(2))
			if err == nil || err.Error() != tc.wantMsg {
				t.Fatalf("got %v, want %s", err, tc.wantMsg)
			}
		})
	}
}

func TestExtractEmpty(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "x.b", encode(t, randomRecords(rand.New(rand.NewPCG(1, 1)), 3, 2), 2, false))
	out := filepath.Join(dir, "m.arrow")
	st, err := Extract(context.Background(), in, map[string]int32{}, 0, 1, out, WithDim(2))
	if err != nil || st.Unwanted != 3 {
		t.Fatalf("%+v %v", st, err)
	}
	m, err := OpenMatrix(out)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Rows() != 0 || m.Dim() != 2 {
		t.Fatalf("%d x %d, want 0 x 2", m.Rows(), m.Dim())
	}
}

// smallMatrix extracts a matrix of 5 random rows of dim values into dir.
func smallMatrix(t *testing.T, dir string, dim int) string {
	t.Helper()
	in := writeFile(t, dir, "x.b", encode(t, randomRecords(rand.New(rand.NewPCG(1, 1)), 5, dim), dim, false))
	rows := map[string]int32{}
	for i := range 5 {
		rows[asinOf(i)] = int32(i)
	}
	out := filepath.Join(dir, "m.arrow")
	if _, err := Extract(context.Background(), in, rows, 5, 1, out, WithDim(dim)); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOpenMatrixBadFile(t *testing.T) {
	const dim = 3
	dir := t.TempDir()
	good := smallMatrix(t, dir, dim)
	b, _ := os.ReadFile(good)
	tests := []struct {
		name string
		data []byte
	}{
		{name: "empty", data: nil},
		{name: "a .b file", data: encode(t, randomRecords(rand.New(rand.NewPCG(1, 1)), 5, dim), dim, false)},
		{name: "cut footer", data: b[:len(b)-20]},
		{name: "scrambled footer", data: scramble(b)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "bad.arrow", tc.data)
			m, err := OpenMatrix(p)
			if !errors.Is(err, ErrFormat) || !strings.HasPrefix(err.Error(), "imagefeat: bad.arrow: ") {
				if m != nil {
					m.Close()
				}
				t.Fatalf("got %v, want ErrFormat naming bad.arrow", err)
			}
		})
	}
}

// scramble flips bytes of the footer of an Arrow file, leaving its magic.
func scramble(b []byte) []byte {
	c := slices.Clone(b)
	for i := len(c) - 120; i < len(c)-10; i += 3 {
		c[i] ^= 0x5a
	}
	return c
}

// TestExtractGOMAXPROCS: the gzip read-ahead runs in its own goroutine; the
// output must not depend on how many cores run it.
func TestExtractGOMAXPROCS(t *testing.T) {
	const dim = 64
	recs := randomRecords(rand.New(rand.NewPCG(1, 1)), 500, dim)
	dir := t.TempDir()
	in := writeFile(t, dir, "x.b", encode(t, recs, dim, true))
	rows := map[string]int32{}
	for i, r := range recs {
		rows[r.asin] = int32(len(recs) - 1 - i)
	}
	var outs [][]byte
	for _, procs := range []int{1, 2, 4} {
		prev := runtime.GOMAXPROCS(procs)
		out := filepath.Join(dir, "m.arrow")
		_, err := Extract(context.Background(), in, rows, len(rows), DefaultScale, out, WithBatchRows(64), WithDim(dim))
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(out)
		outs = append(outs, b)
		os.Remove(out)
	}
	if !bytes.Equal(outs[0], outs[1]) || !bytes.Equal(outs[0], outs[2]) {
		t.Fatal("output depends on GOMAXPROCS")
	}
}

// Extract and ScanASINs stop with the context's error: at once when it is
// done before the call, and at the next chunk when it is cancelled from the
// progress hook after the first (no timer involved). Extract leaves no
// output behind.
func TestCancel(t *testing.T) {
	const dim, n = 256, 3000 // about 3 MiB: three chunks
	recs := randomRecords(rand.New(rand.NewPCG(2, 2)), n, dim)
	rows := map[string]int32{}
	for i, r := range recs {
		rows[r.asin] = int32(i)
	}
	size := int64(n * RecordSize(dim))
	for _, gz := range []bool{false, true} {
		in := writeFile(t, t.TempDir(), "x.b", encode(t, recs, dim, gz))
		for _, early := range []bool{true, false} {
			t.Run(fmt.Sprintf("gzip=%v/before=%v", gz, early), func(t *testing.T) {
				calls := map[string]func(ctx context.Context, opts ...Option) error{
					"Extract": func(ctx context.Context, opts ...Option) error {
						out := filepath.Join(t.TempDir(), "m.arrow")
						_, err := Extract(ctx, in, rows, n, 1, out, opts...)
						if _, serr := os.Stat(out); !errors.Is(serr, fs.ErrNotExist) {
							t.Errorf("Extract left %s behind", out)
						}
						return err
					},
					"ScanASINs": func(ctx context.Context, opts ...Option) error {
						_, err := ScanASINs(ctx, in, opts...)
						return err
					},
				}
				for name, call := range calls {
					ctx, cancel := context.WithCancel(context.Background())
					var read int64
					if early {
						cancel()
					}
					err := call(ctx, WithDim(dim), WithProgress(func(k int64) { read += k; cancel() }))
					cancel()
					if !errors.Is(err, context.Canceled) {
						t.Fatalf("%s: %v, want context.Canceled", name, err)
					}
					if limit := int64(0); early && read != limit || !early && (read == 0 || read >= size) {
						t.Errorf("%s read %d of %d bytes before stopping", name, read, size)
					}
				}
			})
		}
	}
}

// TestMatrixDamaged changes every byte of a small matrix file five ways:
// each opens with ErrFormat naming the file, or opens with every row and
// ASIN readable. Without schema.CheckArrowFile some end the test binary
// (arrow-go allocates 22 GB for a footer's count, or 40 GB for a batch
// turned compressed); without the asin column's check some panic in ASIN.
func TestMatrixDamaged(t *testing.T) {
	const dim = 3
	dir := t.TempDir()
	good := smallMatrix(t, dir, dim)
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for i := range b {
		for _, x := range []byte{0x01, 0x10, 0x20, 0x80, 0xff} {
			c := slices.Clone(b)
			c[i] ^= x
			p := writeFile(t, dir, "bad.arrow", c)
			m, err := OpenMatrix(p)
			if err != nil {
				if !errors.Is(err, ErrFormat) || !strings.HasPrefix(err.Error(), "imagefeat: bad.arrow: ") {
					t.Fatalf("byte %d ^ %#x: %v, want ErrFormat naming bad.arrow", i, x, err)
				}
				refused++
				continue
			}
			func() {
				defer m.Close()
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("byte %d ^ %#x: reading the rows: %v", i, x, p)
					}
				}()
				for r := range m.Rows() {
					_, _ = m.Row(r), m.ASIN(r)
				}
			}()
		}
	}
	if refused == 0 {
		t.Fatal("no change was refused")
	}
}

package imagefeat

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"monomer/pipeline/cache"
)

// extractCase is a .b file and the rows wanted of it.
type extractCase struct {
	name  string
	b     []byte
	rows  map[string]int32
	batch int
}

// plainCases: files that exercise every path of the copy and every error
// the stream reports, in every order that decides which one wins.
func plainCases(t *testing.T) []extractCase {
	const dim = 6
	rng := rand.New(rand.NewPCG(7, 7))
	recs := randomRecords(rng, 60, dim)
	// Duplicates of a wanted ASIN (later copies differ) and of an unwanted
	// one, spread over the file.
	recs = append(recs[:20], append([]record{{recs[3].asin, []float32{9, 9, 9, 9, 9, 9}}, recs[1]}, recs[20:]...)...)
	recs = append(recs, record{recs[3].asin, []float32{8, 8, 8, 8, 8, 8}}, recs[50])
	good := encode(t, recs, dim, false)
	rs := RecordSize(dim)
	// Want two records of three but record 1, in a shuffled row order.
	var want []int
	for i := range 60 {
		if i%3 != 1 {
			want = append(want, i)
		}
	}
	rng.Shuffle(len(want), func(i, j int) { want[i], want[j] = want[j], want[i] })
	rows := map[string]int32{}
	for r, i := range want {
		rows[asinOf(i)] = int32(r)
	}
	// Sorted rows: runs of consecutive records, read in one go.
	sorted := map[string]int32{}
	for i := range 60 {
		sorted[asinOf(i)] = int32(i)
	}
	missing := map[string]int32{}
	for a, r := range rows {
		missing[a] = r
	}
	missing["B0NOIMAGE1"], missing["B0NOIMAGE0"] = int32(len(rows)), int32(len(rows)+1)

	// nonFinite plants bits at dimension j of record i (0-based in the file).
	nonFinite := func(b []byte, i, j int, bits uint32) []byte {
		c := bytes.Clone(b)
		off := i*rs + ASINLen + 4*j
		c[off], c[off+1], c[off+2], c[off+3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
		return c
	}
	badHeader := func(b []byte, i int) []byte {
		c := bytes.Clone(b)
		c[i*rs+4] = 0x07
		return c
	}
	nan, inf := math.Float32bits(float32(math.NaN())), math.Float32bits(float32(math.Inf(-1)))
	// Record 2 is wanted (row), 1 unwanted, 21 a duplicate, 40 wanted.
	return []extractCase{
		{name: "good, shuffled rows, batches of 4", b: good, rows: rows, batch: 4},
		{name: "good, sorted rows, one batch", b: good, rows: sorted},
		{name: "good, batch of one row", b: good, rows: sorted, batch: 1},
		{name: "no rows", b: good, rows: map[string]int32{}},
		{name: "missing rows", b: good, rows: missing, batch: 5},
		{name: "NaN in a kept record", b: nonFinite(good, 40, 2, nan), rows: rows, batch: 4},
		{name: "Inf in an unwanted record", b: nonFinite(good, 1, 5, inf), rows: rows},
		{name: "NaN in a duplicate", b: nonFinite(good, 21, 0, nan), rows: rows},
		{name: "two non-finite records: the first wins", b: nonFinite(nonFinite(good, 40, 1, nan), 2, 3, inf), rows: rows},
		{name: "bad header", b: badHeader(good, 30), rows: rows},
		{name: "NaN before a bad header", b: badHeader(nonFinite(good, 40, 1, nan), 45), rows: rows},
		{name: "NaN after a bad header", b: badHeader(nonFinite(good, 40, 1, nan), 35), rows: rows},
		{name: "truncated", b: good[:len(good)-7], rows: rows},
		{name: "truncated and missing", b: good[:len(good)-rs-3], rows: sorted},
		{name: "NaN and truncated", b: nonFinite(good, 2, 0, nan)[:len(good)-3], rows: rows},
	}
}

// TestExtractPlainAsStream: the parallel copy of a plain file writes the
// bytes, stats and errors the stream writes, at any GOMAXPROCS and with
// tasks of one to a few records, and the digest it hands over is the
// file's.
func TestExtractPlainAsStream(t *testing.T) {
	const dim = 6
	defer func(b int) { plainTaskBytes = b }(plainTaskBytes)
	for _, tc := range plainCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := writeFile(t, dir, "image_features_Men.b", tc.b)
			c := newConfig([]Option{WithDim(dim)})
			asins := make([]string, len(tc.rows))
			for a, r := range tc.rows {
				asins[r] = a
			}
			batch := tc.batch
			if batch <= 0 {
				batch = 4096
			}
			ref := filepath.Join(dir, "stream.arrow")
			wantSt, wantErr := extractStream(context.Background(), in, tc.rows, asins, dim, batch, DefaultScale, ref, c)
			wantB, _ := os.ReadFile(ref)
			for _, procs := range []int{1, 2, 3, 7, 16} {
				for _, recsPerTask := range []int{1, 3, 1000} {
					plainTaskBytes = recsPerTask * RecordSize(dim)
					prev := runtime.GOMAXPROCS(procs)
					out := filepath.Join(dir, fmt.Sprintf("plain-%d-%d.arrow", procs, recsPerTask))
					var sum string
					var progress int64
					st, err := Extract(context.Background(), in, tc.rows, len(tc.rows), DefaultScale, out,
						WithDim(dim), WithBatchRows(tc.batch), WithSHA256(&sum), WithProgress(func(n int64) { progress += n }))
					runtime.GOMAXPROCS(prev)
					where := fmt.Sprintf("GOMAXPROCS %d, %d records a task", procs, recsPerTask)
					if fmt.Sprint(err) != fmt.Sprint(wantErr) || errors.Unwrap(err) == nil != (errors.Unwrap(wantErr) == nil) {
						t.Fatalf("%s: error\n%v\nwant\n%v", where, err, wantErr)
					}
					if !reflect.DeepEqual(st, wantSt) {
						t.Fatalf("%s: stats\n%+v\nwant\n%+v", where, st, wantSt)
					}
					if wantErr != nil {
						if !errors.Is(err, errors.Unwrap(wantErr)) && errors.Unwrap(wantErr) != nil {
							t.Fatalf("%s: %v does not wrap %v", where, err, errors.Unwrap(wantErr))
						}
						if _, serr := os.Stat(out); !errors.Is(serr, fs.ErrNotExist) {
							t.Fatalf("%s: output left behind after %v", where, err)
						}
						continue
					}
					got, _ := os.ReadFile(out)
					if !bytes.Equal(got, wantB) {
						t.Fatalf("%s: matrix differs from the stream's", where)
					}
					if h, err := cache.HashFile(out); err != nil || sum != h {
						t.Fatalf("%s: handed-over sha256 %s, the file's %s (%v)", where, sum, h, err)
					}
					if progress != st.Bytes {
						t.Fatalf("%s: progress %d bytes, want %d", where, progress, st.Bytes)
					}
				}
			}
			if wantErr == nil {
				// The stream's own digest, for gzipped files.
				var sum string
				gz := writeFile(t, dir, "x.b.gz", gzipBytes(t, tc.b))
				out := filepath.Join(dir, "gz.arrow")
				if _, err := Extract(context.Background(), gz, tc.rows, len(tc.rows), DefaultScale, out, WithDim(dim), WithBatchRows(tc.batch), WithSHA256(&sum)); err != nil {
					t.Fatal(err)
				}
				if h, _ := cache.HashFile(out); sum != h || h != fmt.Sprintf("%x", sha256Of(wantB)) {
					t.Fatalf("gzip: handed-over sha256 %s, the file's %s", sum, h)
				}
			}
		})
	}
}

func sha256Of(b []byte) [32]byte { return sha256.Sum256(b) }

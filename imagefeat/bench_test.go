package imagefeat

import (
	"bufio"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// benchSizes are record counts at the paper's 4096 dimensions: 16 MB and
// 164 MB of records (Women's Clothing is 659,566 records, 10.8 GB).
var benchSizes = []struct {
	name    string
	records int
}{
	{"small", 1000},
	{"medium", 10000},
}

// writeBench writes n FC7-sized records, 3/4 of the values zero like ReLU
// activations, streaming so the generator holds one record at a time.
func writeBench(b *testing.B, path string, n int, gz bool) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	var dst io.Writer = bw
	var zw *gzip.Writer
	if gz {
		zw, _ = gzip.NewWriterLevel(bw, gzip.BestSpeed)
		dst = zw
	}
	w := NewWriter(dst, filepath.Base(path), Dim)
	rng := rand.New(rand.NewPCG(1, 1))
	v := make([]float32, Dim)
	for i := range n {
		for j := range v {
			v[j] = 0
			if rng.IntN(4) == 0 {
				v[j] = float32(rng.Float64() * 60)
			}
		}
		if err := w.Write(asinOf(i), v); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			b.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkReader reports MB/s of uncompressed records read and validated
// (the file is in the page cache: this is the CPU cost).
func BenchmarkReader(b *testing.B) {
	for _, size := range benchSizes {
		for _, gz := range []bool{false, true} {
			name := size.name
			if gz {
				name += "-gzip"
			}
			b.Run(name, func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "image_features_Bench.b")
				writeBench(b, path, size.records, gz)
				b.SetBytes(int64(size.records * RecordSize(Dim)))
				b.ResetTimer()
				for range b.N {
					r, err := Open(path)
					if err != nil {
						b.Fatal(err)
					}
					for {
						if _, _, err := r.next(); err == io.EOF {
							break
						} else if err != nil {
							b.Fatal(err)
						}
					}
					r.Close()
				}
			})
		}
	}
}

// BenchmarkExtract reports MB/s of .b records streamed into a matrix of 90 %
// of them, including writing and closing the Arrow file.
func BenchmarkExtract(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			dir := b.TempDir()
			path := filepath.Join(dir, "image_features_Bench.b")
			writeBench(b, path, size.records, false)
			rows := map[string]int32{}
			for i := range size.records {
				if i%10 != 0 {
					rows[asinOf(i)] = int32(len(rows))
				}
			}
			out := filepath.Join(dir, "image.arrow")
			b.SetBytes(int64(size.records * RecordSize(Dim)))
			b.ResetTimer()
			for range b.N {
				// A fresh file each time, as in a run: overwriting one whose
				// pages are still being written back waits for the disk.
				b.StopTimer()
				os.Remove(out)
				b.StartTimer()
				if _, err := Extract(context.Background(), path, rows, len(rows), DefaultScale, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package schema

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// TestZstdEncodersConcurrent: rounds of pages compressed at once, at any
// GOMAXPROCS, make no more encoders than the pages of a round (counted
// where they are made), however many rounds.
func TestZstdEncodersConcurrent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // a GC may drop idle encoders
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	src := pageText(64<<10, 2)
	for _, procs := range []int{1, 2, 3, 7, 16} {
		runtime.GOMAXPROCS(procs)
		for _, at := range []int{1, 3, 5} {
			// Drop the idle encoders, so the count starts from none.
			encoders.mu.Lock()
			encoders.idle, encoders.victims = nil, nil
			encoders.mu.Unlock()
			made := encoders.made.Load()
			for range 8 {
				var start, done sync.WaitGroup
				start.Add(at)
				for range at {
					done.Go(func() {
						start.Done()
						start.Wait() // as nearly at once as the scheduler allows
						zstdCodec{}.EncodeLevel(nil, src, compressionLevel)
					})
				}
				done.Wait()
			}
			if got := encoders.made.Load() - made; got > int64(at) {
				t.Errorf("GOMAXPROCS=%d: 8 rounds of %d pages compressed at once made %d encoders", procs, at, got)
			}
		}
	}
}

// TestZstdSameBytes: the codec writes the bytes of arrow-go's, for pages
// of any size (above zstd's 8 MB window too) and every level.
func TestZstdSameBytes(t *testing.T) {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	ours, ok := c.(zstdCodec)
	if !ok {
		t.Fatalf("the registered zstd codec is %T, not schema's", c)
	}
	sizes := []int{0, 1, 100, 64 << 10, 1 << 20}
	if !testing.Short() {
		sizes = append(sizes, 9<<20)
	}
	rnd := make([]byte, 300<<10)
	r := rand.New(rand.NewPCG(3, 3))
	for i := range rnd {
		rnd[i] = byte(r.Uint32())
	}
	for _, n := range sizes {
		for _, src := range [][]byte{pageText(n, uint64(n)), rnd[:min(n, len(rnd))]} {
			for _, level := range []int{1, compressionLevel, 7, 12, compress.DefaultCompressionLevel} {
				want := ours.arrowCodec.EncodeLevel(nil, src, level)
				got := ours.EncodeLevel(make([]byte, 10), src, level)
				if !bytes.Equal(got, want) {
					t.Errorf("%d bytes at level %d: %d bytes compressed, arrow-go's %d", len(src), level, len(got), len(want))
				}
				if back := ours.Decode(nil, got); !bytes.Equal(back, src) {
					t.Errorf("%d bytes at level %d: do not decode to the page", len(src), level)
				}
			}
		}
	}
}

package schema

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// pageText is n bytes of text-like data (words from a small vocabulary),
// compressible as review text is.
func pageText(n int, seed uint64) []byte {
	words := []string{"cable", "works", "great", "the", "battery", "charger", "not", "after", "two", "weeks", "sound", "quality", "price", "."}
	r := rand.New(rand.NewPCG(seed, 1))
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		b.WriteByte(' ')
	}
	return b.Bytes()[:n]
}

// compressTurns compresses a page per turn, turns taken one at a time by
// workers goroutines in rotation, each ready to run while it waits, so the
// scheduler runs them on many Ps (when GOMAXPROCS allows). It returns the
// heap bytes allocated meanwhile, with the GC off; each worker's output
// buffer is allocated before.
func compressTurns(t *testing.T, c compress.Codec, workers, turns int, src []byte) uint64 {
	t.Helper()
	dst := make([][]byte, workers)
	for i := range dst {
		dst[i] = make([]byte, 0, 2*len(src)+1024)
	}
	var turn atomic.Int64
	var wg sync.WaitGroup
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for w := range workers {
		wg.Go(func() {
			for k := w; k < turns; k += workers {
				for turn.Load() != int64(k) {
					runtime.Gosched()
				}
				out := c.EncodeLevel(dst[w], src, compressionLevel)
				if len(out) == 0 || &out[:1][0] != &dst[w][:1][0] {
					t.Errorf("turn %d: the page was not compressed into the buffer given", k)
				}
				turn.Add(1)
			}
		})
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestZstdEncodersNotPerP: pages compressed one at a time, by goroutines
// the scheduler spreads over the Ps, reuse one encoder whatever
// GOMAXPROCS: no encoder (16 MB of history each) is made after the first,
// where arrow-go's per-P pool made one for each P the goroutines ran on.
func TestZstdEncodersNotPerP(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // a GC may drop idle encoders
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	src := pageText(256<<10, 1)
	compressTurns(t, c, 1, 1, src) // the first encoder
	const oneHistory = 16 << 20
	for _, procs := range []int{1, 2, 3, 7, 16} {
		t.Run(fmt.Sprint("P=", procs), func(t *testing.T) {
			runtime.GOMAXPROCS(procs)
			alloc := compressTurns(t, c, 16, 128, src)
			if alloc >= oneHistory/4 {
				t.Errorf("128 pages compressed one at a time by 16 goroutines allocated %d MB: encoders were made beside the idle one (%d MB of history each)",
					alloc>>20, oneHistory>>20)
			}
		})
	}
}

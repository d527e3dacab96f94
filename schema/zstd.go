package schema

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// arrow-go compresses each page with a zstd encoder taken from a
// sync.Pool. A sync.Pool keeps an object per P: a writing goroutine that
// the scheduler moves between Ps leaves an encoder on each P it ran on,
// and every encoder holds a 16 MB history (twice zstd's 8 MB window). At
// GOMAXPROCS=16, ingest's review table, written on a goroutine of its own
// (Queue), kept 3 to 4 encoders live against 2 at GOMAXPROCS=2, and
// made new ones as each GC emptied the pools: 32 to 64 MB more live heap,
// twice that in peak RSS once the GC's headroom is counted.
//
// zstdCodec is arrow-go's codec with the encoders kept in one list that
// every P shares, so the encoders alive are as many as the pages being
// compressed at once, whatever GOMAXPROCS. The encoders are made with
// arrow-go's options and used through EncodeAll as arrow-go uses them,
// so every page's bytes are the same (TestZstdSameBytes). Registering it
// changes the codec of every zstd Parquet file this process writes, all
// of which are written here.
type zstdCodec struct {
	arrowCodec
}

// arrowCodec is what arrow-go's zstd codec implements; all but the page
// encoding is left to it.
type arrowCodec interface {
	compress.ErrorCodec
	compress.StreamingCodec
}

func init() {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		panic("schema: arrow-go has no zstd codec: " + err.Error())
	}
	ac, ok := c.(arrowCodec)
	if !ok {
		panic("schema: arrow-go's zstd codec lacks the streaming or error-reporting methods")
	}
	compress.RegisterCodec(compress.Codecs.Zstd, zstdCodec{ac})
}

// EncodeLevel is arrow-go's (parquet/compress/zstd.go): its level
// mapping, its encoder options, EncodeAll into dst.
func (zstdCodec) EncodeLevel(dst, src []byte, level int) []byte {
	l := zstd.EncoderLevelFromZstd(level)
	if level == compress.DefaultCompressionLevel {
		l = zstd.SpeedDefault
	}
	enc := encoders.get(l)
	defer encoders.put(l, enc)
	return enc.EncodeAll(src, dst[:0])
}

// encoderList holds the idle encoders of each level as a sync.Pool does,
// but in one list for all Ps: an encoder put back since the last GC, or
// idle through it (the victims), is reused; one idle through two GCs is
// dropped, so a process that stops writing lets them go.
type encoderList struct {
	mu      sync.Mutex
	idle    map[zstd.EncoderLevel][]*zstd.Encoder
	victims map[zstd.EncoderLevel][]*zstd.Encoder
	armed   bool         // a GC will age the lists (onGC)
	made    atomic.Int64 // encoders made, for the tests
}

var encoders encoderList

func (l *encoderList) get(level zstd.EncoderLevel) *zstd.Encoder {
	l.mu.Lock()
	for _, m := range []map[zstd.EncoderLevel][]*zstd.Encoder{l.idle, l.victims} {
		if s := m[level]; len(s) > 0 {
			enc := s[len(s)-1]
			s[len(s)-1] = nil
			m[level] = s[:len(s)-1]
			l.mu.Unlock()
			return enc
		}
	}
	l.mu.Unlock()
	l.made.Add(1)
	// arrow-go's options for a pooled encoder; with concurrency 1 it
	// holds one history, not one a P.
	enc, err := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(level),
		zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true))
	if err != nil { // only for options out of range, and these are fixed
		panic("schema: zstd encoder: " + err.Error())
	}
	return enc
}

func (l *encoderList) put(level zstd.EncoderLevel, enc *zstd.Encoder) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.idle == nil {
		l.idle = map[zstd.EncoderLevel][]*zstd.Encoder{}
	}
	l.idle[level] = append(l.idle[level], enc)
	if !l.armed {
		l.armed = true
		l.armGC()
	}
}

// armGC has onGC run after the next GC: the cleanup of an object that
// nothing references runs once a GC has found it unreachable.
func (l *encoderList) armGC() {
	runtime.AddCleanup(&gcSentinel{}, func(*encoderList) { l.onGC() }, l)
}

// gcSentinel has a pointer so that it is not a tiny allocation, whose
// cleanup could wait on its neighbours.
type gcSentinel struct{ _ *byte }

// onGC ages the lists: the victims are dropped and the idle encoders
// become the victims. It re-arms while any encoder is kept.
func (l *encoderList) onGC() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.victims, l.idle = l.idle, nil
	l.armed = false
	for _, s := range l.victims {
		l.armed = l.armed || len(s) > 0
	}
	if l.armed {
		l.armGC()
	}
}

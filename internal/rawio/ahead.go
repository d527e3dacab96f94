package rawio

import "io"

// Read-ahead: aheadBuffers buffers of aheadSize, so at most 1 MiB is
// inflated before the reader asks for it.
const (
	aheadBuffers = 4
	aheadSize    = 256 << 10
)

// readAhead runs Read of its source on a goroutine, a few buffers ahead of
// the consumer, so that inflating overlaps parsing on another core. The
// bytes and the error come out exactly as the source gave them.
type readAhead struct {
	full   chan chunk  // filled by the goroutine, in order
	free   chan []byte // consumed, for the goroutine to refill
	done   chan struct{}
	exited chan struct{} // closed when the goroutine has returned
	cur    chunk
	off    int
}

type chunk struct {
	b   []byte
	err error
}

func newReadAhead(src io.Reader) *readAhead {
	ra := &readAhead{
		full:   make(chan chunk, aheadBuffers),
		free:   make(chan []byte, aheadBuffers),
		done:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	for range aheadBuffers {
		ra.free <- make([]byte, aheadSize)
	}
	go ra.run(src)
	return ra
}

func (ra *readAhead) run(src io.Reader) {
	defer close(ra.exited)
	for {
		var buf []byte
		select {
		case buf = <-ra.free:
		case <-ra.done:
			return
		}
		// Fill the buffer, so that chunks are large whatever the
		// decompressor's read sizes.
		n, empty := 0, 0
		var err error
		for n < len(buf) && err == nil {
			var m int
			m, err = src.Read(buf[n:])
			n += m
			if m == 0 && err == nil {
				// A source that keeps returning nothing would spin forever.
				if empty++; empty == 100 {
					err = io.ErrNoProgress
				}
			}
		}
		select {
		case ra.full <- chunk{buf[:n], err}:
		case <-ra.done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (ra *readAhead) Read(p []byte) (int, error) {
	for ra.off == len(ra.cur.b) {
		if ra.cur.err != nil {
			return 0, ra.cur.err
		}
		if ra.cur.b != nil {
			ra.free <- ra.cur.b[:cap(ra.cur.b)]
		}
		ra.cur, ra.off = <-ra.full, 0
	}
	n := copy(p, ra.cur.b[ra.off:])
	ra.off += n
	return n, nil
}

// stop ends the goroutine and waits for it, so that the source may be
// closed. Read must not be called after it.
func (ra *readAhead) stop() {
	close(ra.done)
	<-ra.exited
}

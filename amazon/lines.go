package amazon

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
)

// A file is read by a pipeline: one goroutine cuts the (inflated) stream
// into batches of whole lines, up to GOMAXPROCS workers (at most
// maxWorkers) parse the batches,
// and the caller's goroutine takes the parsed lines in file order, so the
// callbacks, the rejects, the stats and the errors are those of reading
// line by line, whatever the number of workers. The number of batches is
// fixed (batchesPerWorker a worker), so memory does not grow with the file.

// batchBytes is the largest size at which a batch is cut: some hundreds
// of lines, so that handing one over costs little against parsing it. With
// many workers batches are cut smaller (down to minBatchBytes), so that
// all those in flight hold about inFlightBytes of lines whatever
// GOMAXPROCS (and as much again of parsed records). A variable for the
// tests, which cut batches of a line or two.
var batchBytes = 256 << 10

const (
	inFlightBytes = 2 << 20
	minBatchBytes = 32 << 10
)

// batchLines caps the lines of a batch (a file of empty lines, say).
const batchLines = 8192

// batchesPerWorker batches a worker, plus two: one being cut and one
// being taken, while each worker parses one and has the next waiting.
const batchesPerWorker = 2

// maxWorkers caps the parsing workers where their batches, cut at
// minBatchBytes, would hold more than inFlightBytes: 31, so the lines in
// flight stay within inFlightBytes (plus a line a batch) at any GOMAXPROCS.
// It costs no speed: the one goroutine that inflates and cuts the stream
// feeds a few parsers at most (on one core, BenchmarkReadReviews parses
// 860 MB/s of reviews but reads 197 MB/s of them gzipped,
// BenchmarkParseMeta and BenchmarkReadMeta 430 and 178 MB/s of metadata).
const maxWorkers = (inFlightBytes/minBatchBytes - 2) / batchesPerWorker

// lineKind says what a line of a batch is.
type lineKind uint8

const (
	lineParsed  lineKind = iota // handed to the parser
	lineTooLong                 // longer than MaxLineBytes: the line is its start
	lineEmpty                   // only white space
)

// lineAt is one line of a batch.
type lineAt struct {
	start, end int   // in batch.buf
	off        int64 // byte offset of its start in the stream
	bytes      int64 // bytes read from the stream once it was cut: Stats.Bytes if reading stops after it
	kind       lineKind
	why        string // the parser's reject reason, "" if it took the line
}

// batch is a run of consecutive lines.
type batch[T any] struct {
	buf   []byte
	lines []lineAt
	out   []T // the parser's result for each line
	// The last batch of the stream says how it ended: err is a read
	// error after its lines (nil at the end of the stream) and bytes the
	// bytes read.
	last     bool
	err      error
	bytes    int64
	ready    chan struct{} // closed once parsed
	panicked any           // a parser's panic, re-raised by the reader
}

// linePipe is the reading of one file.
type linePipe[T any] struct {
	free  chan *batch[T] // to be cut
	work  chan *batch[T] // to be parsed, in any order
	order chan *batch[T] // in file order, to be taken
	done  chan struct{}  // closed to stop the goroutines early
	wg    sync.WaitGroup
	rc    io.Closer
	size  int // bytes at which a batch is cut
}

// startLines starts reading r (the file named base; closed by stop).
// Each worker calls newParser once, for a parser of its own (a scanner and
// its scratch are not shared); a parser returns a line's reject reason,
// "" when it took the line into *out.
func startLines[T any](r io.ReadCloser, base string, newParser func() func(line []byte, out *T) string) *linePipe[T] {
	workers := min(runtime.GOMAXPROCS(0), maxWorkers)
	n := batchesPerWorker*workers + 2
	p := &linePipe[T]{
		free:  make(chan *batch[T], n),
		work:  make(chan *batch[T], n),
		order: make(chan *batch[T], n),
		done:  make(chan struct{}),
		rc:    r,
		size:  max(min(batchBytes, inFlightBytes/n), min(batchBytes, minBatchBytes)),
	}
	for range n {
		p.free <- &batch[T]{}
	}
	p.wg.Go(func() { p.cut(r, base) })
	for range workers {
		p.wg.Go(func() { p.parse(newParser()) })
	}
	return p
}

// stop ends the goroutines, waits for them and closes the file.
func (p *linePipe[T]) stop() {
	close(p.done)
	p.wg.Wait()
	p.rc.Close()
}

// cut splits the stream into batches as the line-by-line reader did:
// the same lines, offsets, byte counts and read error.
func (p *linePipe[T]) cut(r io.Reader, base string) {
	defer close(p.order)
	defer close(p.work)
	lr := newLineReader(r)
	var lines int64
	var b *batch[T]
	send := func() {
		b.ready = make(chan struct{})
		p.order <- b // neither blocks: each holds at most the n batches
		p.work <- b
		b = nil
	}
	for {
		if b == nil {
			select {
			case b = <-p.free:
			case <-p.done:
				return
			}
			b.reset()
		}
		line, off, err := lr.next()
		if err != nil || line == nil {
			b.last, b.bytes = true, lr.bytes
			if err != nil {
				b.err = readError(base, lines, lr.off, err)
			}
			send()
			return
		}
		if lines == 0 && bytes.HasPrefix(line, utf8BOM) {
			line, off = line[len(utf8BOM):], off+int64(len(utf8BOM))
		}
		if n := len(line); n > 0 && line[n-1] == '\r' { // CRLF file
			line = line[:n-1]
		}
		lines++
		kind := lineParsed
		if lr.tooLong {
			kind = lineTooLong
		}
		start := len(b.buf)
		b.buf = append(b.buf, line...)
		b.lines = append(b.lines, lineAt{start: start, end: len(b.buf), off: off, bytes: lr.bytes, kind: kind})
		if len(b.buf) >= p.size || len(b.lines) >= batchLines {
			send()
		}
	}
}

func (b *batch[T]) reset() {
	if cap(b.buf) > 4*batchBytes { // grown for a long line: let it go
		b.buf = nil
	}
	b.buf, b.lines = b.buf[:0], b.lines[:0]
	b.last, b.err, b.bytes, b.panicked = false, nil, 0, nil
}

// parse is a worker: it parses batches until there are none or the pipe
// stops.
func (p *linePipe[T]) parse(parser func(line []byte, out *T) string) {
	for {
		select {
		case <-p.done:
			return
		case b, ok := <-p.work:
			if !ok {
				return
			}
			b.parse(parser)
		}
	}
}

func (b *batch[T]) parse(parser func(line []byte, out *T) string) {
	defer func() {
		if r := recover(); r != nil {
			b.panicked = fmt.Sprintf("%v\n(in a parsing worker)\n%s", r, debug.Stack())
		}
		close(b.ready)
	}()
	if cap(b.out) < len(b.lines) {
		b.out = append(b.out[:cap(b.out)], make([]T, len(b.lines)-cap(b.out))...)
	}
	b.out = b.out[:len(b.lines)]
	for i := range b.lines {
		l := &b.lines[i]
		l.why = ""
		if l.kind != lineParsed {
			continue
		}
		line := b.buf[l.start:l.end]
		if len(bytes.TrimSpace(line)) == 0 {
			l.kind = lineEmpty
			continue
		}
		l.why = parser(line, &b.out[i])
	}
}

// readLines reads the file at path through a linePipe and drives the
// caller's handling, on the caller's goroutine, in file order: handle gets
// each parsed line's result and reject reason (parseWhy, "" if the parser
// took it) and returns the line's reject reason ("" when accepted or
// skipped) or an error that stops reading. Empty and overlong lines are
// rejected without handle. Reading stops, and the goroutines are joined,
// before readLines returns.
func readLines[T any](path string, reject func(Reject), newParser func() func(line []byte, out *T) string,
	handle func(out *T, parseWhy string, lineNo int64, st *Stats) (string, error)) (Stats, error) {
	var st Stats
	rc, err := Open(path)
	if err != nil {
		return st, err
	}
	base := filepath.Base(path)
	p := startLines(rc, base, newParser)
	defer p.stop()
	for b := range p.order {
		<-b.ready
		if b.panicked != nil {
			panic(b.panicked)
		}
		for i := range b.lines {
			l := &b.lines[i]
			st.Lines++
			var why string
			switch l.kind {
			case lineTooLong:
				why = fmt.Sprintf("line longer than %d bytes", MaxLineBytes)
			case lineEmpty:
				why = "empty line"
			default:
				why, err = handle(&b.out[i], l.why, st.Lines, &st)
				if err != nil {
					st.Bytes = l.bytes
					return st, err
				}
			}
			if why != "" {
				st.Rejected++
				if reject != nil {
					reject(Reject{File: base, Line: st.Lines, Offset: l.off, Err: why, Excerpt: excerpt(b.buf[l.start:l.end])})
				}
			}
		}
		if b.last {
			st.Bytes = b.bytes
			return st, b.err
		}
		p.free <- b
	}
	panic("amazon: the line cutter ended without a last batch")
}

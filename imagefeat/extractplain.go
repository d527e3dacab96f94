package imagefeat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"monomer/internal/par"
	"monomer/internal/rawio"
)

// The kinds of record of a .b file, in Extract's first-wins reading.
const (
	recKept      uint8 = iota // the first record of a wanted ASIN
	recUnwanted               // the first record of an ASIN not wanted
	recDuplicate              // a later record of an ASIN
)

// headerTask is how many records a task of the header pass reads.
const headerTask = 4096

// plainTaskBytes is about how much input a copying task of extractPlain
// reads (at least one record): a cancelled Extract stops within a few
// tasks. Tests shrink it to spread a few records over many tasks.
var plainTaskBytes = chunkBytes

// syncAheadBytes is how much hashed output the follower lets accumulate
// before asking the kernel to start writing it back, so the runner's fsync
// at the end finds most of the file on its way to disk.
const syncAheadBytes = 64 << 20

// isPlainFile reports whether path is a regular file that is not gzipped:
// one whose records can be read at their offsets.
func isPlainFile(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("imagefeat: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("imagefeat: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return false, nil
	}
	var magic [2]byte
	n, _ := f.ReadAt(magic[:], 0)
	return !rawio.IsGzip(magic[:n]), nil
}

// hashFile is the hex sha256 of the file at path.
func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("imagefeat: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, f, make([]byte, chunkBytes)); err != nil {
		return "", fmt.Errorf("imagefeat: %s: %w", filepath.Base(path), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// plainIndex is what the header pass learns of a plain .b file: which
// record fills each row, read in file order exactly as the stream reads.
type plainIndex struct {
	name string
	rs   int64  // record size
	hdr  []byte // the headers of records 0..end-1, ASINLen bytes each
	kind []uint8
	// end is the index of the first record with a bad header (its error
	// is endErr), or the number of whole records.
	end    int64
	endErr error
	src    []int64 // row -> the record that fills it, -1 if none
	others []int64 // the records before end that fill no row, ascending
}

// indexPlain reads the headers of in (headerTask records a task, in
// parallel) and classifies the records in file order.
func indexPlain(ctx context.Context, in *os.File, name string, size int64, rows map[string]int32, n int, dim int) (*plainIndex, error) {
	rs := int64(RecordSize(dim))
	nrec := size / rs
	hdr := make([]byte, nrec*ASINLen)
	tasks := int((nrec + headerTask - 1) / headerTask)
	errs := make([]error, tasks)
	par.Until(tasks, 0, func(_, t int) bool {
		if err := ctx.Err(); err != nil {
			errs[t] = err
			return false
		}
		for i := int64(t) * headerTask; i < min(nrec, int64(t+1)*headerTask); i++ {
			if _, err := in.ReadAt(hdr[i*ASINLen:(i+1)*ASINLen], i*rs); err != nil {
				errs[t] = fmt.Errorf("imagefeat: %s: read at byte %d: %w", name, i*rs, err)
				return false
			}
		}
		return true
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}

	x := &plainIndex{name: name, rs: rs, hdr: hdr, kind: make([]uint8, nrec), end: nrec, src: make([]int64, n)}
	for i := range x.src {
		x.src[i] = -1
	}
	r := Reader{name: name}
	seen := make(map[[ASINLen]byte]struct{})
	for i := range nrec {
		h := hdr[i*ASINLen : (i+1)*ASINLen]
		a, err := r.parseASIN(h, i*rs)
		if err != nil {
			x.end, x.endErr = i, err
			break
		}
		row, want := rows[string(a)]
		if want && x.src[row] < 0 {
			x.src[row] = i
			x.kind[i] = recKept
			continue
		}
		x.others = append(x.others, i)
		k := [ASINLen]byte(h)
		_, dup := seen[k]
		if !want && !dup {
			seen[k] = struct{}{}
			x.kind[i] = recUnwanted
			continue
		}
		x.kind[i] = recDuplicate
	}
	// Rows whose ASIN's first record lies beyond a bad header were never
	// reached by the stream.
	return x, nil
}

// statsBefore counts the records before end as the stream does when it
// stops there: Bytes and Missing are set only by a complete read.
func (x *plainIndex) statsBefore(end int64) ExtractStats {
	st := ExtractStats{Records: end}
	r := Reader{name: x.name}
	for i, k := range x.kind[:end] {
		switch k {
		case recKept:
			st.Kept++
		case recUnwanted:
			st.Unwanted++
		default:
			st.DuplicateASINs++
			if st.FirstDuplicate == "" {
				off := int64(i) * x.rs
				a, _ := r.parseASIN(x.hdr[int64(i)*ASINLen:int64(i+1)*ASINLen], off)
				st.FirstDuplicate, st.FirstDuplicateOffset = string(a), off
			}
		}
	}
	return st
}

// plainTask is what a copying task found.
type plainTask struct {
	err     error // a failed read or write: the task stopped
	skipped bool  // not run: Extract is stopping
	bad     int64 // the first record with a non-finite value, or -1
	badJ    int   // and the value's index
	badBits uint32
	bytes   int64 // input read
}

// extractPlain is Extract for a plain .b file. Its records have a fixed
// size, so each can be read on its own: a pass over the headers decides,
// in file order as extractStream would, which record fills each row (the
// first of its ASIN) and which are unwanted or duplicates. Then tasks of
// about chunkBytes of input run in parallel: first the rows in order
// (reading each row's record, checking, scaling and storing it through a
// shared mapping of the output, whose feature buffers writeSkeleton left
// as holes), then the records that fill no row (checked only). One
// goroutine, this one, follows the finished tasks in order: it reports
// progress, hashes the output up to the last finished row and starts its
// writeback. Every record is read and checked as by the stream, and the
// first bad one in file order decides the error and the stats, so results
// and messages are the stream's whatever GOMAXPROCS.
func extractPlain(ctx context.Context, path string, rows map[string]int32, asins []string, dim, batch int, scale float32, out string, c config) (ExtractStats, error) {
	name := filepath.Base(path)
	n := len(asins)
	in, err := os.Open(path)
	if err != nil {
		return ExtractStats{}, fmt.Errorf("imagefeat: %w", err)
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return ExtractStats{}, fmt.Errorf("imagefeat: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return ExtractStats{}, err
	}
	x, err := indexPlain(ctx, in, name, fi.Size(), rows, n, dim)
	if err != nil {
		return ExtractStats{}, err
	}

	f, err := os.OpenFile(out, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return ExtractStats{}, fmt.Errorf("imagefeat: %w", err)
	}
	var mapped []byte
	fail := func(st ExtractStats, err error) (ExtractStats, error) {
		if mapped != nil {
			unix.Munmap(mapped)
		}
		f.Close()
		os.Remove(out)
		return st, err
	}
	dataAt, err := writeSkeleton(f, asins, dim, batch, scale)
	if err != nil {
		return fail(ExtractStats{}, fmt.Errorf("imagefeat: %s: %w", filepath.Base(out), err))
	}
	ofi, err := f.Stat()
	if err != nil {
		return fail(ExtractStats{}, fmt.Errorf("imagefeat: %w", err))
	}
	size := ofi.Size()
	// Reserve the holes' blocks now: a full disk is then this clean error
	// and not a fault on writing through the mapping (caught below too).
	if err := reserve(f, size); err != nil {
		return fail(ExtractStats{}, fmt.Errorf("imagefeat: %s: reserve %d bytes: %w", filepath.Base(out), size, err))
	}
	mapped, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		mapped = nil
		return fail(ExtractStats{}, fmt.Errorf("imagefeat: %s: map: %w", filepath.Base(out), err))
	}

	rowBytes := int64(4 * dim)
	rowAt := func(row int) int64 {
		b := row / batch
		return dataAt[b] + int64(row-b*batch)*rowBytes
	}
	per := max(1, plainTaskBytes/int(x.rs))
	rowTasks := (n + per - 1) / per
	tasks := rowTasks + (len(x.others)+per-1)/per
	res := make([]plainTask, tasks)
	done := make([]chan struct{}, tasks)
	for t := range done {
		done[t] = make(chan struct{})
	}
	// Records at or after firstBad need no check: an earlier one failed.
	var firstBad atomic.Int64
	firstBad.Store(x.end)
	var stop atomic.Bool
	workers := min(runtime.GOMAXPROCS(0), max(1, tasks))
	bufs := make([][]byte, workers)
	vecs := make([][]float32, workers)
	recs := make([][]int64, workers)
	task := func(w, t int) (ok bool) {
		defer close(done[t]) // even when skipped: the follower waits for each
		rt := &res[t]
		rt.bad = -1
		if stop.Load() || ctx.Err() != nil {
			rt.skipped = true
			return false
		}
		// A fault writing through the mapping (an I/O error, or a full
		// disk where the space could not be reserved) is an error here,
		// not a crash.
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if p := recover(); p != nil {
				if _, isFault := p.(interface{ Addr() uintptr }); !isFault {
					panic(p)
				}
				rt.err = fmt.Errorf("imagefeat: %s: writing through its mapping failed (out of disk space?): %v", filepath.Base(out), p)
				stop.Store(true)
				ok = false
			}
		}()
		if bufs[w] == nil {
			bufs[w] = make([]byte, int64(per)*x.rs)
			vecs[w] = make([]float32, dim)
			recs[w] = make([]int64, 0, per)
		}
		buf, vec, rec := bufs[w], vecs[w], recs[w][:0]
		lo := t * per
		if t < rowTasks {
			for row := lo; row < min(n, lo+per); row++ {
				rec = append(rec, x.src[row])
			}
		} else {
			lo = (t - rowTasks) * per
			rec = append(rec, x.others[lo:min(len(x.others), lo+per)]...)
		}
		for k := 0; k < len(rec); {
			if rec[k] < 0 { // a missing row: no record
				k++
				continue
			}
			j := k + 1 // a run of consecutive records: one read
			for j < len(rec) && rec[j] == rec[j-1]+1 {
				j++
			}
			b := buf[:int64(j-k)*x.rs]
			if _, err := in.ReadAt(b, rec[k]*x.rs); err != nil {
				rt.err = fmt.Errorf("imagefeat: %s: read at byte %d: %w", name, rec[k]*x.rs, err)
				stop.Store(true)
				return false
			}
			rt.bytes += int64(len(b))
			for q := k; q < j; q++ {
				if rec[q] >= firstBad.Load() {
					continue
				}
				body := b[int64(q-k)*x.rs+ASINLen : int64(q-k+1)*x.rs]
				if bad := decodeValues(vec, body); bad >= 0 {
					if rt.bad < 0 || rec[q] < rt.bad {
						rt.bad, rt.badJ, rt.badBits = rec[q], bad, math.Float32bits(vec[bad])
					}
					for cur := firstBad.Load(); rec[q] < cur && !firstBad.CompareAndSwap(cur, rec[q]); cur = firstBad.Load() {
					}
					continue
				}
				if t >= rowTasks {
					continue
				}
				at := rowAt(lo + q)
				dst := mapped[at : at+rowBytes]
				if nativeLE && at%4 == 0 {
					fs := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(dst))), dim)
					for i, v := range vec {
						fs[i] = v / scale
					}
				} else {
					for i, v := range vec {
						vec[i] = v / scale
					}
					encodeValues(dst, vec)
				}
			}
			k = j
		}
		return true
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		par.Until(tasks, 0, task)
	}()

	// Follow the tasks in order.
	var h hash.Hash
	if c.sha256 != nil {
		h = sha256.New()
	}
	var hashed, synced int64
	follow := func(end int64) {
		if h != nil {
			h.Write(mapped[hashed:end])
		}
		hashed = end
		if hashed-synced >= syncAheadBytes || hashed == size {
			// Only a hint: an error shows again at the runner's fsync.
			startWriteback(f, synced, hashed-synced)
			synced = hashed
		}
	}
	for t := range tasks {
		select {
		case <-done[t]:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		if res[t].err != nil || res[t].skipped {
			break
		}
		if c.progress != nil && res[t].bytes > 0 {
			c.progress(res[t].bytes)
		}
		if t < rowTasks && t+1 < rowTasks {
			follow(rowAt((t + 1) * per))
		}
	}
	stop.Store(true)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fail(ExtractStats{}, err)
	}
	for _, rt := range res {
		if rt.err != nil {
			return fail(ExtractStats{}, rt.err)
		}
	}
	if hashed < size {
		follow(size)
	}

	// The first bad record in file order decides, as in the stream: a
	// non-finite value (found only before a bad header), the bad header,
	// then a partial record at the end.
	bad, badJ, bits := int64(-1), 0, uint32(0)
	for _, rt := range res {
		if rt.bad >= 0 && (bad < 0 || rt.bad < bad) {
			bad, badJ, bits = rt.bad, rt.badJ, rt.badBits
		}
	}
	if bad >= 0 {
		r := Reader{name: name}
		a, _ := r.parseASIN(x.hdr[bad*ASINLen:(bad+1)*ASINLen], bad*x.rs)
		return fail(x.statsBefore(bad), r.nonFinite(bits, bad*x.rs, a, badJ))
	}
	if x.endErr != nil {
		return fail(x.statsBefore(x.end), x.endErr)
	}
	nrec := int64(len(x.kind))
	if rest := fi.Size() - nrec*x.rs; rest != 0 {
		return fail(x.statsBefore(nrec), fmt.Errorf("imagefeat: %s: %w at byte %d: %d of %d bytes",
			name, ErrTruncated, nrec*x.rs, rest, x.rs))
	}
	st := x.statsBefore(nrec)
	st.Bytes = nrec * x.rs
	for i, s := range x.src {
		if s < 0 {
			st.Missing = append(st.Missing, int32(i))
		}
	}
	if len(st.Missing) > 0 {
		m := st.Missing[0]
		return fail(st, fmt.Errorf("imagefeat: %s: %w: %d of %d rows (first: row %d, asin %s)",
			name, ErrMissingRows, len(st.Missing), n, m, asins[m]))
	}
	err = unix.Munmap(mapped)
	mapped = nil
	if err != nil {
		return fail(st, fmt.Errorf("imagefeat: %w", err))
	}
	if err := f.Close(); err != nil {
		os.Remove(out)
		return st, fmt.Errorf("imagefeat: %w", err)
	}
	if h != nil {
		*c.sha256 = hex.EncodeToString(h.Sum(nil))
	}
	return st, nil
}

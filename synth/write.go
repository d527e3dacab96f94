package synth

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/klauspost/compress/gzip"

	"monomer/imagefeat"
)

// WriteOptions tune Write. The zero value writes plain features with
// GOMAXPROCS workers.
type WriteOptions struct {
	// GzipFeatures compresses the .b file (readers detect gzip from the
	// magic bytes, whatever the name). Default false.
	GzipFeatures bool
	// Workers generating lines and records in parallel. The files do not
	// depend on it. If 0, runtime.GOMAXPROCS(0).
	Workers int
	// Progress, if set, is called from one goroutine with the items plus
	// records done so far and the total.
	Progress func(done, total int64)
}

// WriteStats counts what Write wrote.
type WriteStats struct {
	MetaLines, ReviewLines, Records int64
	// Related-list entries written per graph (planted and extras); for
	// WriteCatalogue, the pairs of each relation it names after the graph.
	AlsoBought, AlsoViewed, BoughtTogether int64
	// Relations is the rows of WriteCatalogue's relations table, the
	// pairs of all three relations.
	Relations int64
	// Bytes of each file on disk (RelationBytes: the relations table).
	MetaBytes, ReviewBytes, FeatureBytes, RelationBytes int64
	// Uncompressed bytes of the two text files.
	MetaRaw, ReviewRaw int64
}

// Files returns the three file names Write creates in dir for name.
func Files(dir, name string) (meta, reviews, features string) {
	return filepath.Join(dir, "meta_"+name+".json.gz"),
		filepath.Join(dir, "reviews_"+name+".json.gz"),
		filepath.Join(dir, "image_features_"+name+".b")
}

// Write writes the world as the three Amazon files in dir:
// meta_<name>.json.gz (2014 Python-literal lines), reviews_<name>.json.gz
// (JSON lines) and image_features_<name>.b (10-byte space-padded ASIN and F
// little-endian float32 per record, in an order unrelated to the
// metadata's). Lines and records are generated in parallel and written in
// order, so the bytes depend only on the world. The files appear
// together or not at all (written under temporary names, renamed once all
// are complete).
func Write(ctx context.Context, dir, name string, w *World, opts WriteOptions) (WriteStats, error) {
	var st WriteStats
	if name == "" {
		return st, fmt.Errorf("%w: empty data set name", ErrConfig)
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	metaPath, reviewPath, featPath := Files(dir, name)
	var done int64
	total := int64(len(w.Items) + w.Records())
	progress := func(k int) {
		done += int64(k)
		if opts.Progress != nil {
			opts.Progress(done, total)
		}
	}

	mf, err := createAtomic(metaPath, true)
	if err != nil {
		return st, err
	}
	defer mf.abort()
	rf, err := createAtomic(reviewPath, true)
	if err != nil {
		return st, err
	}
	defer rf.abort()

	// Pass 1: metadata and reviews, item by item.
	const itemChunk = 256
	type textChunk struct {
		meta, reviews     []byte
		nReviews          int64
		ab, av, bt, items int64
	}
	err = ordered(ctx, (len(w.Items)+itemChunk-1)/itemChunk, workers,
		func(ci int, s *stream) textChunk {
			var c textChunk
			for i := ci * itemChunk; i < min(len(w.Items), (ci+1)*itemChunk); i++ {
				if w.Gone(i) { // removed on day 2
					continue
				}
				m := w.meta(s, i)
				c.ab += int64(len(m.AlsoBought))
				c.av += int64(len(m.AlsoViewed))
				c.bt += int64(len(m.BoughtTogether))
				c.meta = appendMetaLine(c.meta, &m, s.reset(w.seed, purposeEncode, i).Rand)
				for _, rv := range w.Reviews(i) {
					c.reviews = appendReviewLine(c.reviews, &rv)
					c.nReviews++
				}
				c.items++
			}
			return c
		},
		func(c textChunk) error {
			if _, err := mf.Write(c.meta); err != nil {
				return err
			}
			if _, err := rf.Write(c.reviews); err != nil {
				return err
			}
			st.MetaLines += c.items
			st.ReviewLines += c.nReviews
			st.AlsoBought += c.ab
			st.AlsoViewed += c.av
			st.BoughtTogether += c.bt
			st.MetaRaw += int64(len(c.meta))
			st.ReviewRaw += int64(len(c.reviews))
			progress(int(c.items))
			return nil
		})
	if err != nil {
		return st, err
	}
	if st.MetaBytes, err = mf.finish(); err != nil {
		return st, err
	}
	if st.ReviewBytes, err = rf.finish(); err != nil {
		return st, err
	}

	// Pass 2: image records in record order, encoded by imagefeat's writer.
	// Text categories have none (and no .b file).
	if w.Config.textCat() != nil {
		return st, commitAll(mf, rf)
	}
	ff, err := createAtomic(featPath, opts.GzipFeatures)
	if err != nil {
		return st, err
	}
	defer ff.abort()
	f := w.Config.FeatureDim
	bw := imagefeat.NewWriter(ff, filepath.Base(featPath), f)
	type recChunk struct {
		asins []string
		vecs  []float32
	}
	per := max(1, (1<<20)/imagefeat.RecordSize(f))
	err = ordered(ctx, (len(w.records)+per-1)/per, workers,
		func(ci int, s *stream) recChunk {
			lo, hi := ci*per, min(len(w.records), (ci+1)*per)
			c := recChunk{asins: make([]string, hi-lo), vecs: make([]float32, (hi-lo)*f)}
			for k := lo; k < hi; k++ {
				vec := c.vecs[(k-lo)*f : (k-lo+1)*f]
				if i := int(w.records[k]); i >= 0 {
					w.feature(w.Latent(i), s.reset(w.seed, purposeFeature, i).Rand, vec)
					c.asins[k-lo] = w.Items[i].ASIN
				} else {
					c.asins[k-lo] = w.orphanFeature(-i-1, vec)
				}
			}
			return c
		},
		func(c recChunk) error {
			for k, asin := range c.asins {
				if err := bw.Write(asin, c.vecs[k*f:(k+1)*f]); err != nil {
					return err
				}
			}
			st.Records += int64(len(c.asins))
			progress(len(c.asins))
			return nil
		})
	if err == nil {
		err = bw.Close()
	}
	if err != nil {
		return st, err
	}
	if st.FeatureBytes, err = ff.finish(); err != nil {
		return st, err
	}
	return st, commitAll(mf, rf, ff)
}

// ordered generates n chunks on workers goroutines and hands them to consume
// in chunk order, holding at most 2*workers chunks in memory.
func ordered[T any](ctx context.Context, n, workers int, gen func(ci int, s *stream) T, consume func(T) error) error {
	type slot struct {
		ci  int
		out chan T
	}
	jobs := make(chan slot)
	pending := make(chan slot, 2*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newStream()
			for j := range jobs {
				j.out <- gen(j.ci, s)
			}
		}()
	}
	stop := make(chan struct{})
	go func() {
		defer close(pending)
		defer close(jobs)
		for ci := range n {
			sl := slot{ci, make(chan T, 1)}
			select {
			case pending <- sl:
			case <-stop:
				return
			}
			select {
			case jobs <- sl:
			case <-stop:
				return
			}
		}
	}()
	var err error
	for sl := range pending {
		if err != nil {
			continue // after a failure, slots may never be generated
		}
		v := <-sl.out
		if err = ctx.Err(); err == nil {
			err = consume(v)
		}
		if err != nil {
			close(stop)
		}
	}
	wg.Wait()
	return err
}

// atomicFile is a file written under a temporary name, optionally through
// gzip, and renamed into place by commitAll.
type atomicFile struct {
	path string
	tmp  *os.File
	buf  *bufio.Writer
	gz   *gzip.Writer
	w    io.Writer
	done bool
}

func createAtomic(path string, compress bool) (*atomicFile, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	a := &atomicFile{path: path, tmp: tmp, buf: bufio.NewWriterSize(tmp, 1<<20)}
	a.w = a.buf
	if compress {
		// A zero Header has no name and no time, so the bytes depend only
		// on the content.
		a.gz, _ = gzip.NewWriterLevel(a.buf, gzip.DefaultCompression)
		a.w = a.gz
	}
	return a, nil
}

func (a *atomicFile) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	if err != nil {
		err = fmt.Errorf("synth: writing %s: %w", a.path, err)
	}
	return n, err
}

// finish flushes, syncs and closes the file under its temporary name; it
// returns its size. commitAll renames it into place.
func (a *atomicFile) finish() (int64, error) {
	fail := func(err error) (int64, error) {
		return 0, fmt.Errorf("synth: writing %s: %w", a.path, err)
	}
	if a.gz != nil {
		if err := a.gz.Close(); err != nil {
			return fail(err)
		}
	}
	if err := a.buf.Flush(); err != nil {
		return fail(err)
	}
	if err := a.tmp.Chmod(0o644); err != nil { // CreateTemp makes 0600
		return fail(err)
	}
	if err := a.tmp.Sync(); err != nil {
		return fail(err)
	}
	info, err := a.tmp.Stat()
	if err != nil {
		return fail(err)
	}
	if err := a.tmp.Close(); err != nil {
		return fail(err)
	}
	return info.Size(), nil
}

// commitAll renames finished files into place, only once all of a world's
// files are complete: a failure before (a full disk, an interrupt) leaves
// none of them, so no folder holds one world's metadata beside no features
// or another world's. Should a rename fail (a directory in the way), the
// files already renamed are removed for the same reason.
func commitAll(files ...*atomicFile) error {
	for k, a := range files {
		if err := os.Rename(a.tmp.Name(), a.path); err != nil {
			for _, b := range files[:k] {
				os.Remove(b.path)
			}
			return fmt.Errorf("synth: writing %s: %w", a.path, err)
		}
	}
	for _, a := range files {
		a.done = true
	}
	return nil
}

// abort removes the temporary file unless commit succeeded.
func (a *atomicFile) abort() {
	if !a.done {
		a.tmp.Close()
		os.Remove(a.tmp.Name())
	}
}

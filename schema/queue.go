package schema

import "sync/atomic"

// Queue appends tables to a Writer on a goroutine of its own, in the order
// given, so encoding and compressing one runs beside the code that makes
// the next. The file's bytes are those of appending the tables in turn on
// the caller's goroutine, and so is the error: the first failed Append.
type Queue[T any] struct {
	w      *Writer[T]
	tables chan T
	done   chan struct{} // closed when the goroutine has ended
	failed atomic.Bool   // an Append failed; err says why
	err    error         // the first Append error: read once failed or after done
	ended  bool          // tables is closed
}

// NewQueue starts appending to w; at most depth tables wait. Close it,
// after an error too.
func NewQueue[T any](w *Writer[T], depth int) *Queue[T] {
	q := &Queue[T]{w: w, tables: make(chan T, depth), done: make(chan struct{})}
	go func() {
		defer close(q.done)
		for t := range q.tables {
			if q.err == nil {
				if q.err = w.Append(t); q.err != nil {
					q.failed.Store(true)
				}
			}
		}
	}()
	return q
}

// Append queues cols, which the caller must not change afterwards, or
// returns the first write error once a write has failed. After Wait it
// appends on the caller's goroutine.
func (q *Queue[T]) Append(cols T) error {
	if q.ended {
		if q.err == nil {
			q.err = q.w.Append(cols)
		}
		return q.err
	}
	if q.failed.Load() {
		return q.err
	}
	q.tables <- cols
	return nil
}

// Wait waits until the tables queued are written and returns the first
// write error. Later Appends write directly.
func (q *Queue[T]) Wait() error {
	if !q.ended {
		close(q.tables)
		q.ended = true
	}
	<-q.done
	return q.err
}

// Close waits for the tables queued and closes the Writer: the rows
// written, or the first error. Later calls return the same, so a deferred
// Close may follow the checked one.
func (q *Queue[T]) Close() (int64, error) {
	err := q.Wait()
	n, cerr := q.w.Close()
	if err != nil {
		return 0, err
	}
	return n, cerr
}

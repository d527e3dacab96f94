// Package par is the worker loop the pipeline's parallel sections share:
// tasks 0..n-1 handed out in index order to at most a given number of
// goroutines through one atomic counter.
//
// Which goroutine runs which task is unspecified, so a task's effect must
// depend on its index only (results written by index, sums taken over
// tasks in index order afterwards). That is what keeps every output
// byte-identical whatever GOMAXPROCS is.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For runs fn(w, i) for every i in [0, n) on at most workers goroutines
// (0 or less: GOMAXPROCS). w in [0, workers) names the goroutine, for its
// scratch buffers. With one worker (or one task) it runs on the caller's
// goroutine.
func For(n, workers int, fn func(w, i int)) {
	Until(n, workers, func(w, i int) bool {
		fn(w, i)
		return true
	})
}

// Until is For where a goroutine stops taking tasks once fn returns false;
// the others go on until theirs does or the tasks run out, so a section
// that gives up on the first error has fn check a shared flag first.
func Until(n, workers int, fn func(w, i int) bool) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	if workers <= 1 {
		for i := range n {
			if !fn(0, i) {
				return
			}
		}
		return
	}
	var next atomic.Int64
	work := func(w int) {
		for {
			i := int(next.Add(1) - 1)
			if i >= n || !fn(w, i) {
				return
			}
		}
	}
	// The caller is worker 0 rather than only waiting for the goroutines it
	// woke: sections of a millisecond (t-SNE's rows, thousands a map) would
	// otherwise wait on a wake-up each.
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(w)
		}()
	}
	work(0)
	wg.Wait()
}

// Spans runs fn(lo, hi) over [0, n) cut into spans of span items (the last
// shorter), a task each, on at most workers goroutines (0: GOMAXPROCS). The
// spans depend on n and span only; span/lo numbers a span for results
// written by span.
func Spans(n, span, workers int, fn func(lo, hi int)) {
	For((n+span-1)/span, workers, func(_, c int) {
		fn(c*span, min((c+1)*span, n))
	})
}

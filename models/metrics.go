package models

import (
	"fmt"
	"math"
	"slices"

	"monomer/internal/par"
)

// The evaluation metrics of every model on a set of labelled pairs: the
// paper's error rate (Tables 2 and 4), AUC and the mean log-likelihood.
// labels[i] is true for a related pair. Each function panics if its two
// slices differ in length and returns NaN for no pairs.

// ErrorRate returns the fraction of pairs whose prediction, positive iff
// prob > 0.5 (the model's P(related) above one half), disagrees with the
// label: the paper's reported metric. A NaN probability predicts negative.
func ErrorRate(labels []bool, prob []float64) float64 {
	metricCheck("ErrorRate", labels, prob)
	if len(labels) == 0 {
		return math.NaN()
	}
	// Counted in runs on all cores; integer sums are exact in any order.
	wrong := make([]int, (len(labels)+keyRun-1)/keyRun)
	forRuns(len(labels), 0, func(lo, hi int) {
		n := 0 // local: neighbouring runs' counts share a cache line
		for i := lo; i < hi; i++ {
			if (prob[i] > 0.5) != labels[i] {
				n++
			}
		}
		wrong[lo/keyRun] = n
	})
	var n int
	for _, w := range wrong {
		n += w
	}
	return float64(n) / float64(len(labels))
}

// AUC returns the area under the ROC curve: the probability that a random
// related pair scores above a random unrelated one, ties counting one half
// (Mann-Whitney U / (P N)). Higher score means more likely related: pass the
// probability, or the negated distance. NaN scores rank below every number
// and tie with each other. It is NaN unless both classes occur. It sorts
// each class's scores and merges them, O(n log n), on all cores (see
// sortKeys); the result is exact integer counting divided once, so it
// depends neither on the order of the pairs nor on GOMAXPROCS.
func AUC(labels []bool, score []float64) float64 {
	metricCheck("AUC", labels, score)
	pos, neg := splitKeys(labels, score, 0)
	if len(pos) == 0 || len(neg) == 0 {
		return math.NaN()
	}
	pos = sortKeys(pos, make([]uint64, len(pos)), keyRun, 0)
	neg = sortKeys(neg, make([]uint64, len(neg)), keyRun, 0)
	return float64(twiceU(pos, neg, 0)) / (2 * float64(len(pos)) * float64(len(neg)))
}

// keyRun is the length of the runs sortKeys sorts on their own and of the
// pieces a merge pass hands out: 256 KB of keys, a core's L2 cache. The
// sorted keys do not depend on it, only the work's grain.
const keyRun = 1 << 15

// forRuns runs fn(lo, hi) over [0, n) in spans of keyRun on workers
// goroutines (0: GOMAXPROCS): for the per-pair loops of the metrics, where
// forSpans' spans would be a microsecond of work each. fn must write
// results indexed by position.
func forRuns(n, workers int, fn func(lo, hi int)) {
	par.Spans(n, keyRun, workers, fn)
}

// scoreKey maps a score to a uint64 whose unsigned order is cmp.Compare's
// order of the scores: every NaN to 0, below −Inf's key; −0 to +0's key.
// Equal keys are then exactly the ties AUC counts half, and the sort and
// merges compare integers.
func scoreKey(v float64) uint64 {
	if v != v {
		return 0
	}
	if v == 0 {
		v = 0 // −0
	}
	b := math.Float64bits(v)
	if b>>63 != 0 {
		return ^b // negative: larger magnitude, smaller key
	}
	return b | 1<<63
}

// splitKeys returns the keys of the related and of the unrelated pairs'
// scores, each in pair order, filled in fixed chunks of keyRun pairs on
// workers goroutines (0: GOMAXPROCS) at offsets counted first.
func splitKeys(labels []bool, score []float64, workers int) (pos, neg []uint64) {
	chunks := (len(labels) + keyRun - 1) / keyRun
	before := make([]int, chunks+1) // related pairs before chunk c
	runChunks(chunks, workers, func(_, c int) {
		n := 0
		for _, l := range labels[c*keyRun : min((c+1)*keyRun, len(labels))] {
			if l {
				n++
			}
		}
		before[c+1] = n
	})
	for c := range chunks {
		before[c+1] += before[c]
	}
	pos, neg = make([]uint64, before[chunks]), make([]uint64, len(labels)-before[chunks])
	runChunks(chunks, workers, func(_, c int) {
		lo := c * keyRun
		p, n := before[c], lo-before[c]
		for i, l := range labels[lo:min(lo+keyRun, len(labels))] {
			if l {
				pos[p] = scoreKey(score[lo+i])
				p++
			} else {
				neg[n] = scoreKey(score[lo+i])
				n++
			}
		}
	})
	return pos, neg
}

// sortKeys sorts x ascending on workers goroutines (0: GOMAXPROCS), with
// buf (as long as x) as scratch, and returns the sorted keys: x or buf. It
// sorts runs of run keys, then merges neighbouring runs pass by pass, each
// pass cut into pieces of run output keys that merge independently (a
// piece's start in either input found by mergeSplit). Equal keys are equal
// bits, so the result is the one sorted slice whatever the schedule.
func sortKeys(x, buf []uint64, run, workers int) []uint64 {
	n := len(x)
	runChunks((n+run-1)/run, workers, func(_, c int) {
		slices.Sort(x[c*run : min((c+1)*run, n)])
	})
	src, dst := x, buf
	for width := run; width < n; width *= 2 {
		runChunks((n+run-1)/run, workers, func(_, c int) {
			lo, hi := c*run, min((c+1)*run, n)
			// The pair of width-runs holding output [lo, hi): width is a
			// multiple of run, so one pair holds all of it.
			p := lo / (2 * width) * (2 * width)
			mid, end := min(p+width, n), min(p+2*width, n)
			a, b := src[p:mid], src[mid:end]
			i0, i1 := mergeSplit(a, b, lo-p), mergeSplit(a, b, hi-p)
			mergeKeys(dst[lo:hi], a[i0:i1], b[lo-p-i0:hi-p-i1])
		})
		src, dst = dst, src
	}
	return src
}

// mergeSplit returns how many of the first k keys of the merge of sorted a
// and b come from a, the merge taking a's key first on a tie (as
// mergeKeys does).
func mergeSplit(a, b []uint64, k int) int {
	lo, hi := max(0, k-len(b)), min(k, len(a))
	for lo < hi {
		i := int(uint(lo+hi) >> 1)
		// a[i] is among the first k iff it does not come after b[k-i-1].
		if a[i] <= b[k-i-1] {
			lo = i + 1
		} else {
			hi = i
		}
	}
	return lo
}

// mergeKeys merges sorted a and b into dst (len(a)+len(b) long), a's key
// first on a tie.
func mergeKeys(dst, a, b []uint64) {
	i, j := 0, 0
	for k := range dst {
		if j == len(b) || (i < len(a) && a[i] <= b[j]) {
			dst[k] = a[i]
			i++
		} else {
			dst[k] = b[j]
			j++
		}
	}
}

// twiceU returns 2U, U the Mann-Whitney count of (related, unrelated) key
// pairs with the related key above, ties one half (the doubling keeps the
// halves integral), from sorted pos and neg. The related keys are counted
// in chunks of keyRun on workers goroutines (0: GOMAXPROCS), each starting
// from binary searches; integer sums are exact in any order.
func twiceU(pos, neg []uint64, workers int) int64 {
	chunks := (len(pos) + keyRun - 1) / keyRun
	part := make([]int64, chunks)
	runChunks(chunks, workers, func(_, c int) {
		ps := pos[c*keyRun : min((c+1)*keyRun, len(pos))]
		// neg[:lo] < p, neg[lo:hi] == p for the current p.
		lo, _ := slices.BinarySearch(neg, ps[0])
		hi := lo
		var u int64
		for _, p := range ps {
			for lo < len(neg) && neg[lo] < p {
				lo++
			}
			hi = max(hi, lo)
			for hi < len(neg) && neg[hi] == p {
				hi++
			}
			u += 2*int64(lo) + int64(hi-lo)
		}
		part[c] = u
	})
	var u int64
	for _, v := range part {
		u += v
	}
	return u
}

// LogLikelihoodClamp bounds probabilities to [LogLikelihoodClamp,
// 1-LogLikelihoodClamp] in LogLikelihood, so that a hard 0/1 predictor
// (CT) has a finite value: a confident mistake costs log(1e-12) = -27.6.
const LogLikelihoodClamp = 1e-12

// LogLikelihood returns the mean over pairs of log p for related pairs and
// log(1-p) for unrelated ones (natural log, <= 0, higher is better), with p
// (for unrelated pairs 1-p) clamped to [LogLikelihoodClamp,
// 1-LogLikelihoodClamp]. The logarithms are taken on all cores, the sum in
// pair order. A NaN probability gives NaN.
func LogLikelihood(labels []bool, prob []float64) float64 {
	metricCheck("LogLikelihood", labels, prob)
	if len(labels) == 0 {
		return math.NaN()
	}
	logs := make([]float64, len(labels))
	forRuns(len(labels), 0, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p := prob[i]
			if !labels[i] {
				p = 1 - p
			}
			// min and max keep NaN.
			logs[i] = math.Log(min(max(p, LogLikelihoodClamp), 1-LogLikelihoodClamp))
		}
	})
	var sum float64
	for _, v := range logs {
		sum += v
	}
	return sum / float64(len(labels))
}

func metricCheck(name string, labels []bool, x []float64) {
	if len(labels) != len(x) {
		panic(fmt.Sprintf("models: %s: %d labels but %d values", name, len(labels), len(x)))
	}
}

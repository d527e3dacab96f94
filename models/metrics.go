package models

import (
	"cmp"
	"fmt"
	"math"
	"slices"
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
	wrong := 0
	for i, l := range labels {
		if (prob[i] > 0.5) != l {
			wrong++
		}
	}
	return float64(wrong) / float64(len(labels))
}

// AUC returns the area under the ROC curve: the probability that a random
// related pair scores above a random unrelated one, ties counting one half
// (Mann-Whitney U / (P N)). Higher score means more likely related: pass the
// probability, or the negated distance. NaN scores rank below every number
// and tie with each other. It is NaN unless both classes occur. It sorts
// each class's scores and merges them, O(n log n); the result is exact
// integer counting divided once, so it does not depend on the order of the
// pairs.
func AUC(labels []bool, score []float64) float64 {
	metricCheck("AUC", labels, score)
	var pos, neg []float64
	for i, l := range labels {
		if l {
			pos = append(pos, score[i])
		} else {
			neg = append(neg, score[i])
		}
	}
	if len(pos) == 0 || len(neg) == 0 {
		return math.NaN()
	}
	// slices.Sort orders NaN first, and cmp.Compare agrees (NaN equal to
	// itself, -0 equal to 0); equal values are indistinguishable here, so an
	// unstable sort gives the same counts.
	slices.Sort(pos)
	slices.Sort(neg)
	var twiceU int64 // 2U keeps the half credits integral
	lo, hi := 0, 0   // neg[:lo] < p, neg[lo:hi] == p
	for _, p := range pos {
		for lo < len(neg) && cmp.Compare(neg[lo], p) < 0 {
			lo++
		}
		hi = max(hi, lo)
		for hi < len(neg) && cmp.Compare(neg[hi], p) == 0 {
			hi++
		}
		twiceU += 2*int64(lo) + int64(hi-lo)
	}
	return float64(twiceU) / (2 * float64(len(pos)) * float64(len(neg)))
}

// LogLikelihoodClamp bounds probabilities to [LogLikelihoodClamp,
// 1-LogLikelihoodClamp] in LogLikelihood, so that a hard 0/1 predictor
// (CT) has a finite value: a confident mistake costs log(1e-12) = -27.6.
const LogLikelihoodClamp = 1e-12

// LogLikelihood returns the mean over pairs of log p for related pairs and
// log(1-p) for unrelated ones (natural log, <= 0, higher is better), with p
// (for unrelated pairs 1-p) clamped to [LogLikelihoodClamp,
// 1-LogLikelihoodClamp]. The sum runs in pair order. A NaN probability gives
// NaN.
func LogLikelihood(labels []bool, prob []float64) float64 {
	metricCheck("LogLikelihood", labels, prob)
	if len(labels) == 0 {
		return math.NaN()
	}
	var sum float64
	for i, l := range labels {
		p := prob[i]
		if !l {
			p = 1 - p
		}
		// min and max keep NaN.
		sum += math.Log(min(max(p, LogLikelihoodClamp), 1-LogLikelihoodClamp))
	}
	return sum / float64(len(labels))
}

func metricCheck(name string, labels []bool, x []float64) {
	if len(labels) != len(x) {
		panic(fmt.Sprintf("models: %s: %d labels but %d values", name, len(labels), len(x)))
	}
}

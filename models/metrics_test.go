package models

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func TestMetrics(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name     string
		labels   []bool
		prob     []float64
		errRate  float64
		auc      float64
		loglik   float64
		skipLoss bool // prob outside [0,1]: scores only
	}{
		{
			name:   "mixed",
			labels: []bool{true, false, true, false},
			prob:   []float64{0.9, 0.2, 0.4, 0.6},
			// predictions T F F T: two wrong. Positive-negative pairs
			// (0.9,0.2) (0.9,0.6) (0.4,0.2) won, (0.4,0.6) lost.
			errRate: 0.5, auc: 0.75,
			loglik: (math.Log(0.9) + math.Log(0.8) + math.Log(0.4) + math.Log(0.4)) / 4,
		},
		{
			name:   "ties get half credit, 0.5 predicts negative",
			labels: []bool{true, false, true, false},
			prob:   []float64{0.5, 0.5, 0.5, 0.1},
			// Each positive: tie with 0.5 (1/2) and beats 0.1 (1).
			errRate: 0.5, auc: 0.75,
			loglik: (3*math.Log(0.5) + math.Log(0.9)) / 4,
		},
		{
			name:    "perfect",
			labels:  []bool{false, true, false, true, true},
			prob:    []float64{0.1, 0.9, 0.3, 0.7, 0.51},
			errRate: 0, auc: 1,
			loglik: (math.Log(0.9) + math.Log(0.9) + math.Log(0.7) + math.Log(0.7) + math.Log(0.51)) / 5,
		},
		{
			name:    "inverted",
			labels:  []bool{true, false},
			prob:    []float64{0.2, 0.8},
			errRate: 1, auc: 0,
			loglik: math.Log(0.2),
		},
		{
			name:    "all tied",
			labels:  []bool{true, false, false, true, true},
			prob:    []float64{0.7, 0.7, 0.7, 0.7, 0.7},
			errRate: 0.4, auc: 0.5,
			loglik: (3*math.Log(0.7) + 2*math.Log(0.3)) / 5,
		},
		{
			name:   "hard 0/1 predictor is clamped",
			labels: []bool{true, false, true, false},
			prob:   []float64{0, 0, 1, 1},
			// log(1e-12) for each mistake, log(1-1e-12) for each hit.
			errRate: 0.5, auc: 0.5,
			loglik: (2*math.Log(1e-12) + 2*math.Log(1-1e-12)) / 4,
		},
		{
			name:    "one class only",
			labels:  []bool{true, true},
			prob:    []float64{0.6, 0.7},
			errRate: 0, auc: nan,
			loglik: (math.Log(0.6) + math.Log(0.7)) / 2,
		},
		{
			name:    "empty",
			errRate: nan, auc: nan, loglik: nan,
		},
		{
			name:    "NaN score ranks lowest; -0 ties 0",
			labels:  []bool{true, false, true, false},
			prob:    []float64{nan, -3, math.Copysign(0, -1), 0},
			errRate: 0.5, auc: 0.375, // (NaN,-3) lost, (NaN,0) lost, (-0,-3) won, (-0,0) tied
			skipLoss: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			same := func(got, want float64) bool {
				return math.IsNaN(got) && math.IsNaN(want) || math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want))
			}
			if got := ErrorRate(tc.labels, tc.prob); !same(got, tc.errRate) {
				t.Errorf("ErrorRate = %v, want %v", got, tc.errRate)
			}
			if got := AUC(tc.labels, tc.prob); !same(got, tc.auc) {
				t.Errorf("AUC = %v, want %v", got, tc.auc)
			}
			if tc.skipLoss {
				return
			}
			if got := LogLikelihood(tc.labels, tc.prob); !same(got, tc.loglik) {
				t.Errorf("LogLikelihood = %v, want %v", got, tc.loglik)
			}
		})
	}
}

func TestMetricsLengthMismatchPanics(t *testing.T) {
	for name, f := range map[string]func([]bool, []float64) float64{
		"ErrorRate": ErrorRate, "AUC": AUC, "LogLikelihood": LogLikelihood,
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic on 2 labels and 1 value", name)
				}
			}()
			f([]bool{true, false}, []float64{0.5})
		}()
	}
}

// metricAUCPairs is the O(n^2) definition AUC must agree with.
func metricAUCPairs(labels []bool, score []float64) float64 {
	var won float64
	var pairs int
	for i, li := range labels {
		if !li {
			continue
		}
		for j, lj := range labels {
			if lj {
				continue
			}
			pairs++
			a, b := score[i], score[j]
			switch {
			case math.IsNaN(a) && math.IsNaN(b), a == b:
				won += 0.5
			case math.IsNaN(b), !math.IsNaN(a) && a > b:
				won++
			}
		}
	}
	if pairs == 0 {
		return math.NaN()
	}
	return won / float64(pairs)
}

func FuzzAUC(f *testing.F) {
	f.Add([]byte{1, 3, 0, 3, 1, 1, 0, 5})
	f.Add([]byte{0, 0, 1, 0, 0, 0, 1, 255, 0, 255})
	f.Add([]byte{1, 9, 1, 9, 1, 9, 0, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		var labels []bool
		var score []float64
		for i := 0; i+1 < len(data); i += 2 {
			labels = append(labels, data[i]&1 == 1)
			s := float64(data[i+1] % 16) // few values: many ties
			if data[i+1] == 255 {
				s = math.NaN()
			}
			score = append(score, s)
		}
		got, want := AUC(labels, score), metricAUCPairs(labels, score)
		if !(math.IsNaN(got) && math.IsNaN(want)) && math.Abs(got-want) > 1e-12 {
			t.Fatalf("AUC %v, pairwise %v on %v %v", got, want, labels, score)
		}
		slices.Reverse(labels)
		slices.Reverse(score)
		if again := AUC(labels, score); !(math.IsNaN(got) && math.IsNaN(again)) && again != got {
			t.Fatalf("AUC %v on reversed input, %v before", again, got)
		}
	})
}

func BenchmarkAUC(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("pairs=%d", n), func(b *testing.B) {
			labels := make([]bool, n)
			score := make([]float64, n)
			for i := range labels {
				labels[i] = i%3 == 0
				score[i] = float64((i*7919)%1000) / 1000
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				AUC(labels, score)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
		})
	}
}

func ExampleAUC() {
	labels := []bool{true, false, true, false}
	prob := []float64{0.9, 0.2, 0.4, 0.6}
	fmt.Printf("error %.2f\n", ErrorRate(labels, prob))
	fmt.Printf("auc %.2f\n", AUC(labels, prob))
	fmt.Printf("log-likelihood %.4f\n", LogLikelihood(labels, prob))
	// Output:
	// error 0.50
	// auc 0.75
	// log-likelihood -0.5403
}

func TestGini(t *testing.T) {
	for _, c := range []struct {
		name   string
		counts []float64
		want   float64
	}{
		{"equal", []float64{3, 3, 3, 3}, 0},
		{"one takes all", []float64{0, 0, 0, 8}, 0.75},
		{"order free", []float64{4, 0, 2, 2}, 0.375},
	} {
		if got := Gini(c.counts); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: Gini(%v) = %v, want %v", c.name, c.counts, got, c.want)
		}
	}
	if !math.IsNaN(Gini(nil)) || !math.IsNaN(Gini([]float64{0, 0})) {
		t.Error("Gini of no counts or zero total is not NaN")
	}
}

package report

import (
	"math"
	"strings"
	"testing"
)

// TestMcNemarAgainstStatsmodels checks McNemar against statsmodels 0.15.0
// (scipy 1.17.1), computed once with
//
//	python3 -m venv /tmp/mcnemar-venv && /tmp/mcnemar-venv/bin/pip install scipy statsmodels
//	from statsmodels.stats.contingency_tables import mcnemar
//	r = mcnemar([[50, b], [c, 50]], exact=b+c < 25, correction=True)
//
// and r.statistic, r.pvalue committed here.
func TestMcNemarAgainstStatsmodels(t *testing.T) {
	tests := []struct {
		b, c    int64
		test    string
		stat, p float64
	}{
		{b: 0, c: 0, test: TestMcNemarExact, stat: 0.0, p: 1.0},
		{b: 1, c: 0, test: TestMcNemarExact, stat: 0.0, p: 1.0},
		{b: 0, c: 1, test: TestMcNemarExact, stat: 0.0, p: 1.0},
		{b: 3, c: 9, test: TestMcNemarExact, stat: 3.0, p: 0.14599609375},
		{b: 9, c: 3, test: TestMcNemarExact, stat: 3.0, p: 0.14599609375},
		{b: 5, c: 5, test: TestMcNemarExact, stat: 5.0, p: 1.0},
		{b: 0, c: 20, test: TestMcNemarExact, stat: 0.0, p: 1.9073486328125e-06},
		{b: 10, c: 14, test: TestMcNemarExact, stat: 10.0, p: 0.5412561893463135},
		{b: 12, c: 13, test: TestMcNemarChi2, stat: 0.0, p: 1.0},
		{b: 7, c: 24, test: TestMcNemarChi2, stat: 8.258064516129032, p: 0.004057136032371287},
		{b: 30, c: 45, test: TestMcNemarChi2, stat: 2.6133333333333333, p: 0.10596880912720207},
		{b: 100, c: 160, test: TestMcNemarChi2, stat: 13.388461538461538, p: 0.00025317696951544154},
		{b: 20, c: 60, test: TestMcNemarChi2, stat: 19.0125, p: 1.2986492541972959e-05},
		{b: 400, c: 455, test: TestMcNemarChi2, stat: 3.4105263157894736, p: 0.06478178160748328},
		{b: 3000, c: 2900, test: TestMcNemarChi2, stat: 1.6611864406779662, p: 0.1974432091430861},
		// Where McNemar departs from statsmodels on purpose: with b = c
		// the corrected |b-c| - 1 stops at 0 (statsmodels: 1/40 and
		// p = 0.874).
		{b: 20, c: 20, test: TestMcNemarChi2, stat: 0, p: 1},
	}
	for _, tt := range tests {
		got := McNemar(tt.b, tt.c)
		if got.Test != tt.test || !near(got.Statistic, tt.stat) || !near(got.PValue, tt.p) {
			t.Errorf("McNemar(%d, %d) = %s %v p=%v, want %s %v p=%v", tt.b, tt.c, got.Test, got.Statistic, got.PValue, tt.test, tt.stat, tt.p)
		}
	}
}

// near is equality to 1e-12 relative (1e-15 absolute near 0).
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(b), 1e-3) }

func TestCompareCounts(t *testing.T) {
	// A right on pairs 0-5, B on 0-1 and 6-7; both wrong on 8-9.
	var c Correct
	for i := range 10 {
		c.Add(i < 6, i < 2 || i == 6 || i == 7)
	}
	want := Correct{Pairs: 10, WrongA: 4, WrongB: 6, OnlyA: 4, OnlyB: 2}
	if c != want {
		t.Fatalf("counts %+v, want %+v", c, want)
	}
	got := Compare("e", "monomer", "lmt", 3, c)
	// Exact: 2·P(X ≤ 2), X ~ Binomial(6, 1/2) = 2·22/64.
	if got.Test != TestMcNemarExact || got.Statistic != 2 || !near(got.PValue, 44.0/64) || got.ErrorA != 0.4 || got.ErrorB != 0.6 || got.Seeds != 3 {
		t.Errorf("comparison %+v", got)
	}
}

func TestSpreadOf(t *testing.T) {
	tests := []struct {
		xs       []float64
		n        int
		mean, sd float64
	}{
		{xs: nil, n: 0, mean: math.NaN(), sd: math.NaN()},
		{xs: []float64{0.25}, n: 1, mean: 0.25, sd: math.NaN()},
		// Sample sd: sqrt(((0.1-0.2)² + 0 + (0.3-0.2)²)/2) = 0.1.
		{xs: []float64{0.1, 0.2, 0.3}, n: 3, mean: 0.2, sd: 0.1},
	}
	for _, tt := range tests {
		s := SpreadOf(tt.xs)
		same := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) < 1e-15 }
		if s.Seeds != tt.n || !same(s.Mean, tt.mean) || !same(s.SD, tt.sd) {
			t.Errorf("SpreadOf(%v) = %+v, want %d %v %v", tt.xs, s, tt.n, tt.mean, tt.sd)
		}
	}
}

func TestSeedsMarkdown(t *testing.T) {
	s := &SeedSummary{Seeds: []uint64{1, 2, 3},
		Errors: []SeedError{{Experiment: "e", Model: "monomer", Spread: SpreadOf([]float64{0.165, 0.167, 0.169})},
			{Experiment: "e", Model: "lmt", Spread: SpreadOf([]float64{0.229})}},
		Comparisons: []Comparison{Compare("e", "monomer", "lmt", 3, Correct{Pairs: 900, WrongA: 150, WrongB: 206, OnlyA: 100, OnlyB: 44})}}
	md := seedsMarkdown(s)
	for _, want := range []string{
		"Seeds: 1, 2, 3 (the first",
		"| e | Monomer | 3 | 16.70 ± 0.20 % |\n",
		"| e | LMT | 1 | " + pct(0.229) + " |\n",
		// (|100-44|-1)²/144 = 21.0069...
		"| e | Monomer | LMT | 900 | 100 | 44 | mcnemar_chi2_cc | 21.01 | < 0.001 |\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	s.Seeds = s.Seeds[:1]
	if md := seedsMarkdown(s); !strings.Contains(md, "## Paired tests\n\nOne seed (1);") || strings.Contains(md, "| e | Monomer | 3 |") {
		t.Errorf("one seed:\n%s", md)
	}
	if seedsMarkdown(nil) != "" {
		t.Error("a page without seeds has a seeds section")
	}
}

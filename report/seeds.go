package report

import (
	"fmt"
	"math"
	"strings"

	"monomer/models"
)

// A job with seeds: [...] runs each experiment's negatives, split,
// training, evaluation and recommendation once per seed. What the report
// makes of the runs: each model's error as mean ± sd over the seeds, and
// a paired test of two models on the same test pairs.

// Spread is a metric over a job's seeds: their number, mean and sample
// standard deviation (n-1 in the denominator; NaN with fewer than two).
type Spread struct {
	Seeds    int
	Mean, SD float64
}

// SpreadOf is the spread of xs, one value per seed.
func SpreadOf(xs []float64) Spread {
	s := Spread{Seeds: len(xs), Mean: math.NaN(), SD: math.NaN()}
	if len(xs) == 0 {
		return s
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	s.Mean = sum / float64(len(xs))
	if len(xs) < 2 {
		return s
	}
	var ss float64
	for _, x := range xs {
		ss += (x - s.Mean) * (x - s.Mean)
	}
	s.SD = math.Sqrt(ss / float64(len(xs)-1))
	return s
}

// The tests McNemar names.
const (
	// TestMcNemarExact is McNemar's exact test: the two-sided binomial
	// test of the smaller discordant count against Binomial(b+c, 1/2).
	TestMcNemarExact = "mcnemar_exact"
	// TestMcNemarChi2 is McNemar's chi-square test with continuity
	// correction, (|b-c|-1)²/(b+c) on one degree of freedom.
	TestMcNemarChi2 = "mcnemar_chi2_cc"
)

// McNemarExactBelow is the number of discordant pairs (b+c) below which
// McNemar uses the exact binomial test: the common rule (b+c < 25) under
// which the chi-square approximation is poor; from 25 on the chi-square
// test with continuity correction.
const McNemarExactBelow = 25

// PairedTest is a test's result: its name, its statistic (min(b, c) for
// McNemar's exact test, the chi-square value for the other) and p-value.
type PairedTest struct {
	Test      string
	Statistic float64
	PValue    float64
}

// McNemar tests whether two classifiers' error rates differ, from the
// discordant counts of their correct/incorrect on the same pairs. The
// concordant pairs do not enter. With b+c < McNemarExactBelow it is the
// exact test, p = min(1, 2·P(X ≤ min(b,c))) for X ~ Binomial(b+c, 1/2)
// (statsmodels' mcnemar(exact=True)); otherwise the chi-square test with
// continuity correction, p = P(χ²₁ ≥ (|b-c|-1)²/(b+c)) (statsmodels'
// mcnemar(exact=False, correction=True)), except that |b-c| - 1 stops at
// 0: with b = c the statistic is 0 and p is 1, where statsmodels' 1/(b+c)
// overshoots the correction. b counts the pairs only the first model got
// right, c those only the second did.
func McNemar(b, c int64) PairedTest {
	var t PairedTest
	n := b + c
	if n < McNemarExactBelow {
		t.Test = TestMcNemarExact
		k := min(b, c)
		t.Statistic = float64(k)
		t.PValue = math.Min(1, 2*binomCDFHalf(k, n))
		return t
	}
	t.Test = TestMcNemarChi2
	d := math.Max(math.Abs(float64(b-c))-1, 0)
	t.Statistic = d * d / float64(n)
	// The chi-square survival function on one degree of freedom:
	// P(Z² ≥ x) = erfc(√(x/2)).
	t.PValue = math.Erfc(math.Sqrt(t.Statistic / 2))
	return t
}

// binomCDFHalf is P(X ≤ k) for X ~ Binomial(n, 1/2), summed in log space
// so that it holds for any n (McNemar calls it with n < 25, where it is
// exact to rounding).
func binomCDFHalf(k, n int64) float64 {
	if k >= n {
		return 1
	}
	lgN, _ := math.Lgamma(float64(n + 1))
	var p float64
	for i := int64(0); i <= k; i++ {
		lgI, _ := math.Lgamma(float64(i + 1))
		lgR, _ := math.Lgamma(float64(n - i + 1))
		p += math.Exp(lgN - lgI - lgR - float64(n)*math.Ln2)
	}
	return math.Min(p, 1)
}

// ComparedPairs are the pairs of models the paired test compares: the
// paper's claim (Monomer against LMT) and each against the baseline WNN.
var ComparedPairs = [][2]string{
	{models.ModelMonomer, models.ModelLMT},
	{models.ModelMonomer, models.ModelWNN},
	{models.ModelLMT, models.ModelWNN},
}

// Comparison is one row of the job's comparisons table: models A and B of
// an experiment on its test pairs pooled over Seeds seeds, with their
// pooled test errors and McNemar's test.
type Comparison struct {
	Experiment     string
	A, B           string
	Seeds          int
	Counts         Correct
	ErrorA, ErrorB float64
	PairedTest
}

// Correct counts two models' agreement on the same pairs: whether each got
// each pair right.
type Correct struct {
	Pairs, WrongA, WrongB int64
	// OnlyA and OnlyB count the pairs only A, only B got right.
	OnlyA, OnlyB int64
}

// Add counts one pair.
func (c *Correct) Add(aRight, bRight bool) {
	c.Pairs++
	if !aRight {
		c.WrongA++
	}
	if !bRight {
		c.WrongB++
	}
	switch {
	case aRight && !bRight:
		c.OnlyA++
	case bRight && !aRight:
		c.OnlyB++
	}
}

// Compare is the comparison of A and B from their counts over seeds seeds.
func Compare(exp, a, b string, seeds int, c Correct) Comparison {
	out := Comparison{Experiment: exp, A: a, B: b, Seeds: seeds, Counts: c, ErrorA: math.NaN(), ErrorB: math.NaN(),
		PairedTest: McNemar(c.OnlyA, c.OnlyB)}
	if c.Pairs > 0 {
		out.ErrorA, out.ErrorB = float64(c.WrongA)/float64(c.Pairs), float64(c.WrongB)/float64(c.Pairs)
	}
	return out
}

// SeedSummary is what the page shows of a job's seeds: the test error of
// each experiment's models over them and the paired tests.
type SeedSummary struct {
	Seeds []uint64
	// Errors are each experiment's models' test errors, in experiment and
	// then model order.
	Errors      []SeedError
	Comparisons []Comparison
}

// SeedError is one model's test error over the seeds.
type SeedError struct {
	Experiment, Model string
	Spread
}

// pValue writes p as the tables show it: "< 0.001" below 0.001.
func pValue(p float64) string {
	switch {
	case math.IsNaN(p):
		return "—"
	case p < 0.001:
		return "< 0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// meanSD writes an error's spread as a percentage, "16.7 ± 0.2 %", or
// the mean alone with one seed.
func meanSD(s Spread) string {
	if math.IsNaN(s.SD) {
		return pct(s.Mean)
	}
	return fmt.Sprintf("%.2f ± %.2f %%", 100*s.Mean, 100*s.SD)
}

// seedsMarkdown is the page's section on seeds and paired tests.
func seedsMarkdown(s *SeedSummary) string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	seeds := make([]string, len(s.Seeds))
	for i, x := range s.Seeds {
		seeds[i] = fmt.Sprint(x)
	}
	if len(s.Seeds) < 2 {
		// One seed has no spread: the tables above hold its errors.
		fmt.Fprintf(&b, "\n## Paired tests\n\nOne seed (%s); `seeds: [1, 2, 3]` in the job adds each model's spread over seeds (docs/jobs.md, \"Seeds\").\n", strings.Join(seeds, ""))
	} else {
		fmt.Fprintf(&b, "\n## Over seeds and paired tests\n\nSeeds: %s (the first is the one the tables above show). Test error as mean ± sample sd over the seeds; each seed drew its own negatives, split and training.\n\n", strings.Join(seeds, ", "))
		b.WriteString("| Experiment | Model | Seeds | Test error |\n|---|---|---:|---:|\n")
		for _, e := range s.Errors {
			fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", e.Experiment, title(e.Model), e.Seeds, meanSD(e.Spread))
		}
	}
	fmt.Fprintf(&b, "\nMcNemar's test on the per-pair correct/incorrect of two models over the same test pairs, pooled over the seeds: exact binomial below %d discordant pairs, chi-square with continuity correction from there. `A only` and `B only` count the pairs only that model got right.\n\n", McNemarExactBelow)
	b.WriteString("| Experiment | A | B | Test pairs | A only | B only | Test | Statistic | p |\n|---|---|---|---:|---:|---:|---|---:|---:|\n")
	for _, c := range s.Comparisons {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %d | %s | %.4g | %s |\n", c.Experiment, title(c.A), title(c.B),
			c.Counts.Pairs, c.Counts.OnlyA, c.Counts.OnlyB, c.Test, c.Statistic, pValue(c.PValue))
	}
	return b.String()
}

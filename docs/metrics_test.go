package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// reportedUnit matches the unit of a b.ReportMetric call written on one
// line with a literal unit, as the benchmarks write them.
var reportedUnit = regexp.MustCompile(`\.ReportMetric\(.*,\s*"([^"]+)"\)`)

// codeSpanText matches a Markdown code span's text; unitChars, a unit in
// testing's form.
var (
	codeSpanText = regexp.MustCompile("`([^`\n]+)`")
	unitChars    = regexp.MustCompile(`^[A-Za-z0-9/-]+$`)
)

// looksLikeMetric reports whether a code span of BENCHMARKS.md names a
// benchmark's metric: a unit in testing's form (no spaces, not a flag or
// a path) that is a rate, a ratio or a speedup.
func looksLikeMetric(s string) bool {
	if strings.ContainsAny(s, " .") || strings.HasPrefix(s, "-") || !unitChars.MatchString(s) {
		return false
	}
	for _, suffix := range []string{"/s", "/cpu-s", "/eval", "-ratio"} {
		if strings.HasSuffix(s, suffix) {
			return true
		}
	}
	return strings.Contains(s, "GFLOP") || strings.Contains(s, "speedup")
}

// TestBenchmarksMetricsPrinted fails when BENCHMARKS.md names a metric
// (in a code span, as `sgemm-ratio`) that no benchmark reports: a figure
// the page says a benchmark prints must be printed by one, not worked out
// by hand from what it prints.
func TestBenchmarksMetricsPrinted(t *testing.T) {
	reported := map[string]bool{"ns/op": true, "B/op": true, "allocs/op": true, "MB/s": true}
	sources(t, func(path string, text []byte) {
		if !strings.HasSuffix(path, "_test.go") {
			return
		}
		for _, m := range reportedUnit.FindAllStringSubmatch(string(text), -1) {
			reported[m[1]] = true
		}
	})
	page, err := os.ReadFile(filepath.Join(root, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for i, line := range strings.Split(string(page), "\n") {
		for _, m := range codeSpanText.FindAllStringSubmatch(line, -1) {
			if !looksLikeMetric(m[1]) {
				continue
			}
			named++
			if !reported[m[1]] {
				t.Errorf("BENCHMARKS.md:%d names the metric %q, which no benchmark reports (b.ReportMetric)", i+1, m[1])
			}
		}
	}
	if named == 0 {
		t.Fatal("BENCHMARKS.md names no metric: the scan found nothing to check")
	}
}

// TestLooksLikeMetric pins which code spans count as metrics.
func TestLooksLikeMetric(t *testing.T) {
	for s, want := range map[string]bool{
		"sgemm-GFLOP/cpu-s":           true,
		"sgemm-ratio":                 true,
		"eval-speedup-vs-gonum":       true,
		"pairs/s":                     true,
		"cpu-s/eval":                  true,
		"crypto/sha256":               false,
		"internal/par":                false,
		"-warm":                       false,
		"bow.parquet":                 false,
		"make bench-sparse":           false,
		"BenchmarkObjectiveFullScale": false,
	} {
		if got := looksLikeMetric(s); got != want {
			t.Errorf("looksLikeMetric(%q) = %v, want %v", s, got, want)
		}
	}
}

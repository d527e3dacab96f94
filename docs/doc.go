// Package docs holds no code. Its tests keep the code's citations of the
// documentation honest: every path under docs/ that a Go or assembly file
// names exists, and every section of BENCHMARKS.md that a Go comment names
// by its title is one of that page's headings; and every benchmark metric
// BENCHMARKS.md names is one a benchmark reports.
package docs

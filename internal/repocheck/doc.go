// Package repocheck holds no code but Anchor: its tests check the
// repository itself, the things no package's tests see: every relative
// link of README.md, BENCHMARKS.md and docs/ resolves (TestDocLinks); the
// large-file lint that `make lint` runs (.ci/large-files) fails where it
// should (TestLargeFilesLint); internal/ holds libraries only, importing
// nothing of the module above it (TestInternalIsLibraries); BENCHMARKS.md
// stays short (TestBenchmarksLength).
package repocheck

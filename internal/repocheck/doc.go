// Package repocheck holds no code: its tests check the repository itself,
// the things no package's tests see: every relative link of README.md and
// docs/ resolves (TestDocLinks), and the large-file lint that `make lint`
// runs (.ci/large-files) fails where it should (TestLargeFilesLint).
package repocheck

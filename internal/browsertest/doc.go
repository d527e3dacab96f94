// Package browsertest renders an HTML report in headless Chromium for
// tests: the check a person makes by opening the page, automated; and
// the screenshot of the demo's report in docs/ (Screenshot).
package browsertest

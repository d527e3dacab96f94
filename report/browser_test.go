package report

import (
	"path/filepath"
	"testing"

	"monomer/internal/browsertest"
)

// TestReportInBrowser opens the test page in headless Chromium (skipped,
// saying so, without /usr/bin/chromium).
func TestReportInBrowser(t *testing.T) {
	dir := writeTestPage(t)
	pngs, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	browsertest.Check(t, dir, len(pngs), 6)
}

package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// ChromiumPath is Debian's chromium, which .ci/run installs.
const ChromiumPath = "/usr/bin/chromium"

// chromium runs headless Chromium for a test, skipping it when Chromium
// is not installed.
func chromium(t testing.TB, args ...string) string {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		t.Skipf("SKIP browser test: %s not found; install Debian's chromium (apt-get install -y chromium) to render the report in a real browser", ChromiumPath)
	}
	out, err := run(t.TempDir(), args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// run runs headless Chromium with a fresh profile in profile and no
// background traffic; the deadline only bounds a hung browser.
func run(profile string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + profile}
	cmd := exec.CommandContext(ctx, ChromiumPath, append(base, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return string(out), nil
}

// Screenshot renders the page at path (an HTML file) in headless Chromium
// into the PNG file out, width × height pixels: what `make docs` makes
// docs/report.png with, as the browser tests see the report.
func Screenshot(path, out string, width, height int) error {
	if _, err := os.Stat(ChromiumPath); err != nil {
		return fmt.Errorf("%s not found: install Debian's chromium (apt-get install -y chromium)", ChromiumPath)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	shot, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	profile, err := os.MkdirTemp("", "browsertest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	_, err = run(profile, fmt.Sprintf("--window-size=%d,%d", width, height), "--screenshot="+shot, "file://"+abs)
	return err
}

// checkScript records, once the page has loaded, every image that failed
// to load, the number of tables and how much text the page shows.
const checkScript = `<script>
window.addEventListener('load', function () {
  var imgs = document.images, broken = [];
  for (var i = 0; i < imgs.length; i++) {
    if (!(imgs[i].complete && imgs[i].naturalWidth > 0)) broken.push(imgs[i].getAttribute('src'));
  }
  var out = document.createElement('pre');
  out.id = 'check';
  out.textContent = JSON.stringify({images: imgs.length, broken: broken,
    tables: document.querySelectorAll('table').length, text: document.body.innerText.length});
  document.body.appendChild(out);
});
</script>`

var checkRE = regexp.MustCompile(`<pre id="check">([^<]*)</pre>`)

// Check loads dir/index.html in headless Chromium and fails t unless every
// image loads, there are at least minImages images and minTables tables and
// some text, and a screenshot is not blank. It skips t, saying why, when
// Chromium is not installed.
func Check(t testing.TB, dir string, minImages, minTables int) {
	t.Helper()
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	// The check runs on a copy with the script, beside the original so
	// relative image paths resolve the same.
	check := filepath.Join(dir, "browser-check.html")
	withScript := strings.Replace(string(page), "</body>", checkScript+"</body>", 1)
	if err := os.WriteFile(check, []byte(withScript), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(check)
	dom := chromium(t, "--virtual-time-budget=10000", "--dump-dom", "file://"+check)
	m := checkRE.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the check script left no result; DOM starts %.300q", dom)
	}
	var res struct {
		Images, Tables, Text int
		Broken               []string
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &res); err != nil {
		t.Fatalf("check result %q: %v", m[1], err)
	}
	if len(res.Broken) > 0 {
		t.Errorf("broken images in the browser: %v", res.Broken)
	}
	if res.Images < minImages || res.Tables < minTables || res.Text < 500 {
		t.Errorf("browser saw %d images (want ≥ %d), %d tables (want ≥ %d), %d characters of text", res.Images, minImages, res.Tables, minTables, res.Text)
	}

	shot := filepath.Join(t.TempDir(), "shot.png")
	chromium(t, "--window-size=1280,2400", "--screenshot="+shot, "file://"+filepath.Join(dir, "index.html"))
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	bd := img.Bounds()
	var ink, total int
	colours := map[color.RGBA]bool{}
	for y := bd.Min.Y; y < bd.Max.Y; y += 2 {
		for x := bd.Min.X; x < bd.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			total++
			if r < 0xe000 || g < 0xe000 || b < 0xe000 {
				ink++
			}
			if len(colours) < 1000 {
				colours[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 255}] = true
			}
		}
	}
	if ink*100 < total*3 || len(colours) < 50 {
		t.Errorf("screenshot looks blank: %d of %d sampled pixels inked, %d colours", ink, total, len(colours))
	}
}

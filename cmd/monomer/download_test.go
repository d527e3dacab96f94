package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestDownloadList: --list for each release, against the publishers'
// layouts: the path below the origin, the file name and the size.
func TestDownloadList(t *testing.T) {
	tests := []struct {
		args   []string
		origin string
		want   []string // "path-below-origin name size"
	}{
		{[]string{"--release", "2014", "--category", "Clothing_Shoes_and_Jewelry"}, "https://snap.stanford.edu/data/amazon/productGraph/", []string{
			"categoryFiles/meta_Clothing_Shoes_and_Jewelry.json.gz meta_Clothing_Shoes_and_Jewelry.json.gz ?",
			"categoryFiles/reviews_Clothing_Shoes_and_Jewelry.json.gz reviews_Clothing_Shoes_and_Jewelry.json.gz ?",
			"image_features/categoryFiles/image_features_Clothing_Shoes_and_Jewelry.b image_features_Clothing_Shoes_and_Jewelry.b ?",
		}},
		{[]string{"--release", "2014", "--category", "Electronics,Baby", "--what", "meta,5core"}, "https://snap.stanford.edu/data/amazon/productGraph/", []string{
			"categoryFiles/meta_Electronics.json.gz meta_Electronics.json.gz ?",
			"categoryFiles/reviews_Electronics_5.json.gz reviews_Electronics_5.json.gz ?",
			"categoryFiles/meta_Baby.json.gz meta_Baby.json.gz ?",
			"categoryFiles/reviews_Baby_5.json.gz reviews_Baby_5.json.gz ?",
		}},
		{[]string{"--release", "2018", "--category", "Magazine_Subscriptions", "--category", "Electronics", "--what", "meta,reviews,5core"}, "https://mcauleylab.ucsd.edu/public_datasets/data/amazon_v2/", []string{
			"metaFiles2/meta_Magazine_Subscriptions.json.gz meta_Magazine_Subscriptions.json.gz 1241608",
			"categoryFiles/Magazine_Subscriptions.json.gz Magazine_Subscriptions.json.gz ?",
			"categoryFilesSmall/Magazine_Subscriptions_5.json.gz Magazine_Subscriptions_5.json.gz 401655",
			"metaFiles2/meta_Electronics.json.gz meta_Electronics.json.gz ?",
			"categoryFiles/Electronics.json.gz Electronics.json.gz ?",
			"categoryFilesSmall/Electronics_5.json.gz Electronics_5.json.gz ?",
		}},
		{[]string{"--release", "2023", "--category", "Electronics"}, "https://mcauleylab.ucsd.edu/public_datasets/data/amazon_2023/", []string{
			"raw/meta_categories/meta_Electronics.jsonl.gz meta_Electronics.jsonl.gz 1312900427",
			"raw/review_categories/Electronics.jsonl.gz Electronics.jsonl.gz 6474438619",
		}},
		{[]string{"--release", "2023", "--category", "Sports_and_Outdoors", "--mirror", "file:///srv/amazon_2023"}, "file:///srv/amazon_2023/", []string{
			"raw/meta_categories/meta_Sports_and_Outdoors.jsonl.gz meta_Sports_and_Outdoors.jsonl.gz 1037418105",
			"raw/review_categories/Sports_and_Outdoors.jsonl.gz Sports_and_Outdoors.jsonl.gz 2634864204",
		}},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		root := newRootCommand()
		root.SetOut(&out)
		if err := execute(context.Background(), root, append([]string{"download", "--list"}, tc.args...)); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		var want []string
		for _, w := range tc.want {
			f := strings.Fields(w)
			want = append(want, tc.origin+f[0]+"\t"+f[1]+"\t"+f[2])
		}
		if got := strings.TrimSuffix(out.String(), "\n"); got != strings.Join(want, "\n") {
			t.Errorf("%v:\n%s\nwant\n%s", tc.args, got, strings.Join(want, "\n"))
		}
	}
}

// mirror is a test server for the download command: files by path,
// Range honoured, with a status or a cut (connection dropped after that
// many bytes) for chosen requests, and a log of the requests' paths and
// Range headers.
type mirror struct {
	files  map[string][]byte
	status map[int]int
	cut    map[int]int
	mu     sync.Mutex
	reqs   []string
}

func (m *mirror) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	i := len(m.reqs)
	m.reqs = append(m.reqs, r.URL.Path+" "+r.Header.Get("Range"))
	m.mu.Unlock()
	if c := m.status[i]; c != 0 {
		w.WriteHeader(c)
		return
	}
	body, ok := m.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	// A validator, without which a .part is not continued.
	w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
	status := http.StatusOK
	if rg := strings.TrimSuffix(strings.TrimPrefix(r.Header.Get("Range"), "bytes="), "-"); rg != "" {
		off, _ := strconv.Atoi(rg)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, len(body)-1, len(body)))
		body, status = body[off:], http.StatusPartialContent
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if n := m.cut[i]; n > 0 {
		w.Write(body[:n])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	w.Write(body)
}

func gzBytes(t *testing.T, lines int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for i := range lines {
		fmt.Fprintf(zw, "{'asin': 'B%09d', 'title': 'item %d'}\n", i, i*i)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func hexSum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// TestDownloadCommand runs the binary against a local mirror: fetches,
// exit codes, JSON log lines, MONOMER.SHA256SUMS, resuming in a second run.
func TestDownloadCommand(t *testing.T) {
	meta, reviews := gzBytes(t, 3000), gzBytes(t, 5000)
	feats := make([]byte, 3*(10+4*4096))
	m := &mirror{files: map[string][]byte{
		"/2014/categoryFiles/meta_Baby.json.gz":                    meta,
		"/2014/categoryFiles/reviews_Baby.json.gz":                 reviews,
		"/2014/image_features/categoryFiles/image_features_Baby.b": feats,
	}}
	ts := httptest.NewServer(m)
	defer ts.Close()
	dir := t.TempDir()
	base := []string{"download", "--release", "2014", "--category", "Baby", "--mirror", ts.URL + "/2014"}
	run := func(extra ...string) result {
		t.Helper()
		m.mu.Lock()
		m.reqs = nil
		m.mu.Unlock()
		return monomer(t, dir, "fake", nil, append(append([]string{}, base...), extra...)...)
	}

	// The reviews connection drops half-way and --retries 0 gives up:
	// exit 5, the meta and image files in place, the reviews' .part kept.
	m.cut = map[int]int{1: len(reviews) / 2}
	r := run("--out", "data", "--retries", "0")
	if r.code != exitInputMissing || !strings.Contains(r.stderr, "reviews_Baby.json.gz") {
		t.Fatalf("dropped connection: exit %d, want 5:\n%s", r.code, r.stderr)
	}
	if n := fileSize(t, filepath.Join(dir, "data", "reviews_Baby.json.gz.part")); n != int64(len(reviews)/2) {
		t.Fatalf(".part has %d bytes, want %d", n, len(reviews)/2)
	}
	// Off a terminal every line is JSON.
	var done int
	lines, _, _ := strings.Cut(r.stderr, "\nmonomer: ")
	for _, l := range logLines(t, lines) {
		if l["msg"] == "done" {
			done++
		}
	}
	if done != 2 {
		t.Errorf("%d done lines, want 2 (meta, image features):\n%s", done, r.stderr)
	}

	// The next run continues the reviews with a Range request and leaves
	// the others alone.
	m.cut = nil
	r = run("--out", "data")
	if r.code != 0 {
		t.Fatalf("second run: exit %d:\n%s", r.code, r.stderr)
	}
	if want := fmt.Sprintf("/2014/categoryFiles/reviews_Baby.json.gz bytes=%d-", len(reviews)/2); len(m.reqs) != 1 || m.reqs[0] != want {
		t.Errorf("requests %q, want [%q]", m.reqs, want)
	}
	for name, b := range map[string][]byte{"meta_Baby.json.gz": meta, "reviews_Baby.json.gz": reviews, "image_features_Baby.b": feats} {
		got, err := os.ReadFile(filepath.Join(dir, "data", name))
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s: %v, %d bytes, want the %d served", name, err, len(got), len(b))
		}
	}
	sums, _ := os.ReadFile(filepath.Join(dir, "data", "MONOMER.SHA256SUMS"))
	want := hexSum(meta) + "  meta_Baby.json.gz\n" + hexSum(feats) + "  image_features_Baby.b\n" + hexSum(reviews) + "  reviews_Baby.json.gz\n"
	if string(sums) != want {
		t.Errorf("MONOMER.SHA256SUMS:\n%s\nwant\n%s", sums, want)
	}

	// A checksum that does not match: exit 3, NAME.bad, nothing at NAME.
	write(t, filepath.Join(dir, "sums"), strings.Repeat("1", 64)+"  meta_Baby.json.gz\n")
	r = run("--out", "other", "--what", "meta", "--checksums", "sums")
	if r.code != exitBadInput || !strings.Contains(r.stderr, "checksum mismatch") {
		t.Errorf("mismatch: exit %d, want 3:\n%s", r.code, r.stderr)
	}
	if fileSize(t, filepath.Join(dir, "other", "meta_Baby.json.gz.bad")) != int64(len(meta)) || fileSize(t, filepath.Join(dir, "other", "meta_Baby.json.gz")) != -1 {
		t.Error("mismatch: want the bytes in .bad and nothing at the name")
	}

	// 404 and 403: exit 3 naming the URL; 503: exit 5.
	for _, tc := range []struct {
		status, code int
	}{{404, exitBadInput}, {403, exitBadInput}, {503, exitInputMissing}} {
		m.status = map[int]int{0: tc.status}
		r = run("--out", "fresh"+strconv.Itoa(tc.status), "--what", "meta", "--retries", "0")
		if url := ts.URL + "/2014/categoryFiles/meta_Baby.json.gz"; r.code != tc.code || !strings.Contains(r.stderr, url) {
			t.Errorf("%d: exit %d, want %d naming %s:\n%s", tc.status, r.code, tc.code, url, r.stderr)
		}
	}
	m.status = nil

	// Usage errors exit 2.
	for _, args := range [][]string{
		{"download", "--category", "Baby", "--out", "x"},
		{"download", "--release", "2014", "--out", "x"},
		{"download", "--release", "2014", "--category", "Babies", "--out", "x"},
		{"download", "--release", "2014", "--category", "Baby"},
		{"download", "--release", "2023", "--category", "Electronics", "--what", "image_features", "--list"},
		{"download", "--release", "2014", "--category", "Baby", "--checksums", "nowhere", "--list"},
	} {
		if r := monomer(t, dir, "fake", nil, args...); r.code != exitUsage {
			t.Errorf("%v: exit %d, want 2:\n%s", args, r.code, r.stderr)
		}
	}
}

// TestDownloadGuards: the 2014 and 2018 metadata files share a name, a
// present file is checked against its sum, and a file another process is
// fetching into the same directory exits 4.
func TestDownloadGuards(t *testing.T) {
	meta14, meta18, reviews := gzBytes(t, 300), gzBytes(t, 400), gzBytes(t, 500)
	m := &mirror{files: map[string][]byte{
		"/2014/categoryFiles/meta_Electronics.json.gz":    meta14,
		"/2014/categoryFiles/reviews_Electronics.json.gz": reviews,
		"/2018/metaFiles2/meta_Electronics.json.gz":       meta18,
	}}
	ts := httptest.NewServer(m)
	defer ts.Close()
	dir := t.TempDir()
	run := func(rel string, extra ...string) result {
		t.Helper()
		m.mu.Lock()
		m.reqs = nil
		m.mu.Unlock()
		args := []string{"download", "--release", rel, "--category", "Electronics", "--mirror", ts.URL + "/" + rel}
		return monomer(t, dir, "fake", nil, append(args, extra...)...)
	}
	if r := run("2014", "--what", "meta", "--out", "data"); r.code != 0 {
		t.Fatalf("2014: exit %d:\n%s", r.code, r.stderr)
	}

	// The 2018 file of the same name: refused, the 2014 file kept.
	r := run("2018", "--what", "meta", "--out", "data")
	if r.code != exitBadInput || !strings.Contains(r.stderr, "release 2014") || !strings.Contains(r.stderr, "another --out") {
		t.Errorf("2018 over 2014: exit %d, want 3 naming release 2014 and another --out:\n%s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "data", "meta_Electronics.json.gz")); !bytes.Equal(got, meta14) {
		t.Error("the 2014 file was replaced")
	}
	if r := run("2018", "--what", "meta", "--out", "data2018"); r.code != 0 {
		t.Errorf("2018 elsewhere: exit %d:\n%s", r.code, r.stderr)
	}

	// A present file whose sum is not the known one: exit 3 naming both.
	write(t, filepath.Join(dir, "sums"), hexSum(meta18)+"  meta_Electronics.json.gz\n")
	r = run("2014", "--what", "meta", "--out", "data", "--checksums", "sums")
	if r.code != exitBadInput || !strings.Contains(r.stderr, hexSum(meta14)) || !strings.Contains(r.stderr, hexSum(meta18)) ||
		!strings.Contains(r.stderr, "check its sha256") {
		t.Errorf("present file, other sum: exit %d, want 3 naming both sums after a log line:\n%s", r.code, r.stderr)
	}
	if len(m.reqs) != 0 {
		t.Errorf("requests %q for a present file", m.reqs)
	}

	// Another process holds the reviews' lock: the meta file (present)
	// passes, the reviews exit 4 naming the file and the holder.
	lk, err := os.OpenFile(filepath.Join(dir, "data", "reviews_Electronics.json.gz.part.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	if err := syscall.Flock(int(lk.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	holder := "pid 4242 started 2026-01-01T00:00:00Z on testhost"
	lk.WriteString(holder + "\n")
	r = run("2014", "--what", "meta,reviews", "--out", "data")
	if r.code != exitLocked || !strings.Contains(r.stderr, "reviews_Electronics.json.gz") || !strings.Contains(r.stderr, holder) {
		t.Errorf("locked: exit %d, want 4 naming the file and %q:\n%s", r.code, holder, r.stderr)
	}
	if len(m.reqs) != 0 {
		t.Errorf("requests %q while another process fetches", m.reqs)
	}
	syscall.Flock(int(lk.Fd()), syscall.LOCK_UN)
	if r := run("2014", "--what", "meta,reviews", "--out", "data"); r.code != 0 {
		t.Errorf("after the lock: exit %d:\n%s", r.code, r.stderr)
	}
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		return -1
	}
	return st.Size()
}

// TestDownloadHint: the command lines a missing-input error suggests.
func TestDownloadHint(t *testing.T) {
	tests := []struct {
		name, job string
		want      []string // with DIR for the data directory
	}{
		{"the paper's Table 2", "../../jobs/paper-table2-image.yaml", []string{
			"monomer download --release 2014 --category Clothing_Shoes_and_Jewelry --what meta,reviews,image_features --out DIR"}},
		{"the paper's Table 4", "../../jobs/paper-table4-bow.yaml", []string{
			"monomer download --release 2014 --category Electronics --category Automotive --category Video_Games --category Movies_and_TV" +
				" --category Office_Products --category Home_and_Kitchen --category Cell_Phones_and_Accessories --what meta,reviews --out DIR"}},
		{"2018 5-core", "../../jobs/realdata-2018-bow.yaml", []string{
			"monomer download --release 2018 --category Magazine_Subscriptions --what meta,5core --out DIR"}},
	}
	for _, tc := range tests {
		dir := filepath.Join(t.TempDir(), "amazon data")
		j, err := loadJob(tc.job, []string{"data_dir=" + dir})
		if err != nil {
			t.Fatal(err)
		}
		got := downloadCommands(j, func(string) bool { return true })
		want := strings.Join(tc.want, "|")
		want = strings.ReplaceAll(want, "DIR", "'"+dir+"'")
		if strings.Join(got, "|") != want {
			t.Errorf("%s:\n%q\nwant\n%q", tc.name, got, want)
		}
	}

	// Only the missing files; a 2023 job; names of no release.
	dir := t.TempDir()
	write(t, filepath.Join(dir, "j.yaml"), `name: j
data_dir: d
data: {meta: meta_Electronics.jsonl.gz, reviews: Electronics.jsonl.gz, format: "2023"}
experiments:
  - {name: a, category: Electronics, graph: co_review, features: bow}
  - {name: b, category: Demo, graph: co_review, features: bow, data: {meta: meta_Demo.json.gz, reviews: reviews_Electronics.json.gz}}
`)
	j, err := loadJob(filepath.Join(dir, "j.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := downloadCommands(j, func(p string) bool { return !strings.HasSuffix(p, "meta_Electronics.jsonl.gz") })
	if want := "monomer download --release 2023 --category Electronics --what reviews --out " + filepath.Join(dir, "d"); strings.Join(got, "|") != want {
		t.Errorf("2023: %q, want %q", got, want)
	}
}

// TestRunSuggestsDownload: exit 5 for a missing file that a release
// names, with the command that fetches it.
func TestRunSuggestsDownload(t *testing.T) {
	dir := jobDir(t)
	r := monomer(t, dir, "fake", nil, "run", "job.yaml", "--set", "data.meta=data/meta_Clothing_Shoes_and_Jewelry.json.gz")
	want := "; to fetch the missing data: monomer download --release 2014 --category Clothing_Shoes_and_Jewelry --what meta --out " + filepath.Join(dir, "data") + "\n"
	if r.code != exitInputMissing || !strings.HasSuffix(r.stderr, want) {
		t.Errorf("exit %d, want 5 and stderr ending %q:\n%s", r.code, want, r.stderr)
	}
	r = monomer(t, dir, "fake", nil, "run", "job.yaml", "--dry-run", "--set", "data.meta=data/meta_Clothing_Shoes_and_Jewelry.json.gz")
	if r.code != exitInputMissing || !strings.HasSuffix(r.stderr, want) {
		t.Errorf("dry run: exit %d, want 5 and stderr ending %q:\n%s", r.code, want, r.stderr)
	}
}
